import { usageError } from "./errors.ts";

const UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** "250ms", "5s", "2m", "1h", or a bare number of milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw usageError(`${flag}: expected a duration like 500ms, 5s or 2m, got ${JSON.stringify(text)}`);
  return Math.round(Number(match[1]) * (UNITS_MS[match[2] ?? "ms"] ?? 1));
}

/** 300000 → "5m", 30000 → "30s", 1500 → "1500ms". */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
