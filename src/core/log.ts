import { createConsola, type ConsolaInstance, type ConsolaReporter } from "consola/core";

/**
 * consola's basic format, `[type] [tag] message`, written with `console.error`: Bun's console writes
 * to fd 2 at once and in order with everything else on stderr, and costs nothing to set up. Not
 * `process.stderr`: that Node stream takes ~8 ms and ~5 MB to create, and `consola/basic` creates it
 * and `process.stdout` as soon as it is imported (docs/benchmarks.md, "Where the memory goes").
 */
const stderrReporter: ConsolaReporter = {
  log(logObj) {
    const parts = [logObj.type && `[${logObj.type}]`, logObj.tag && `[${logObj.tag}]`, logObj.args.map(text).join(" ")];
    sink(parts.filter(Boolean).join(" "), logObj.level);
  },
};

/** Where a finished log line goes, with its consola level (0 error, 1 warn, 3 info, 4 debug). */
export type LogSink = (line: string, level: number) => void;

const toStderr: LogSink = (line) => console.error(line);
let sink: LogSink = toStderr;

/**
 * Send log lines somewhere else than stderr, or (null) back to it. `wrap` does this while an agent
 * owns the terminal: nothing may be written over its screen (docs/architecture.md, decision 9), so
 * the lines go to the session's log file.
 */
export function logTo(next: LogSink | null): void {
  sink = next ?? toStderr;
}

function text(arg: unknown): string {
  if (typeof arg === "string") return arg;
  if (arg instanceof Error) return arg.stack ?? arg.message;
  return Bun.inspect(arg);
}

/**
 * The one logger. It writes to stderr only: in `shim`, stdout carries JSON-RPC and nothing else
 * (docs/architecture.md, decision 1). `THOUGHTGATE_LOG_LEVEL` (0 silent … 5 trace) or `--verbose`
 * changes the level.
 */
export const log: ConsolaInstance = createConsola({
  level: logLevelFromEnv(),
  reporters: [stderrReporter],
  formatOptions: { date: false, colors: false, compact: true },
});

type LogMethod = (...args: unknown[]) => void;

/** What the parts log with: the root logger, or a tagged one. */
export type Logger = { error: LogMethod; warn: LogMethod; info: LogMethod; debug: LogMethod };

/**
 * A logger whose lines start with `[tag]` (a server id, say): the root logger with the tag in each
 * record, so it follows the root's level. Not consola's `withTag`, which builds a whole instance
 * (a deep merge of every option and two functions per log type): a shim makes several at start,
 * and that work alone was hot enough to bring in the JIT compilers before the first message.
 */
export function taggedLog(tag: string): Logger {
  const at =
    (write: (record: { tag: string; args: unknown[] }) => void) =>
    (...args: unknown[]) =>
      write({ tag, args });
  return { error: at(log.error), warn: at(log.warn), info: at(log.info), debug: at(log.debug) };
}

function logLevelFromEnv(): number {
  const raw = process.env.THOUGHTGATE_LOG_LEVEL;
  const level = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(level) ? level : 3;
}

export function setVerbose(): void {
  log.level = Math.max(log.level, 4);
}
