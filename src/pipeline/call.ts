import type { JsonRpcId, JsonRpcRequest } from "../core/jsonrpc.ts";
import type { Verdict } from "../governance/verdict/decider.ts";
import type { CallStatus } from "../telemetry/events.ts";
import type { Span } from "../telemetry/tracing/tracer.ts";
import type { StartFields } from "./call-record.ts";

/** Which front end built the call (docs/architecture.md, "Every tool call, one pipeline"). */
export type CallOrigin = "mcp" | "arbiter" | "hooks";

/**
 * A call's spans, when tracing is on: what the trace stage needs of them, whoever made them
 * (the shim's `RequestTrace`, shim/call-trace.ts; the arbiter's and the hooks', call-spans.ts).
 */
export type CallSpans = {
  /** The decision on the request's span (a deny: its error). */
  decided(verdict: Verdict): void;
  /** The call ended with `status`: its spans end, once, whichever way it ended. */
  end(status: CallStatus): void;
  /** The decision now waits for a person: the time it takes is a span of its own. */
  waiting(): void;
  /** Where the decider records the gates (or whose context it hands to the governance service). */
  readonly deciding: Span;
};

/**
 * Where a call is in each direction's stages: the index of the stage it last entered, written by
 * `compose` alone (stages.ts), which refuses to enter a stage at or before it (a `next` called twice). One field
 * per direction, since a call's way back may run while its way in still waits (the arbiter's
 * unwaited call). The front ends create their calls with both, so every call has one shape.
 */
export type StageMarks = { requestAt?: number; responseAt?: number };

/**
 * One request on its way through the stages, the same for every front end. The front end fills
 * what it was given (who asked, for what, with which arguments); each stage reads it and writes
 * only its own fields, so a stage needs no other stage, only the call.
 */
export type Call = StageMarks & {
  /** The front end's id for it: the JSON-RPC id, the arbiter's event id, the hook's tool use id. */
  readonly id: JsonRpcId;
  readonly origin: CallOrigin;
  /** The MCP server's id; for an agent's built-in tool, the agent's (`claude-code`). */
  readonly serverId: string;
  /** `tools/call`, `resources/read`, `resources/subscribe`, `prompts/get`. */
  readonly method: string;
  /** The request as the decider reads it: what a non-MCP front end builds with `toolCallRequest`. */
  readonly request: JsonRpcRequest;
  /** `performance.now()` when the call arrived (latency in the audit). */
  readonly startedAt: number;
  /** audit: the call's identity in the record, set when its `tool_call_start` is written. */
  audit?: { callId: string; argsHash: string };
  /**
   * The front end's own `call_id` for the record, where it has one: a hook's is the agent's tool use
   * id, so the agent's later report that the call ran finds it. Absent: the audit makes a new one.
   */
  recordCallId?: string;
  /** What the front end's protocol adds to the call's `tool_call_start` (the arbiter's `action`, `requires_policy`). */
  startFields?: StartFields;
  /** decide (or any stage that ends the call): the outcome every later stage sees. */
  verdict?: Verdict;
  /** How the call ended, set once: by the forward stage's answer or the result on the way back. */
  status?: CallStatus;
  /** Bytes of the answer the agent got (the result after secrets, or the error). */
  bytesOut?: number;
  /** trace: the call's spans, when tracing is on. */
  spans?: CallSpans;
};

/**
 * The JSON-RPC form of a tool call that did not come as one (an agent's built-in tool announced
 * through its hooks, the arbiter's `tool.request`): the decider and the audit read only this.
 */
export function toolCallRequest(id: JsonRpcId, tool: string, input: unknown): JsonRpcRequest {
  const params = { name: tool, arguments: input };
  return { kind: "request", id, method: "tools/call", params, body: { jsonrpc: "2.0", id, method: "tools/call", params } };
}

/** A new call of `origin` for `request`. */
export function callOf(origin: CallOrigin, serverId: string, request: JsonRpcRequest, startedAt = performance.now()): Call {
  return { id: request.id, origin, serverId, method: request.method, request, startedAt, requestAt: -1, responseAt: -1 };
}
