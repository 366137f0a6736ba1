import * as v from "valibot";

/**
 * The codecli control protocol (docs/codecli-protocol.md), version 1: the events a codecli child prints
 * (`tool.request`, `tool.result`, `tool.progress`…, one JSON object per line on stdout or stderr,
 * optionally after a prefix) and the commands the arbiter writes to its stdin (`policy.decision`,
 * `policy.ping`, `policy.abort`). One schema per message; the types are inferred from them.
 */
export const PROTOCOL_VERSION = 1;
export const CAPABILITIES = ["policy.decision.v1", "policy.ping.v1", "policy.abort.v1"] as const;

const eventId = v.union([v.pipe(v.string(), v.minLength(1)), v.pipe(v.number(), v.integer())], "expected a non-empty string or an integer");
export type EventId = v.InferOutput<typeof eventId>;

/** docs/codecli-protocol.md §3.1 / §4.1. Extra keys are allowed: the protocol may grow without breaking us. */
const toolRequestSchema = v.object({
  v: v.literal(PROTOCOL_VERSION),
  type: v.literal("tool.request"),
  ts: v.optional(v.string()),
  id: eventId,
  run_id: v.optional(v.string()),
  tool: v.pipe(v.string("expected the tool name (a string)"), v.minLength(1, "the tool name must not be empty")),
  action: v.optional(v.string()),
  args: v.optional(v.record(v.string(), v.unknown(), "expected args to be an object"), {}),
  /** true: codecli waits for our `policy.decision` before it runs the tool (§4.1). */
  requires_policy: v.optional(v.boolean("expected true or false"), false),
  /** The server the tool belongs to, when codecli proxies MCP servers; the rules' `source`. */
  server: v.optional(v.pipe(v.string(), v.minLength(1))),
});
export type ToolRequest = v.InferOutput<typeof toolRequestSchema>;

/** `tool.result` completes a call (docs/codecli-protocol.md §6.1); other `tool.*` events only need an id to be tracked. */
const toolResultSchema = v.object({
  v: v.literal(PROTOCOL_VERSION),
  type: v.literal("tool.result"),
  id: eventId,
  ok: v.optional(v.boolean("expected true or false")),
  error: v.optional(v.unknown()),
});
export type ToolResult = v.InferOutput<typeof toolResultSchema>;

const otherEventSchema = v.object({
  v: v.literal(PROTOCOL_VERSION),
  type: v.pipe(v.string(), v.minLength(1)),
  id: v.optional(eventId),
});

export type ToolEvent =
  | { kind: "request"; event: ToolRequest }
  | { kind: "result"; event: ToolResult }
  | { kind: "other"; type: string; id: EventId | undefined };

export type EventParse =
  | { ok: true; event: ToolEvent }
  /** Unprefixed JSON that is not a `tool.*` event: ordinary output. */
  | { ok: true; event: null }
  | { ok: false; error: "InvalidJson" | "NotAnObject" | "UnsupportedVersion" | "InvalidEvent"; detail: string };

/**
 * Parse one event candidate. `prefixed`: the line carried `--event-prefix`, so it must be an event;
 * otherwise only a JSON object whose `type` starts with `tool.` is one, and any other line is output.
 */
export function parseEvent(text: string, prefixed: boolean): EventParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!prefixed) return { ok: true, event: null };
    return { ok: false, error: "InvalidJson", detail: (error as Error).message };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return prefixed ? { ok: false, error: "NotAnObject", detail: `expected one JSON object, got ${Array.isArray(value) ? "an array" : typeof value}` } : { ok: true, event: null };
  }
  const type = (value as { type?: unknown }).type;
  if (!prefixed && (typeof type !== "string" || !type.startsWith("tool."))) return { ok: true, event: null };
  const version = (value as { v?: unknown }).v;
  if (version !== PROTOCOL_VERSION) {
    return { ok: false, error: "UnsupportedVersion", detail: `expected "v": ${PROTOCOL_VERSION}, got ${JSON.stringify(version) ?? "none"}` };
  }
  if (type === "tool.request") return checked(toolRequestSchema, value, (event) => ({ kind: "request", event }));
  if (type === "tool.result") return checked(toolResultSchema, value, (event) => ({ kind: "result", event }));
  return checked(otherEventSchema, value, (event) => ({ kind: "other", type: event.type, id: event.id }));
}

function checked<S extends v.GenericSchema>(schema: S, value: unknown, wrap: (output: v.InferOutput<S>) => ToolEvent): EventParse {
  const result = v.safeParse(schema, value);
  if (result.success) return { ok: true, event: wrap(result.output) };
  const issue = result.issues[0];
  const path = issue?.path?.map((item) => String(item.key)).join(".") ?? "";
  // valibot words a missing key as "Invalid key: Expected "id" but received undefined".
  const message = issue?.kind === "schema" && issue.input === undefined ? "missing" : (issue?.message ?? "invalid");
  return { ok: false, error: "InvalidEvent", detail: `${path ? `${path}: ` : ""}${message}` };
}

/** What the arbiter writes to the child's stdin (docs/codecli-protocol.md §3). `ts` is RFC 3339. */
export type ArbiterDecision = "allow" | "deny";
export type AbortCode = "user_cancel" | "policy_violation" | "fatal_error";

export type ControlMessage =
  | { v: 1; type: "policy.decision"; ts: string; run_id: string; id: EventId; decision: ArbiterDecision; reason: string; rule_id: string | null }
  | { v: 1; type: "policy.ping"; ts: string; run_id: string; id: string; capabilities: string[]; timeout_ms: number }
  | { v: 1; type: "policy.abort"; ts: string; run_id: string; id: string; reason: string; code: AbortCode };

export function decisionMessage(runId: string, id: EventId, decision: ArbiterDecision, reason: string, ruleId: string | null): ControlMessage {
  return { v: 1, type: "policy.decision", ts: new Date().toISOString(), run_id: runId, id, decision, reason, rule_id: ruleId };
}

export function pingMessage(runId: string, id: string, timeoutMs: number): ControlMessage {
  return { v: 1, type: "policy.ping", ts: new Date().toISOString(), run_id: runId, id, capabilities: [...CAPABILITIES], timeout_ms: timeoutMs };
}

export function abortMessage(runId: string, id: string, reason: string, code: AbortCode): ControlMessage {
  return { v: 1, type: "policy.abort", ts: new Date().toISOString(), run_id: runId, id, reason, code };
}
