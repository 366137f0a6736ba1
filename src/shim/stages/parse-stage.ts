import { RPC, type JsonRpcRequest } from "../../core/jsonrpc.ts";
import { invalidGovernedParams, type Verdict } from "../../governance/verdict/decider.ts";
import type { Stage } from "../../pipeline/stages.ts";
import type { CallTracer } from "../call-trace.ts";
import { requestEra } from "../era.ts";
import { LazyAbort } from "../held-decisions.ts";
import type { RetryAsks } from "../retry-asks.ts";
import type { GovernedRequest } from "./governed-request.ts";

/**
 * parse, first on the way in (the line itself was framed and validated before: stdio/framer.ts):
 * a governed request's spans begin, its params are checked (a request that cannot be decided as
 * sent is refused), its era read (era.ts), and a modern retry told apart (retry-asks.ts): the
 * answer to the shim's own question continues the call it was asked for, a forged state is
 * refused, a retry without the answer is asked again (the call ends here), and the retry of a
 * tool's own round continues under the decision already made. `subscriptions/listen` needs its
 * resource subscriptions as a list of URIs.
 */
export function parseStage(options: {
  serverId: string;
  asks: Pick<RetryAsks, "recognize" | "askAgain" | "continuesRound">;
  /** The spans of governed requests; absent when tracing is off (docs/governance.md, "Traces"). */
  trace?: Pick<CallTracer, "begin"> | undefined;
}): Stage<GovernedRequest, never> {
  const { serverId, asks, trace } = options;
  const refuse = (call: GovernedRequest, code: number, message: string, reason: string) => {
    call.verdict = refusal(serverId, code, message, reason);
  };
  return {
    name: "parse",
    request(call, next) {
      const { entry, request } = call;
      call.era = requestEra(request);
      if (call.subscriptions !== undefined) {
        if (call.subscriptions === null || !call.subscriptions.every((uri) => typeof uri === "string")) {
          const reason = "subscriptions/listen needs params.notifications as an object and its resourceSubscriptions as a list of URI strings";
          refuse(call, RPC.invalidParams, `Invalid params: ${reason}`, reason);
        }
        return next(call);
      }
      if (trace) entry.trace = trace.begin(request, entry.call?.argsHash);
      const invalid = invalidGovernedParams(request);
      if (invalid) {
        refuse(call, RPC.invalidParams, `Invalid params: ${invalid}`, invalid);
        return next(call);
      }
      if (call.era.era !== "modern") return next(call);
      const recognized = asks.recognize(request);
      if (recognized.kind === "forged") {
        refuse(call, RPC.invalidParams, `ThoughtGate refused the retry: ${recognized.reason}`, recognized.reason);
        return next(call);
      }
      if (recognized.kind === "unanswered") {
        asks.askAgain(entry, recognized.ask);
        return;
      }
      if (recognized.kind === "answer") {
        call.answered = { ask: recognized.ask, outcome: recognized.outcome };
        replace(call, recognized);
        // Cancelling the retry aborts the approval it carries the answer to.
        call.control = new LazyAbort(recognized.ask.control);
        return next(call);
      }
      // Our state for another call, or one already used: a new call, decided afresh.
      if (recognized.kind === "stale") replace(call, recognized);
      const continued = asks.continuesRound(call.request);
      if (continued) call.verdict = continued;
      return next(call);
    },
  };
}

/** The request with the shim's own answer and state taken out: what is decided, and what the server gets. */
function replace(call: GovernedRequest, stripped: { request: JsonRpcRequest; bytes: Uint8Array }): void {
  call.request = stripped.request;
  call.bytes = stripped.bytes;
}

/** A governed request that cannot be decided as sent: an error, and it reaches no one. */
function refusal(serverId: string, code: number, message: string, reason: string): Verdict {
  return { action: "deny", gate: "governance", ruleId: null, reason, error: { code, message, data: { gate: "governance", server_id: serverId, reason } } };
}
