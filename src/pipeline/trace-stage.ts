import { RPC } from "../core/jsonrpc.ts";
import type { Verdict } from "../governance/verdict/decider.ts";
import type { Call } from "./call.ts";
import type { Stage } from "./stages.ts";

export type TraceStageOptions = {
  /**
   * The front end never sees the call end (the hooks: the agent runs its tool after the hook
   * answered, and the hook's process is gone by then): a call let through has its spans ended once
   * the answer went out. Otherwise they end on the way back, with the call's status.
   */
  endsWithAnswer?: boolean;
};

/** What a call that reached this stage undecided is traced as: the deny the front end answers with (decision 3). */
const UNDECIDED: Verdict = { action: "deny", gate: "governance", ruleId: null, reason: "no decision was reached", error: { code: RPC.internalError, message: "ThoughtGate reached no decision" } };

/**
 * trace (docs/governance.md, "Traces"): on the way in, the decision on the call's spans (its gate,
 * rule and reason; a deny's error), and, once the forward answered, the spans of a call that ended
 * there (refused) ended with its status; on the way back, the spans ended with the status the call
 * ended with. A call without spans (tracing off) passes at the cost of one check each way; a run
 * that is synchronous stays so. The spans are begun by the front end when it builds the call
 * (`beginCallSpans`, call-spans.ts), so they measure the decision too.
 */
export function traceStage(options: TraceStageOptions = {}): Stage {
  const answered = (call: Call): void => {
    if (call.status !== undefined) call.spans?.end(call.status);
    else if (options.endsWithAnswer && call.verdict?.action === "forward") call.spans?.end("ok");
  };
  return {
    name: "trace",
    request(call, next) {
      if (!call.spans) return next(call);
      call.spans.decided(call.verdict ?? UNDECIDED);
      const after = next(call);
      if (after instanceof Promise) return after.then(() => answered(call));
      answered(call);
    },
    response(call, next) {
      if (call.status !== undefined) call.spans?.end(call.status);
      return next(call);
    },
  };
}
