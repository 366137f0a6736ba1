import { durationMs } from "../core/duration.ts";
import { usageError } from "../core/errors.ts";
import type { DecisionFilter } from "./log-call.ts";

/** What `thoughtgate log` asks of the record; every field narrows (absent: anything). */
export type LogFilter = {
  /** ms since the epoch: calls read at or after / at or before. */
  since?: number;
  until?: number;
  server?: string;
  /** A glob (`*`, `?`, `[…]`) over the tool (or prompt, resource) name. */
  tool?: string;
  /** Any of these. */
  decisions?: DecisionFilter[];
  /** The agent's program name (`claude`), a glob. */
  agent?: string;
  /** An absolute project directory, or a project's folder name. */
  project?: string;
  /** A session id, or its first characters. */
  session?: string;
};


/**
 * `--since`/`--until`/`--older-than`: a duration back from now (`90s`, `15m`, `2h`, `7d`, `4w`; the units of core/duration.ts), a
 * date (`2026-11-01`, local midnight) or a date and time (`2026-11-01T14:30`, local; with `Z` or an
 * offset, as written). Anything else is a usage error naming the flag.
 */
export function parsePointInTime(text: string, flag: string, now = Date.now()): number {
  const value = text.trim();
  // A bare number is not a point in time: "--since 30" is more likely a day of the month than 30 ms.
  const duration = /[a-z]$/.test(value) ? durationMs(value) : null;
  if (duration !== null) return now - duration;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    const date = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    if (date.getDate() === Number(day[3])) return date.getTime();
  } else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(value)) {
    const parsed = Date.parse(value.replace(" ", "T"));
    if (!Number.isNaN(parsed)) return parsed;
  }
  throw usageError(`${flag}: expected a duration like 2h or 7d (units ms, s, m, h, d, w), or a date like 2026-11-01 or 2026-11-01T14:30, got ${JSON.stringify(text)}`);
}

/**
 * Where a filter finds what it asks about: the index keeps a call's session, agent and project
 * with its file and run (record-index.ts); a follower's table in memory keeps them with the call.
 */
export type FilterColumns = { session: (test: string) => string; agent: (test: string) => string; project: (test: string) => string };

const FLAT_COLUMNS: FilterColumns = { session: (test) => test.replaceAll("$", "session"), agent: (test) => test.replaceAll("$", "agent"), project: (test) => test.replaceAll("$", "project") };

/** The SQL condition and its values for a filter, over a `calls` table with `columns` for where a call ran. */
export function whereOf(filter: LogFilter, columns: FilterColumns = FLAT_COLUMNS): { sql: string; values: Array<string | number> } {
  const clauses: string[] = [];
  const values: Array<string | number> = [];
  if (filter.since !== undefined) {
    clauses.push("ts >= ?");
    values.push(filter.since);
  }
  if (filter.until !== undefined) {
    clauses.push("ts <= ?");
    values.push(filter.until);
  }
  if (filter.server !== undefined) {
    clauses.push("server = ?");
    values.push(filter.server);
  }
  if (filter.tool !== undefined) {
    clauses.push("tool GLOB ?");
    values.push(filter.tool);
  }
  if (filter.agent !== undefined) {
    clauses.push(columns.agent("$ GLOB ?"));
    values.push(filter.agent);
  }
  if (filter.project !== undefined) {
    if (filter.project.includes("/")) {
      clauses.push(columns.project("$ = ?"));
      values.push(filter.project.replace(/(.)\/+$/, "$1"));
    } else {
      // A folder name: the project's last path component.
      clauses.push(columns.project("($ = ? OR substr($, -length(?) - 1) = '/' || ?)"));
      values.push(filter.project, filter.project, filter.project);
    }
  }
  if (filter.session !== undefined) {
    clauses.push(columns.session("substr($, 1, length(?)) = ?"));
    values.push(filter.session, filter.session);
  }
  if (filter.decisions && filter.decisions.length > 0) {
    clauses.push(`(${filter.decisions.map((d) => DECISION_SQL[d]).join(" OR ")})`);
  }
  return { sql: clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "", values };
}

/** Each `--decision`, as a condition on the index's columns. */
const DECISION_SQL: Record<DecisionFilter, string> = {
  forwarded: "decision = 'forward'",
  denied: "decision = 'deny'",
  asked: "asked = 1",
  approved: "person = 1",
  errored: "status IN ('error', 'server_unavailable', 'no_response')",
};
