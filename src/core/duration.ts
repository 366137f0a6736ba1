import { usageError } from "./errors.ts";

const UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** What every reader of a duration says when it is not one (a flag, a policy file, an environment variable). */
export const DURATION_EXPECTED = "expected a duration like 500ms, 30s, 5m, 1h, 7d or 2w (units ms, s, m, h, d, w)";

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/;

/** The milliseconds `text` names, or null: a number with one of `UNITS_MS`, or a bare number of milliseconds. */
export function durationMs(text: string): number | null {
  const match = DURATION.exec(text.trim());
  return match ? Math.round(Number(match[1]) * (UNITS_MS[match[2] ?? "ms"] ?? 1)) : null;
}

/** "250ms", "5s", "2m", "1h", "7d", "2w", or a bare number of milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const ms = durationMs(text);
  if (ms === null) throw usageError(`${flag}: ${DURATION_EXPECTED}, got ${JSON.stringify(text)}`);
  return ms;
}

/** 300000 → "5m", 30000 → "30s", 1500 → "1500ms", 604800000 → "7d". */
export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
