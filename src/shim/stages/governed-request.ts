import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import { RPC } from "../../core/jsonrpc.ts";
import type { ElicitOutcome, Verdict } from "../../governance/verdict/decider.ts";
import type { DefinitionChange } from "../../governance/verdict/definition-acceptance.ts";
import type { StageMarks } from "../../pipeline/call.ts";
import type { RequestEra } from "../era.ts";
import type { LazyAbort } from "../held-decisions.ts";
import type { Ask } from "../input-asks.ts";
import type { PendingRequest } from "../request-tracker.ts";

/**
 * A governed request from the agent on its way in through the shim's stages (parse → lists →
 * definitions → decide → audit → trace → forward: src/pipeline/stages.ts). The router builds it
 * with what it was given; each stage reads it and writes only the fields the table in
 * docs/architecture.md gives it, so a stage needs no other stage, only this.
 */
export type GovernedRequest = StageMarks & {
  readonly entry: PendingRequest;
  /** The request as decided: parse takes the shim's own answer and state out of a retry. */
  request: JsonRpcRequest;
  /** What the server gets: the agent's bytes (parse: a retry's, stripped); with tracing on, with the span's context (trace). */
  bytes: Uint8Array;
  /** parse: which MCP era the request is of (era.ts). */
  era: RequestEra;
  /** Aborts the decision when the agent cancels the request or the server goes away (held-decisions.ts). */
  control: LazyAbort;
  /** `subscriptions/listen`: its resource subscriptions as given (null when they cannot be read). */
  readonly subscriptions?: unknown[] | null;
  /** parse: the agent's answer to an approval the shim asked in an `input_required` result; the call continues under it. */
  answered?: { ask: Ask; outcome: ElicitOutcome };
  /** definitions: the changed or flagged definition a person must accept before the call is decided. */
  change?: DefinitionChange;
  /** The outcome every later stage sees: decide's, or an earlier stage's that ended the call. */
  verdict?: Verdict;
  /** Set by the forward when it answered the agent itself (a deny's error): the bytes it sent. */
  answeredBytes?: number;
};

/** What the last stages in (audit → trace → forward) read of a governed request. */
export type DecidedRequest = Pick<GovernedRequest, "entry" | "request" | "verdict" | "bytes" | "answeredBytes">;

/**
 * The request's verdict; a request that reached the last stages undecided is refused
 * (a governance doubt fails closed, docs/architecture.md decision 3).
 */
export function verdictOf(decided: Pick<GovernedRequest, "verdict">): Verdict {
  return decided.verdict ?? UNDECIDED;
}

const UNDECIDED: Verdict = {
  action: "deny",
  gate: "governance",
  ruleId: null,
  reason: "no decision was reached",
  error: { code: RPC.internalError, message: "ThoughtGate refused the request: no decision was reached", data: { gate: "governance", reason: "no decision was reached" } },
};
