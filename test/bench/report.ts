/**
 * How the bench summarises samples and prints them: percentiles, per-process memory from /proc,
 * and a table that reads in a terminal and pastes into Markdown unchanged. Progress goes to
 * stderr, so stdout holds only the report.
 */
import { readFileSync } from "node:fs";

export function progress(message: string): void {
  console.error(`bench: ${message}`);
}

/** Nearest-rank percentile (`q` in 0..1) of unsorted samples. */
export function percentile(samples: number[], q: number): number {
  if (samples.length === 0) throw new Error("no samples");
  const sorted = samples.toSorted((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(samples: number[]): number {
  return percentile(samples, 0.5);
}

export type Memory = { pssKb: number; rssKb: number };

/** PSS counts a shared page 1/n to each of the n processes mapping it: the fair share of each. */
export function memoryOf(pid: number): Memory {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup);
    if (!match) throw new Error(`no ${name} in /proc/${pid}/smaps_rollup`);
    return Number(match[1]);
  };
  return { pssKb: field("Pss"), rssKb: field("Rss") };
}

/** A process's resident set (`VmRSS:` in /proc/<pid>/status), in kB. */
export function residentKb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

/**
 * CPU time a process has used so far (user + system, `/proc/<pid>/stat` fields 14 and 15), in ms.
 * Unlike wall time it hardly moves when other processes compete for the cores. Clock ticks are
 * 100 per second on Linux: read it around many calls, not one.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export type Row = {
  figure: string;
  config: string;
  value: string;
  baseline: string;
  delta: string;
  target: string;
  result: string;
};

const COLUMNS: Array<[keyof Row, string]> = [
  ["figure", "figure"],
  ["config", "config"],
  ["value", "value"],
  ["baseline", "baseline"],
  ["delta", "added / ratio"],
  ["target", "target"],
  ["result", "result"],
];

/** A Markdown table with padded columns. */
export function renderTable(rows: Row[], columns = COLUMNS): string {
  const widths = columns.map(([key, title]) => Math.max(title.length, ...rows.map((row) => row[key].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [
    line(columns.map(([, title]) => title)),
    `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`,
    ...rows.map((row) => line(columns.map(([key]) => row[key]))),
  ].join("\n");
}

export function ms(value: number): string {
  return `${value.toFixed(3)} ms`;
}

export function signedMs(value: number): string {
  return `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(3)} ms`;
}

export function mb(kb: number): string {
  return `${(kb / 1024).toFixed(1)} MB`;
}

export function perSecond(value: number): string {
  return `${Math.round(value).toLocaleString("en-US")}/s`;
}

export function verdict(pass: boolean): string {
  return pass ? "PASS" : "MISS";
}
