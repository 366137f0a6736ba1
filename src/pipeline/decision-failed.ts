import { messageOf } from "../core/errors.ts";
import { RPC } from "../core/jsonrpc.ts";
import { log } from "../core/log.ts";
import type { Verdict } from "../governance/verdict/decider.ts";

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
