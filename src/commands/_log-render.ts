import { basename } from "node:path";
import { briefArguments } from "../core/brief-arguments.ts";
import { showInvisible, showInvisibleInJson } from "../core/visible-text.ts";
import { decidedByText, shortCallId, type LogCall } from "../record/log-call.ts";
import { redact, redactText } from "../telemetry/redact.ts";

/**
 * How `thoughtgate log` shows calls to a person: a table row each, or one call whole (`--show`).
 * Whatever came from an agent or a server goes through the one redactor again on the way out
 * (what an older thoughtgate recorded gets today's redactor) and has its invisible characters
 * shown as escapes (src/core/visible-text.ts).
 */
const HEADER = ["ID", "TIME", "AGENT", "PROJECT", "SERVER", "TOOL", "ARGUMENTS", "OUTCOME", "BY", "REASON", "LATENCY"];
/** Column positions in HEADER, for the columns that give way. */
const [TIME, AGENT, PROJECT, SERVER, TOOL, ARGUMENTS, BY, REASON, LATENCY] = ["TIME", "AGENT", "PROJECT", "SERVER", "TOOL", "ARGUMENTS", "BY", "REASON", "LATENCY"].map((name) => HEADER.indexOf(name)) as [number, number, number, number, number, number, number, number, number];
/** Room for the ARGUMENTS and REASON columns when the terminal has it. */
const ARGUMENTS_CHARS = 48;
const REASON_CHARS = 48;
/** A terminal's width when nothing says it (not a terminal, no $COLUMNS). */
const COLUMNS_WHEN_UNKNOWN = 80;
const GAP = 2;
/**
 * Which columns give way when a row would be wider than the terminal, in order, each down to the
 * width given (0: the column is left out). The id and the outcome never do: what became of a call
 * is never cut.
 */
const GIVES_WAY: ReadonlyArray<[number, number]> = [
  [ARGUMENTS, 24],
  [REASON, 24],
  [PROJECT, 10],
  [AGENT, 8],
  [ARGUMENTS, 12],
  [REASON, 12],
  [PROJECT, 0],
  [AGENT, 0],
  [TOOL, 14],
  [ARGUMENTS, 0],
  [REASON, 0],
  [SERVER, 8],
  [BY, 12],
  [TOOL, 8],
  // A very narrow terminal: what is left is which call and what became of it.
  [BY, 0],
  [LATENCY, 0],
  [TIME, 0],
  [TOOL, 4],
  [SERVER, 0],
];
/** Column widths while following (rows come one at a time), before they are fitted; the outcome's holds its longest word (input_required). */
const FOLLOW_WIDTHS = [8, 14, 8, 14, 10, 16, ARGUMENTS_CHARS, 14, 16, REASON_CHARS, 8];

/** The terminal's width: the terminal's own, else $COLUMNS, else 80. */
function terminalColumns(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stdout.isTTY && stdout.columns !== undefined && stdout.columns > 0) return stdout.columns;
  const given = Number(env.COLUMNS);
  return Number.isInteger(given) && given > 0 ? given : COLUMNS_WHEN_UNKNOWN;
}

export function renderTable(calls: LogCall[], total: number, columns = terminalColumns()): string {
  if (calls.length === 0) return "no calls match\n";
  const rows = calls.map(cells);
  const widths = fit(HEADER.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length))), columns);
  const more = total > calls.length ? `(the newest ${calls.length} of ${total}: --limit N for more, --json for scripts)\n` : "";
  return `${[HEADER, ...rows].map((row) => line(row, widths)).join("\n")}\n${more}`;
}

export function renderFollowHeader(columns = terminalColumns()): string {
  return `${line(HEADER, fit(FOLLOW_WIDTHS, columns))}\n`;
}

export function renderFollowRow(call: LogCall, columns = terminalColumns()): string {
  return `${line(cells(call), fit(FOLLOW_WIDTHS, columns))}\n`;
}

/** Widths that fit `columns`: the columns of GIVES_WAY narrowed, then left out, in its order, until the row fits. */
function fit(natural: number[], columns: number): number[] {
  const widths = [...natural];
  const total = () => widths.filter((w) => w > 0).reduce((sum, w) => sum + w + GAP, -GAP);
  for (const [column, floor] of GIVES_WAY) {
    const excess = total() - columns;
    if (excess <= 0) break;
    const width = widths[column] ?? 0;
    if (width <= floor) continue;
    // Narrower than its header a column says nothing: it is left out instead.
    const narrowed = Math.max(floor, width - excess);
    widths[column] = narrowed > 0 && narrowed < Math.min(HEADER[column]?.length ?? 0, 4) ? 0 : narrowed;
  }
  return widths;
}

/** One call whole (`--show`). */
export function renderCall(call: LogCall): string {
  const rows: Array<[string, string]> = [
    ["call", call.call_id],
    ["short id", shortCallId(call.call_id)],
    ["time", `${localTime(call.time)}${call.ended ? `, ended ${localTime(call.ended)}` : ", not ended"}${call.latency_ms === null ? "" : ` (${latency(call.latency_ms)})`}`],
    ["session", call.session ?? `none (a standalone run, ${call.run_id})`],
    ["agent", call.agent_command ? shown(call.agent_command.map((word) => String(redact(word))).join(" ")) : "unknown"],
    ["project", call.project ? shown(call.project) : "unknown"],
    ["server", shown(call.server)],
    [call.method === "tools/call" ? "tool" : call.method, shown(redactText(call.tool))],
    ["arguments", call.arguments === null ? "not recorded (audit.arguments: hash)" : showInvisibleInJson(JSON.stringify(redact(call.arguments), null, 2))],
    ["args hash", call.args_hash ?? "-"],
    ["outcome", `${call.outcome}${call.status ? ` (status ${call.status})` : ""}`],
    ["decided by", who(call) ?? "-"],
    ["reason", call.reason ? shown(redactText(call.reason)) : "-"],
  ];
  if (call.person_reason) rows.push(["their words", shown(redactText(call.person_reason))]);
  rows.push(["gate", [call.gate ?? "none", call.rule_id ? `rule ${call.rule_id}` : null, call.policy_id ? `policy ${call.policy_id}` : null].filter(Boolean).map((t) => shown(String(t))).join(", ")]);
  const secrets = call.secrets_found && Object.keys(call.secrets_found).length > 0 ? Object.entries(call.secrets_found).map(([kind, n]) => `${kind} ×${n}`).join(", ") : "none";
  rows.push(["result", `${call.bytes_out === null ? "-" : `${call.bytes_out} bytes`}; secrets found: ${shown(secrets)}`]);
  const trail = call.trail.map((step) => `${localTime(step.time)}  ${step.decision}${step.gate ? ` (${step.gate}${step.rule_id ? ` ${step.rule_id}` : ""})` : ""}${step.reason ? `: ${shown(redactText(step.reason))}` : ""}`);
  rows.push(["trail", trail.length > 0 ? trail.join("\n") : "-"]);
  const width = Math.max(...rows.map(([label]) => label.length));
  return `${rows.map(([label, value]) => `${label.padEnd(width)}  ${value.replaceAll("\n", `\n${" ".repeat(width + 2)}`)}`).join("\n")}\n`;
}

/** `--json`: the call as the index holds it, redacted again, invisible characters as JSON escapes (the same values). */
export function renderJson(call: LogCall): string {
  const safe = { ...call, tool: redactText(call.tool), arguments: call.arguments === null ? null : redact(call.arguments), reason: call.reason === null ? null : redactText(call.reason) };
  return `${showInvisibleInJson(JSON.stringify(safe))}\n`;
}

function cells(call: LogCall): string[] {
  const args = call.arguments === null ? "(hash only)" : briefArguments(redact(call.arguments), ARGUMENTS_CHARS).text;
  const reason = call.person_reason ?? call.reason ?? "";
  return [
    shortCallId(call.call_id),
    shortTime(call.time),
    shown(call.agent ?? "-"),
    shown(call.project ? basename(call.project) : "-"),
    shown(call.server),
    shown(redactText(call.tool)),
    args,
    call.outcome,
    shown(who(call) ?? call.gate ?? "-"),
    shown(cut(redactText(reason), REASON_CHARS)),
    call.latency_ms === null ? "-" : latency(call.latency_ms),
  ];
}

/** A row's cells at their widths; a column of width 0 is left out, a wider cell cut with "…". */
function line(cells: string[], widths: number[]): string {
  const kept = cells.map((cell, i) => [cell, widths[i] ?? 0] as const).filter(([, width]) => width > 0);
  return kept
    .map(([cell, width]) => (cell.length > width ? `${cell.slice(0, width - 1)}…` : cell.padEnd(width)))
    .join(" ".repeat(GAP))
    .trimEnd();
}

function who(call: LogCall): string | null {
  return decidedByText(call.decided_by);
}

function shown(text: string): string {
  return showInvisible(text);
}

function cut(text: string, room: number): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= room ? flat : `${flat.slice(0, room - 1)}…`;
}

function latency(ms: number): string {
  return ms >= 1_000 ? `${(ms / 1_000).toFixed(1)}s` : `${ms < 10 ? ms.toFixed(1) : Math.round(ms)}ms`;
}

/** Local time without the year, for the table: `11-28 14:53:08`. */
function shortTime(iso: string): string {
  const full = localTime(iso);
  return /^\d{4}-/.test(full) ? full.slice(5) : full;
}

/** Local time, to the second: `2026-11-28 14:53:08`. */
function localTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
