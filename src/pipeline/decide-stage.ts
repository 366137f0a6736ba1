import type { DecisionContext, Decider, Verdict } from "../governance/verdict/decider.ts";
import type { Call } from "./call.ts";
import { decisionFailed } from "./decision-failed.ts";
import type { Stage } from "./stages.ts";

/**
 * decide: the decider's verdict on the call (its gates, a person's approval, an ask), set as
 * `call.verdict` for the stages after it. A decider that throws or rejects fails closed
 * (docs/architecture.md, decision 3). A verdict already set (a stage before ended the call) is
 * kept: what was refused is not decided again. A verdict given at once keeps the run synchronous.
 */
export function decideStage(decider: Pick<Decider, "decide">, contextOf: (call: Call) => DecisionContext): Stage {
  return {
    name: "decide",
    request(call, next) {
      if (call.verdict) return next(call);
      let verdict: Verdict | Promise<Verdict>;
      try {
        verdict = decider.decide(call.request, contextOf(call));
      } catch (error) {
        verdict = decisionFailed(error);
      }
      if (!(verdict instanceof Promise)) {
        call.verdict = verdict;
        return next(call);
      }
      return verdict.catch(decisionFailed).then((settled) => {
        call.verdict = settled;
        return next(call);
      });
    },
  };
}
