/**
 * The secret scanner alone, in the bench process (src/telemetry/secret-scan.ts): scan and redact a
 * 10 MiB tools/call result line, the CPU time of each taken after a warm-up. Three lines: blob-text.ts's
 * source code and prose without credentials and with 480, and structured JSON (records with seven
 * keys each, about half a million keys in all: every key is looked at). Then 4 MiB built against the
 * scanner (adversarial-text.ts: each rule's worst case) beside 4 MiB of the same prose, in both
 * modes (what the agent gets, and what a person is shown or the audit keeps).
 */
import { redactSpans, scanSecrets } from "../../src/telemetry/secret-scan.ts";
import { adversarialText } from "./adversarial-text.ts";
import { blobText } from "./blob-text.ts";
import { BIG_RESULT_BYTES, QUICK } from "./plan.ts";
import { ms, percentile, progress, type Row } from "./report.ts";

const RUNS = QUICK ? 20 : 60;
const WARMUP = 5;

export type ScannerShape = "clean" | "found" | "structured" | "plain4" | "adversarial4";
const SHAPES = ["clean", "found", "structured", "plain4", "adversarial4"] as const;
const ADVERSARIAL_BYTES = 4 * 1024 * 1024;
export type ScannerFigures = {
  samples: Record<ScannerShape, number[]>;
  /** The display mode (what a person is shown, the audit): measured for the 4 MiB lines only. */
  displaySamples: Record<ScannerShape, number[]>;
  findings: Record<ScannerShape, number>;
  bytes: Record<ScannerShape, number>;
};

function line(result: unknown): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));
}

/** A result line whose text is `escaped` as it is (already JSON string content). */
function rawTextLine(escaped: string): Buffer {
  return Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${escaped}"}]}}`);
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
    plain4: line({ content: [{ type: "text", text: blobText(ADVERSARIAL_BYTES, false) }] }),
    adversarial4: rawTextLine(adversarialText(ADVERSARIAL_BYTES)),
  };
  progress(`secret scanner in-process: ${WARMUP} + ${RUNS} scans of each 10 MiB line, and of the 4 MiB plain and adversarial ones in both modes`);
  const samples = emptyRecord<number[]>(() => []);
  const displaySamples = emptyRecord<number[]>(() => []);
  const findings = emptyRecord(() => 0);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (const shape of SHAPES) {
      const bytes = lines[shape];
      for (const mode of shape === "plain4" || shape === "adversarial4" ? (["result", "display"] as const) : (["result"] as const)) {
        // CPU time, not wall time: on a shared machine the wall clock also counts other processes' turns.
        const started = process.cpuUsage();
        const spans = scanSecrets(bytes, { mode });
        if (spans.length > 0) redactSpans(bytes, spans);
        const used = process.cpuUsage(started);
        const elapsed = (used.user + used.system) / 1000;
        if (mode === "result") findings[shape] = spans.length;
        if (i >= WARMUP) (mode === "result" ? samples : displaySamples)[shape].push(elapsed);
      }
    }
  }
  const bytes = emptyRecord(() => 0);
  for (const shape of SHAPES) bytes[shape] = lines[shape].length;
  return { samples, displaySamples, findings, bytes };
}

function emptyRecord<T>(make: () => T): Record<ScannerShape, T> {
  return { clean: make(), found: make(), structured: make(), plain4: make(), adversarial4: make() };
}

const LABELS: Record<ScannerShape, string> = {
  clean: "scan a 10 MiB result, source code and prose, no credentials",
  found: "scan and redact a 10 MiB result, 480 credentials",
  structured: "scan a 10 MiB result, structured JSON (~550,000 keys)",
  plain4: "scan a 4 MiB result, source code and prose",
  adversarial4: "scan a 4 MiB result built against the scanner",
};

export function scannerRows(figures: ScannerFigures): Row[] {
  const quantiles = [[0.5, "p50"], [0.99, "p99"]] as const;
  const big = (["clean", "found", "structured"] as const).flatMap((shape) =>
    quantiles.map(([q, label]): Row => ({
      figure: `${LABELS[shape]} ${label}`,
      config: "in-process, CPU time",
      value: ms(percentile(figures.samples[shape], q)),
      baseline: `${(figures.bytes[shape] / 1024 / 1024).toFixed(1)} MiB`,
      delta: `${figures.findings[shape]} found`,
      target: "",
      result: "",
    })),
  );
  // Side by side: the adversarial line against the plain one of the same size, in each mode.
  const sideBySide = (["result", "display"] as const).flatMap((mode) => {
    const of = mode === "result" ? figures.samples : figures.displaySamples;
    return quantiles.flatMap(([q, label]) =>
      (["plain4", "adversarial4"] as const).map((shape): Row => ({
        figure: `${LABELS[shape]} ${label}`,
        config: `in-process, CPU time, ${mode} mode`,
        value: ms(percentile(of[shape], q)),
        baseline: shape === "adversarial4" ? `${ms(percentile(of.plain4, q))} (plain)` : `${(figures.bytes[shape] / 1024 / 1024).toFixed(1)} MiB`,
        delta: shape === "adversarial4" ? `×${(percentile(of.adversarial4, q) / Math.max(percentile(of.plain4, q), 0.001)).toFixed(1)}` : "",
        target: "",
        result: "",
      })),
    );
  });
  return [...big, ...sideBySide];
}
