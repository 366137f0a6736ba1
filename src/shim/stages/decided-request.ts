import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import type { Verdict } from "../../governance/verdict/decider.ts";
import type { PendingRequest } from "../request-tracker.ts";

/**
 * A governed request once its decision is made, on its way through the last stages in (audit →
 * trace → forward: src/pipeline/stages.ts). Each stage sees it before `next()` and after: the
 * forward answers a deny, and the audit and the trace then end the call on their way out.
 */
export type DecidedRequest = {
  readonly entry: PendingRequest;
  readonly request: JsonRpcRequest;
  readonly verdict: Verdict;
  /** What the server gets: the agent's bytes; with tracing on, a copy with the span's context in `_meta` (trace). */
  bytes: Uint8Array;
  /** Set by the forward when it answered the agent itself (a deny's error): the bytes it sent. */
  answeredBytes?: number;
};
