import { basename } from "node:path";
import { briefArguments } from "../core/brief-arguments.ts";
import { showInvisible, showInvisibleInJson } from "../core/visible-text.ts";
import type { LogCall } from "../record/log-call.ts";
import { redact, redactText } from "../telemetry/redact.ts";

/**
 * How `thoughtgate log` shows calls to a person: a table row each, or one call whole (`--show`).
 * Whatever came from an agent or a server goes through the one redactor again on the way out
 * (what an older thoughtgate recorded gets today's redactor) and has its invisible characters
 * shown as escapes (src/core/visible-text.ts).
 */
const HEADER = ["TIME", "AGENT", "PROJECT", "SERVER", "TOOL", "ARGUMENTS", "OUTCOME", "BY", "REASON", "LATENCY"];
/** Room for the ARGUMENTS and REASON columns. */
const ARGUMENTS_CHARS = 48;
const REASON_CHARS = 48;
/** Column widths while following (rows come one at a time). */
const FOLLOW_WIDTHS = [19, 8, 14, 10, 16, ARGUMENTS_CHARS, 9, 12, REASON_CHARS, 8];

export function renderTable(calls: LogCall[], total: number): string {
  if (calls.length === 0) return "no calls match\n";
  const rows = calls.map(cells);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const more = total > calls.length ? `(the newest ${calls.length} of ${total}: --limit N for more, --json for scripts)\n` : "";
  return `${[HEADER, ...rows].map((row) => line(row, widths)).join("\n")}\n${more}`;
}

export function renderFollowHeader(): string {
  return `${line(HEADER, FOLLOW_WIDTHS)}\n`;
}

export function renderFollowRow(call: LogCall): string {
  return `${line(cells(call), FOLLOW_WIDTHS)}\n`;
}

/** One call whole (`--show`). */
export function renderCall(call: LogCall): string {
  const rows: Array<[string, string]> = [
    ["call", call.call_id],
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
    localTime(call.time),
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

function line(cells: string[], widths: number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.length > (widths[i] ?? 0) ? `${cell.slice(0, (widths[i] ?? 1) - 1)}…` : cell.padEnd(widths[i] ?? 0)))
    .join("  ")
    .trimEnd();
}

function who(call: LogCall): string | null {
  if (!call.decided_by) return null;
  return call.decided_by.who ? `${call.decided_by.channel} ${call.decided_by.who}` : call.decided_by.channel;
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

/** Local time, to the second: `2026-11-28 14:53:08`. */
function localTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
