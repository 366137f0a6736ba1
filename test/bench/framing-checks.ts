/**
 * What the duplicate-key and nesting scan (src/stdio/json-shape.ts) adds to the validation of a
 * line (src/stdio/validate-line.ts): both timed in the bench process on the lines a shim sees most
 * and the largest it accepts, so the cost is priced apart from everything else a shim does.
 */
import { checkJsonShape } from "../../src/stdio/json-shape.ts";
import { validateLine } from "../../src/stdio/validate-line.ts";

export type FramingCheckFigure = { line: string; bytes: number; validateUs: number; scanUs: number };

const encoder = new TextEncoder();

function lines(): Array<[string, string]> {
  const call = JSON.stringify({ jsonrpc: "2.0", id: 42, method: "tools/call", params: { name: "echo", arguments: { message: "hello", options: { n: 3, tags: ["a", "b"] } } } });
  const list = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: {
      tools: Array.from({ length: 40 }, (_, i) => ({
        name: `tool_${i}`,
        description: `Tool number ${i} does something useful with its arguments.`,
        inputSchema: { type: "object", properties: { path: { type: "string" }, depth: { type: "integer" }, flags: { type: "array", items: { type: "string" } } }, required: ["path"] },
        annotations: { readOnlyHint: i % 2 === 0 },
      })),
    },
  });
  const big = JSON.stringify({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "x".repeat(5 * 1024 * 1024) }] } });
  return [
    ["tools/call request", call],
    ["tools/list result, 40 tools", list],
    ["5 MiB tool result", big],
  ];
}

/** Median µs per line of `fn` over `runs`, after `warmup`. */
function medianUs(fn: () => unknown, runs: number, warmup: number): number {
  for (let i = 0; i < warmup; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    times.push((performance.now() - start) * 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

export function measureFramingChecks(quick: boolean): FramingCheckFigure[] {
  return lines().map(([line, text]) => {
    const bytes = encoder.encode(text);
    const large = bytes.length > 1024 * 1024;
    const runs = large ? (quick ? 5 : 21) : quick ? 2_000 : 20_000;
    const warmup = large ? 2 : 2_000;
    const validateUs = medianUs(() => validateLine(bytes), runs, warmup);
    const scanUs = medianUs(() => checkJsonShape(text), runs, warmup);
    return { line, bytes: bytes.length, validateUs, scanUs };
  });
}

export function renderFramingChecks(figures: FramingCheckFigure[]): string[] {
  const out = [
    "| line | bytes | validateLine p50 (all checks) | of which the duplicate-key/nesting scan | share |",
    "|------|-------|-------------------------------|------------------------------------------|-------|",
  ];
  for (const f of figures) {
    out.push(`| ${f.line} | ${f.bytes.toLocaleString("en-US")} | ${f.validateUs.toFixed(2)} µs | ${f.scanUs.toFixed(2)} µs | ${((f.scanUs / f.validateUs) * 100).toFixed(0)} % |`);
  }
  return out;
}
