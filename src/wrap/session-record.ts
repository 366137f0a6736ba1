import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, statSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../core/paths.ts";
import { SESSION_GRANT_PREFIX } from "../governance/approval/session-grants.ts";
import { AGENT_SOURCE } from "../governance/verdict/agent-tools.ts";
import { briefArguments } from "../core/brief-arguments.ts";
import { showInvisible } from "../core/visible-text.ts";
import { approvedByPerson, decidedByText, PERSON_CHANNELS, shortCallId, type LogCall } from "../record/log-call.ts";
import { redact, redactText } from "../telemetry/redact.ts";

/**
 * One place for a wrap session's record: every shim of the session appends its events to
 * `<state dir>/sessions/<run id>/events.jsonl`, printed at start; the summary at exit and the
 * demo's live view read it back.
 */
export function createSessionDir(runId: string, env: NodeJS.ProcessEnv = process.env): { dir: string; events: string } {
  const dir = join(stateDir(env), "sessions", runId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { dir, events: join(dir, "events.jsonl") };
}

export type SessionSummary = {
  /** MCP servers governed (each once, however many shims ran it). */
  servers: number;
  /** The agent's own tools were governed (its hook decided at least one call). */
  ownTools: boolean;
  calls: number;
  forwarded: number;
  denied: number;
  /** Approved by a person: on the approvals page, with `thoughtgate approve`, through the agent's own prompt. */
  approved: number;
  /** Let through by a person's "allow for this session" of an earlier call (`approved_by: session_grant:<task>`). */
  sessionGranted: number;
  /** Let through by a rule of the workflow, not a person: `on_timeout: approve`, a default action. */
  approvedUnasked: number;
  autoApproved: number;
  wouldBlock: number;
  framingErrors: number;
  smugglingAttempts: number;
  eventsDropped: number;
  /** Shims that were gone without writing their `run_end` (wrap wrote it for them). */
  shimsKilled: number;
  /** Definitions seen for the first time (pinned now), changed since pinned, flagged, accepted by a person. */
  definitions: { pinned: number; changed: number; flagged: number; accepted: number };
};

export type Event = Record<string, unknown>;


export function readEvents(path: string): Event[] {
  if (!existsSync(path)) return [];
  const events: Event[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line) continue;
    try {
      events.push(JSON.parse(line) as Event);
    } catch {
      // A line cut short by a crash: the rest of the record still counts.
    }
  }
  return events;
}

export function summarize(events: Event[]): SessionSummary {
  const summary: SessionSummary = {
    servers: 0,
    ownTools: false,
    calls: 0,
    forwarded: 0,
    denied: 0,
    approved: 0,
    sessionGranted: 0,
    approvedUnasked: 0,
    autoApproved: 0,
    wouldBlock: 0,
    framingErrors: 0,
    smugglingAttempts: 0,
    eventsDropped: 0,
    shimsKilled: 0,
    definitions: { pinned: 0, changed: 0, flagged: 0, accepted: 0 },
  };
  // Each definition counts once per outcome, however many shims or lists saw it.
  const seen = new Set<string>();
  const once = (event: Event, what: keyof SessionSummary["definitions"]) => {
    const key = `${what}\u0000${String(event.server_id)}\u0000${String(event.kind)}\u0000${String(event.name)}\u0000${String(event.served_digest ?? event.digest)}`;
    if (seen.has(key)) return;
    seen.add(key);
    summary.definitions[what] += 1;
  };
  const servers = new Set<string>();
  for (const event of events) {
    if (event.type === "run_start") {
      if (event.server_id === AGENT_SOURCE) summary.ownTools = true;
      else servers.add(String(event.server_id));
    }
    else if (event.type === "tool_call_start") summary.calls += 1;
    else if (event.type === "definition_pinned") once(event, "pinned");
    else if (event.type === "definition_changed") once(event, "changed");
    else if (event.type === "definition_flagged" && event.action !== "logged") once(event, "flagged");
    else if (event.type === "definition_accepted") once(event, "accepted");
    else if (event.type === "tool_call_decision") {
      if (event.decision === "deny") summary.denied += 1;
      if (event.decision !== "forward") continue;
      summary.forwarded += 1;
      if (typeof event.approved_by === "string") {
        if (PERSON_CHANNELS.has(event.approved_by)) summary.approved += 1;
        else if (event.approved_by.startsWith(SESSION_GRANT_PREFIX)) summary.sessionGranted += 1;
        else summary.approvedUnasked += 1;
      }
      if (event.auto_approved) summary.autoApproved += 1;
      if (event.would === "WOULD_BLOCK") summary.wouldBlock += 1;
    } else if (event.type === "framing_error") {
      summary.framingErrors += 1;
      if (event.error === "SmugglingAttempt") summary.smugglingAttempts += 1;
    } else if (event.type === "run_end") {
      summary.eventsDropped += Number((event.summary as { events_dropped?: number } | undefined)?.events_dropped ?? 0);
      if (event.written_by !== undefined) summary.shimsKilled += 1;
    }
  }
  summary.servers = servers.size;
  return summary;
}

/** How many denied (and approved) calls the summary names before "and N more". */
const LISTED_CALLS = 20;
/** Room for a listed call's arguments and reason. */
const LISTED_ARGUMENTS_CHARS = 60;
const LISTED_REASON_CHARS = 80;

/**
 * The calls a person will want to look at after the session: the denied ones, and the ones a
 * person approved (tool, short redacted arguments, who decided, the reason).
 */
export function renderDecidedCalls(calls: LogCall[], sessionId: string): string {
  const denied = calls.filter((call) => call.outcome === "denied");
  const approved = calls.filter(approvedByPerson);
  const lines: string[] = [];
  const list = (title: string, chosen: LogCall[]) => {
    if (chosen.length === 0) return;
    lines.push(`  ${title}`);
    for (const call of chosen.slice(0, LISTED_CALLS)) lines.push(`    ${describeCall(call)}`);
    if (chosen.length > LISTED_CALLS) lines.push(`    … and ${chosen.length - LISTED_CALLS} more`);
  };
  list("denied:", denied);
  list("approved by a person:", approved);
  lines.push(`  every call: thoughtgate log --session ${sessionId}`);
  return lines.join("\n");
}

function describeCall(call: LogCall): string {
  const args = call.arguments === null ? "(arguments not recorded)" : briefArguments(redact(call.arguments), LISTED_ARGUMENTS_CHARS).text;
  const by = decidedByText(call.decided_by) ?? call.gate ?? "governance";
  const words = call.person_reason ?? call.reason;
  const reason = words ? `: ${shorten(redactText(words).replace(/\s+/g, " "), LISTED_REASON_CHARS)}` : "";
  return showInvisible(`${call.server}.${redactText(call.tool)} ${args} by ${by}${reason}`);
}

function shorten(text: string, room: number): string {
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}

export function renderSummary(summary: SessionSummary, eventsPath: string): string {
  const lines = [
    `thoughtgate: session summary (${summary.servers} MCP server${summary.servers === 1 ? "" : "s"}${summary.ownTools ? " and the agent's own tools" : ""} governed)`,
    `  tool calls   ${summary.calls}`,
    `  forwarded    ${summary.forwarded}${summary.approved ? ` (${summary.approved} approved by a person)` : ""}${summary.sessionGranted ? ` (${summary.sessionGranted} allowed for the session by a person's earlier approval)` : ""}${summary.approvedUnasked ? ` (${summary.approvedUnasked} let through by a workflow rule, no person: on_timeout approve)` : ""}${summary.autoApproved ? ` (${summary.autoApproved} auto-approved: development)` : ""}`,
    `  denied       ${summary.denied}`,
  ];
  if (summary.wouldBlock) lines.push(`  would block  ${summary.wouldBlock} (development profile: forwarded anyway)`);
  const d = summary.definitions;
  if (d.pinned || d.changed || d.flagged || d.accepted) {
    lines.push(`  definitions  ${d.pinned} newly pinned, ${d.changed} changed, ${d.flagged} flagged, ${d.accepted} accepted by a person${d.changed + d.flagged > d.accepted ? " (`thoughtgate pins list` shows what still waits)" : ""}`);
  }
  lines.push(`  framing      ${summary.framingErrors} error${summary.framingErrors === 1 ? "" : "s"}${summary.smugglingAttempts ? `, ${summary.smugglingAttempts} smuggling attempt(s)` : ""}`);
  if (summary.eventsDropped) lines.push(`  (${summary.eventsDropped} audit events were lost: writing the record failed)`);
  if (summary.shimsKilled) lines.push(`  (${summary.shimsKilled} shim(s) were killed by the agent before they could finish; their run_end was written by wrap)`);
  lines.push(`  record       ${eventsPath}`);
  return lines.join("\n");
}

/** One line per governance decision, for showing them as they happen. */
export function describeDecision(event: Event): string | null {
  if (event.type !== "tool_call_decision") return null;
  // The short id `thoughtgate log` shows and `--show` takes: a late line is tied to its call.
  const call = `${String(event.server_id)}.${String(event.tool)}${typeof event.call_id === "string" ? ` ${shortCallId(event.call_id)}` : ""}`;
  const why = String(event.reason ?? "");
  switch (event.decision) {
    case "pending":
      return `[governance] ${call}: waiting for approval`;
    case "deny":
      return `[governance] ${call}: DENIED (${why})`;
    default:
      return `[governance] ${call}: forwarded${event.would ? ` ${String(event.would)}` : ""} (${why})`;
  }
}

/**
 * Follow the events file and call `onEvent` for each new event until `stop()`. Polls: the file is
 * appended by other processes (the shims), and a short poll is simpler and more portable than
 * filesystem notifications for that.
 */
export function followEvents(path: string, onEvent: (event: Event) => void, intervalMs = 100): { stop(): void } {
  let offset = 0;
  let rest = "";
  const read = () => {
    if (!existsSync(path)) return;
    const size = statSync(path).size;
    if (size <= offset) return;
    const fd = openSync(path, "r");
    try {
      const buffer = Buffer.alloc(size - offset);
      readSync(fd, buffer, 0, buffer.length, offset);
      offset = size;
      const text = rest + buffer.toString("utf8");
      const lines = text.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        try {
          if (line) onEvent(JSON.parse(line) as Event);
        } catch {
          // Not an event line: skip it.
        }
      }
    } finally {
      closeSync(fd);
    }
  };
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      read();
    },
  };
}
