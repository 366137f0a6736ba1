/**
 * The secret scanner alone, in the bench process (src/telemetry/secret-scan.ts): scan and redact a
 * 10 MiB tools/call result line, the CPU time of each taken after a warm-up. Three lines: blob-text.ts's
 * source code and prose without credentials and with 480, and structured JSON (records with seven
 * keys each, about half a million keys in all: every key is looked at).
 */
import { redactSpans, scanSecrets } from "../../src/telemetry/secret-scan.ts";
import { blobText } from "./blob-text.ts";
import { BIG_RESULT_BYTES, QUICK } from "./plan.ts";
import { ms, percentile, progress, type Row } from "./report.ts";

const RUNS = QUICK ? 20 : 60;
const WARMUP = 5;

export type ScannerShape = "clean" | "found" | "structured";
export type ScannerFigures = { samples: Record<ScannerShape, number[]>; findings: Record<ScannerShape, number>; bytes: Record<ScannerShape, number> };

function line(result: unknown): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));
}

function structured(bytes: number): Buffer {
  const rows: unknown[] = [];
  let size = 0;
  for (let n = 0; size < bytes - 1024; n++) {
    const row = { id: n, name: `user${n}`, email: `u${n}@example.com`, active: n % 2 === 0, tags: ["a", "b"], session_id: `s${n}`, input_tokens: n % 977 };
    size += JSON.stringify(row).length + 1;
    rows.push(row);
  }
  return line({ content: [], structuredContent: { rows } });
}

export function measureScanner(): ScannerFigures {
  const text = BIG_RESULT_BYTES - 128;
  const lines: Record<ScannerShape, Buffer> = {
    clean: line({ content: [{ type: "text", text: blobText(text, false) }] }),
    found: line({ content: [{ type: "text", text: blobText(text, true) }] }),
    structured: structured(text),
  };
  progress(`secret scanner in-process: ${WARMUP} + ${RUNS} scans of each 10 MiB line`);
  const samples: Record<ScannerShape, number[]> = { clean: [], found: [], structured: [] };
  const findings: Record<ScannerShape, number> = { clean: 0, found: 0, structured: 0 };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const shape of ["clean", "found", "structured"] as const) {
      const bytes = lines[shape];
      // CPU time, not wall time: on a shared machine the wall clock also counts other processes' turns.
      const started = process.cpuUsage();
      const spans = scanSecrets(bytes, { mode: "result" });
      if (spans.length > 0) redactSpans(bytes, spans);
      const used = process.cpuUsage(started);
      const elapsed = (used.user + used.system) / 1000;
      findings[shape] = spans.length;
      if (i >= WARMUP) samples[shape].push(elapsed);
    }
  }
  return { samples, findings, bytes: { clean: lines.clean.length, found: lines.found.length, structured: lines.structured.length } };
}

const LABELS: Record<ScannerShape, string> = {
  clean: "scan a 10 MiB result, source code and prose, no credentials",
  found: "scan and redact a 10 MiB result, 480 credentials",
  structured: "scan a 10 MiB result, structured JSON (~550,000 keys)",
};

export function scannerRows(figures: ScannerFigures): Row[] {
  return (["clean", "found", "structured"] as const).flatMap((shape) =>
    ([[0.5, "p50"], [0.99, "p99"]] as const).map(([q, label]): Row => ({
      figure: `${LABELS[shape]} ${label}`,
      config: "in-process, CPU time",
      value: ms(percentile(figures.samples[shape], q)),
      baseline: `${(figures.bytes[shape] / 1024 / 1024).toFixed(1)} MiB`,
      delta: `${figures.findings[shape]} found`,
      target: "",
      result: "",
    })),
  );
}
