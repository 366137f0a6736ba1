import { messageOf } from "../core/errors.ts";
import { RPC } from "../core/jsonrpc.ts";
import { log } from "../core/log.ts";
import type { DecisionContext, Decider, Verdict } from "../governance/verdict/decider.ts";
import type { Call } from "./call.ts";
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
      if (call.verdict) return next();
      let verdict: Verdict | Promise<Verdict>;
      try {
        verdict = decider.decide(call.request, contextOf(call));
      } catch (error) {
        verdict = decisionFailed(error);
      }
      if (!(verdict instanceof Promise)) {
        call.verdict = verdict;
        return next();
      }
      return verdict.catch(decisionFailed).then((settled) => {
        call.verdict = settled;
        return next();
      });
    },
  };
}

/** The denies `decisionFailed` made: a front end may tell them from a policy's deny (the hook blocks with the why). */
const failures = new WeakSet<Verdict>();

/** Whether `verdict` is the deny of a decision that could not be made (`decisionFailed`). */
export function isDecisionFailure(verdict: Verdict): boolean {
  return failures.has(verdict);
}

/** The deny of a decision that could not be made: a decider that throws or rejects fails closed (docs/architecture.md, decision 3). */
export function decisionFailed(error: unknown): Verdict {
  log.error(`governance decision failed: ${messageOf(error)}`);
  const verdict: Verdict = {
    action: "deny",
    gate: "governance",
    ruleId: null,
    reason: "decision failed",
    error: { code: RPC.internalError, message: `ThoughtGate could not decide: ${messageOf(error)}` },
  };
  failures.add(verdict);
  return verdict;
}
