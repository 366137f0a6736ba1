import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import type { Profile } from "../core/profile.ts";
import type { EngineHolder } from "../governance/engine/engine-holder.ts";
import { decideSafely, type EvaluateInput, type Outcome } from "../governance/engine/engine.ts";
import { recordGates } from "../governance/engine/gate-trail.ts";
import { approvalPrompt } from "../governance/verdict/approval-prompt.ts";
import { callRef, toInput, type CallRef, type DecisionContext, type Decider, type Verdict } from "../governance/verdict/decider.ts";
import { deniedVerdict } from "../governance/verdict/deny-error.ts";
import { GOVERNANCE_ERROR } from "../governance/verdict/errors.ts";
import type { ArbiterDecision } from "./protocol.ts";
import type { ApprovalAnswer, Approver } from "./terminal-approver.ts";

type Approval = Extract<Outcome, { kind: "approve" }>;

export type ArbiterDeciderOptions = {
  engines: Pick<EngineHolder, "engine" | "label">;
  profile: Profile;
  /** Who wants to run the tool, as the question names it (`--server-id`). */
  serverId: string;
  approver: Approver;
  /** What an approval gets when there is no terminal to ask on. */
  defaultAction: ArbiterDecision;
  /** The `timeout_ms` the child was told (`policy.ping`): a question not answered by then is a deny. */
  decisionTimeoutMs: number;
  /** The request's codecli `action`, shown with the question. */
  actionOf(request: JsonRpcRequest): string | null;
};

/**
 * Why a decision still waiting was withdrawn, as the abort reason of its `DecisionContext.signal`:
 * the session ends, and the child is told `reason` (docs/codecli-protocol.md §3.4: every call still
 * waiting is denied first).
 */
export class Withdrawn {
  constructor(readonly reason: string) {}
}

/** What a request the child ran without waiting is recorded with (docs/codecli-protocol.md §8.1). */
export const UNWAITED_FORWARD = "not waited for (requires_policy: false); ";
export const UNWAITED_DENY = "ran without waiting for a decision (requires_policy: false), but ";

/** What the arbiter decides with (an `ArbiterDecider`): a waited call's decider, an unwaited call's, and which verdicts end the session. */
export type ArbiterDeciding = Pick<Decider, "decide" | "auditArguments"> & {
  readonly unwaited: Pick<Decider, "decide">;
  endsSession(verdict: Verdict): boolean;
};

/**
 * The arbiter's decider (docs/architecture.md, "Every tool call, one pipeline"): the engine's four
 * gates with the profile (`decideSafely`, as every decider), and for an approval the arbiter's own
 * workflow: the question on the terminal (terminal-approver.ts), the workflow's timeout and
 * on_timeout, `--default-action` when there is no terminal, and the child's decision timeout. The
 * decide stage runs it, so a decider that throws fails closed there, as for every front end.
 */
export class ArbiterDecider implements Decider, ArbiterDeciding {
  /** Verdicts of a person's "abort" at the question: the session ends once the deny is sent. */
  private readonly enders = new WeakSet<Verdict>();

  constructor(private readonly options: ArbiterDeciderOptions) {}

  get policy(): string {
    return this.options.engines.label;
  }

  auditArguments(): boolean {
    return this.options.engines.engine.auditArguments();
  }

  decide(request: JsonRpcRequest, context: DecisionContext): Verdict | Promise<Verdict> {
    // The arbiter knows no server's program: a rule "always allow" wrote (it names one) never matches here.
    const input = toInput(request, context);
    const outcome = decideSafely(this.options.engines.engine, input, this.options.profile);
    recordGates(context.span, outcome);
    const call = callRef(request, context.serverId);
    if (outcome.kind === "forward") return forwardVerdict(outcome, "");
    if (outcome.kind === "deny") return deniedVerdict(outcome.block, call);
    return this.ask(outcome, input, request, call, context);
  }

  /**
   * For a request the child runs without waiting (`requires_policy: false`): the same gates, no one
   * asked (there is nothing left to decide), the outcome recorded; what production would not have
   * let run unasked is a deny, which ends the session.
   */
  readonly unwaited: Pick<Decider, "decide"> = {
    decide: (request, context) => {
      const outcome = decideSafely(this.options.engines.engine, toInput(request, context), this.options.profile);
      recordGates(context.span, outcome);
      if (outcome.kind === "forward") return forwardVerdict(outcome, UNWAITED_FORWARD);
      const block = outcome.kind === "deny" ? outcome.block : { gate: "approval" as const, code: GOVERNANCE_ERROR.approvalRejected, ruleId: outcome.ruleId, policyId: outcome.policyId, reason: outcome.reason };
      return deniedVerdict({ ...block, reason: `${UNWAITED_DENY}${block.reason}` }, callRef(request, context.serverId));
    },
  };

  /** Whether the person chose to end the session at this verdict's question. */
  endsSession(verdict: Verdict): boolean {
    return this.enders.has(verdict);
  }

  private async ask(outcome: Approval, input: EvaluateInput, request: JsonRpcRequest, call: CallRef, context: DecisionContext): Promise<Verdict> {
    const { ruleId, policyId, workflow } = outcome;
    const { approver, decisionTimeoutMs, serverId, defaultAction } = this.options;
    context.awaitingApproval(`${outcome.reason}: asking on the terminal`);
    const decisionTimeout = AbortSignal.timeout(decisionTimeoutMs);
    const signal = AbortSignal.any([context.signal, decisionTimeout]);
    const action = this.options.actionOf(request);
    const text = [`thoughtgate: ${serverId} wants to run ${input.name}${action ? ` (action: ${action})` : ""}`, `  ${approvalPrompt({ ...input, ruleId }, outcome.reason).replaceAll("\n", "\n  ")}`].join("\n");
    // An approver that does not hear the signal still cannot hold the call past it.
    const answer: ApprovalAnswer = await Promise.race([approver.ask({ text, timeoutMs: workflow.timeout, signal }), aborted(signal)]);
    const deny = (code: number, why: string, timedOut = false): Verdict => {
      const verdict = deniedVerdict({ gate: "approval", code, ruleId, policyId, reason: why }, call);
      return timedOut ? { ...verdict, decidedBy: { channel: "timeout" } } : verdict;
    };
    const allow = (why: string, approvedBy: string): Verdict => ({ action: "forward", gate: "approval", ruleId, policyId: policyId ?? null, reason: `${outcome.reason}: ${why}`, approvedBy, ...(approvedBy === "timeout" ? { decidedBy: { channel: "timeout" as const } } : {}) });
    switch (answer) {
      case "approve":
        return allow("approved on the terminal", "terminal");
      case "reject":
        return deny(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: denied on the terminal`);
      case "abort": {
        const verdict = deny(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: the user aborted the session`);
        this.enders.add(verdict);
        return verdict;
      }
      case "timeout":
        if (workflow.on_timeout === "approve") return allow(`no answer in ${workflow.timeout} ms, approved by on_timeout`, "timeout");
        return deny(GOVERNANCE_ERROR.approvalTimeout, `${outcome.reason}: no answer in ${workflow.timeout} ms`, true);
      case "no_terminal": {
        const why = `no terminal to ask on; --default-action ${defaultAction}`;
        return defaultAction === "allow" ? allow(why, "default_action") : deny(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: ${why}`);
      }
      case "cancelled": {
        const withdrawn = context.signal.reason;
        if (context.signal.aborted && withdrawn instanceof Withdrawn) return deniedVerdict({ gate: "governance", code: GOVERNANCE_ERROR.taskCancelled, ruleId: null, policyId: null, reason: withdrawn.reason }, call);
        if (decisionTimeout.aborted) return deny(GOVERNANCE_ERROR.approvalTimeout, `policy timeout: no decision in ${decisionTimeoutMs} ms`, true);
        // The child went away: nothing is sent, and the call's record ends as cancelled.
        return deny(GOVERNANCE_ERROR.taskCancelled, `${outcome.reason}: cancelled`);
      }
    }
  }
}

function forwardVerdict(outcome: Extract<Outcome, { kind: "forward" }>, prefix: string): Verdict {
  return {
    action: "forward",
    gate: outcome.gate,
    ruleId: outcome.ruleId,
    policyId: outcome.policyId,
    reason: `${prefix}${outcome.reason}`,
    ...(outcome.would ? { would: outcome.would } : {}),
    ...(outcome.autoApproved ? { autoApproved: true } : {}),
  };
}

function aborted(signal: AbortSignal): Promise<"cancelled"> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve("cancelled");
    else signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
  });
}
