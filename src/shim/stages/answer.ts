import type { JsonRpcResponse } from "../../core/jsonrpc.ts";
import type { StageMarks } from "../../pipeline/call.ts";
import type { CallStatus } from "../../telemetry/events.ts";
import type { PendingRequest } from "../request-tracker.ts";

/**
 * A server's answer to one of the agent's requests on its way back through the shim's stages
 * (secrets → definitions → audit → trace: src/pipeline/stages.ts). Each stage reads the request
 * it answers and the message, and changes only what the table in docs/architecture.md gives it.
 */
export type Answer = StageMarks & {
  readonly entry: PendingRequest;
  readonly message: JsonRpcResponse;
  /** What the agent gets: the server's bytes, then the result with its secrets redacted (secrets). */
  bytes: Uint8Array;
  /** A stage took over delivering it (a list waiting for its filter or pin check): the router sends nothing. */
  delivered: boolean;
};

/** How a call ended, from its answer. */
export function statusOf(message: JsonRpcResponse): CallStatus {
  if (message.isError) return "error";
  const result = message.body.result as { isError?: unknown; resultType?: unknown } | undefined;
  if (result?.resultType === "input_required") return "input_required";
  return result?.isError === true ? "error" : "ok";
}

/** A tools/call the agent still waits for: the one kind of answer that ends a call in the record and its spans. */
export function endsCall(answer: Answer): boolean {
  return answer.entry.call !== undefined && !answer.entry.cancelled;
}
