import { createConsola, type ConsolaInstance } from "consola/basic";

/**
 * The one logger. It writes to stderr only: in `shim`, stdout carries JSON-RPC and nothing else
 * (DESIGN decision 1). `THOUGHTGATE_LOG_LEVEL` (0 silent … 5 trace) or `--verbose` changes the level.
 */
export const log: ConsolaInstance = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: logLevelFromEnv(),
  formatOptions: { date: false, colors: process.stderr.isTTY === true, compact: true },
});

function logLevelFromEnv(): number {
  const raw = process.env.THOUGHTGATE_LOG_LEVEL;
  const level = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(level) ? level : 3;
}

export function setVerbose(): void {
  log.level = Math.max(log.level, 4);
}
