import * as v from "valibot";

/**
 * One governed call as `thoughtgate log` shows it, assembled from its events in the record
 * (docs/events.md): where it ran (session, agent, project, server), what it asked (tool, arguments
 * as recorded: redacted), what was decided and by whom, and how it ended. `log --json` writes one
 * per line and `log --show` one whole; the index (record-index.ts) keeps one per call. A call of a
 * governed method other than tools/call (`method_decision`) has no `call_id` in the record: its id
 * here is made from its place in the file.
 */
/** `scope`: how far a yes reached (once, session, always); absent on a no and in older records. */
const decidedBy = v.object({ channel: v.string(), who: v.optional(v.string()), scope: v.optional(v.string()) });

export const LogCallSchema = v.object({
  call_id: v.string(),
  /** When the call was read (RFC 3339); when it ended, or null while it has not. */
  time: v.string(),
  ended: v.nullable(v.string()),
  /** The wrap session's id, or null for a shim (or arbiter) that governed on its own. */
  session: v.nullable(v.string()),
  run_id: v.string(),
  server: v.string(),
  method: v.string(),
  tool: v.string(),
  /** The agent's program name (the first word of its command line), and the command line itself, redacted. */
  agent: v.nullable(v.string()),
  agent_command: v.nullable(v.array(v.string())),
  project: v.nullable(v.string()),
  /** The arguments as recorded (redacted), or null where the record keeps their hash only. */
  arguments: v.unknown(),
  args_hash: v.nullable(v.string()),
  /** forward, deny, pending (a person is being asked), or null when no decision was recorded. */
  decision: v.nullable(v.picklist(["forward", "deny", "pending"])),
  /** What became of it: forwarded, approved (by a person), denied, errored, cancelled, input_required, pending. */
  outcome: v.string(),
  /** A person was asked. */
  asked: v.boolean(),
  /** The tool_call_end status, or null before the end. */
  status: v.nullable(v.string()),
  gate: v.nullable(v.string()),
  rule_id: v.nullable(v.string()),
  policy_id: v.nullable(v.string()),
  reason: v.nullable(v.string()),
  /** Who decided: the channel (elicitation, web, cli, desktop, slack, timeout, session_grant, always_rule, …) and the person where known. */
  decided_by: v.nullable(decidedBy),
  /** The person's own words, as recorded (redacted). */
  person_reason: v.nullable(v.string()),
  latency_ms: v.nullable(v.number()),
  /** The size of the answer the agent got, bytes. */
  bytes_out: v.nullable(v.number()),
  /** Credentials the scanner found in the result, by kind (never the values). */
  secrets_found: v.nullable(v.record(v.string(), v.number())),
  /** The decisions in the order they were recorded: pending first when a person was asked. */
  trail: v.array(v.object({ time: v.string(), decision: v.string(), gate: v.nullable(v.string()), rule_id: v.nullable(v.string()), reason: v.nullable(v.string()) })),
});
export type LogCall = v.InferOutput<typeof LogCallSchema>;

/**
 * The id `thoughtgate log` shows for a call, which `--show` takes: the end of its id. A call id is
 * a UUIDv7, whose start is its time (calls of the same minute share it) and whose end is random.
 */
const SHORT_ID_CHARS = 8;
export function shortCallId(callId: string): string {
  return callId.slice(-SHORT_ID_CHARS);
}

/** How a call was decided by whom, and how far a yes reached: `web ada (session)`, `always_rule (always)`. */
export function decidedByText(by: LogCall["decided_by"]): string | null {
  if (!by) return null;
  return `${by.channel}${by.who ? ` ${by.who}` : ""}${by.scope ? ` (${by.scope})` : ""}`;
}

export const DECISION_FILTERS = ["forwarded", "denied", "asked", "approved", "errored"] as const;
export type DecisionFilter = (typeof DECISION_FILTERS)[number];

/** The channels through which a person decides a call (docs/events.md); anything else that decided was a rule. */
export const PERSON_CHANNELS: ReadonlySet<string> = new Set(["web", "cli", "elicitation", "desktop", "slack", "terminal"]);

/** End statuses that mean the call failed after it was let through. */
const ERROR_STATUSES: ReadonlySet<string> = new Set(["error", "server_unavailable", "no_response"]);

/** What became of a call, in one word. */
export function outcomeOf(call: Pick<LogCall, "decision" | "status" | "decided_by">): string {
  if (call.decision === "deny" || call.status === "denied") return "denied";
  if (call.status !== null && ERROR_STATUSES.has(call.status)) return "errored";
  if (call.status === "cancelled" || call.status === "input_required") return call.status;
  if (call.decision === "forward") return approvedByPerson(call) ? "approved" : "forwarded";
  return call.status === "ok" ? "forwarded" : "pending";
}

/** A person let it through (on the page, with `thoughtgate approve`, in the agent's form, …), whatever happened after. */
export function approvedByPerson(call: Pick<LogCall, "decision" | "decided_by">): boolean {
  return call.decision === "forward" && call.decided_by !== null && PERSON_CHANNELS.has(call.decided_by.channel);
}
