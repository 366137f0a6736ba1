import { createConsola, type ConsolaInstance } from "consola/basic";

/**
 * The one logger. It writes to stderr only: in `shim`, stdout carries JSON-RPC and nothing else
 * (docs/architecture.md, decision 1). `THOUGHTGATE_LOG_LEVEL` (0 silent … 5 trace) or `--verbose`
 * changes the level.
 */
export const log: ConsolaInstance = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: logLevelFromEnv(),
  formatOptions: { date: false, colors: process.stderr.isTTY === true, compact: true },
});

export type Logger = ConsolaInstance;

/**
 * A logger whose lines start with `[tag]` (a server id, say). Made when needed, after `--verbose`
 * has set the level: a tagged logger copies the level it was made with.
 */
export function taggedLog(tag: string): Logger {
  return log.withTag(tag);
}

function logLevelFromEnv(): number {
  const raw = process.env.THOUGHTGATE_LOG_LEVEL;
  const level = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(level) ? level : 3;
}

export function setVerbose(): void {
  log.level = Math.max(log.level, 4);
}
