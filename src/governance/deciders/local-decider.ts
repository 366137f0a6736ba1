import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import type { Profile } from "../../core/profile.ts";
import type { Place } from "../../core/project.ts";
import { approvalPrompt } from "../decision/approval-prompt.ts";
import { callRef, toInput, type CallRef, type DecisionContext, type Decider, type ListKind, type Verdict } from "../decision/decider.ts";
import { acceptancePrompt, definitionRefusal, type DefinitionChange, type PinPolicy } from "../decision/definition-acceptance.ts";
import { deniedVerdict } from "../decision/deny-error.ts";
import type { EngineHolder } from "../engine/engine-holder.ts";
import { decideSafely, type EngineDecision, type EvaluateInput, type Outcome } from "../engine/engine.ts";
import { GOVERNANCE_ERROR } from "../decision/errors.ts";
import { recordGates } from "../engine/gate-trail.ts";
import type { SecretScanPolicy } from "../decision/secret-policy.ts";

type Approval = Extract<EngineDecision, { kind: "approve" }>;

/**
 * A shim's own engine (no governance service): the same 4 gates in-process. Approvals can only
 * be asked through the agent (MCP elicitation); with no such channel, an approval fails closed.
 */
export class LocalDecider implements Decider {
  /** Tools a person allowed "for this session" through the agent: server, method and name. */
  private readonly sessionGrants = new Set<string>();
  /** Verdicts of the engine's shared outcomes (held weakly: a reload makes new ones). */
  private readonly verdicts = new WeakMap<Outcome, Verdict>();

  constructor(
    private readonly engines: Pick<EngineHolder, "engine" | "label">,
    private readonly profile: Profile,
    /** Where this shim's calls are made from; absent: the engine's own (this process's working directory). */
    private readonly place?: Place,
  ) {}

  get policy(): string {
    return this.engines.label;
  }

  decide(request: JsonRpcRequest, context: DecisionContext): Verdict | Promise<Verdict> {
    if (context.definitionChange) return this.acceptDefinition(context.definitionChange, callRef(request, context.serverId), context);
    const input = toInput(request, context);
    if (this.place) input.place = this.place;
    const outcome = decideSafely(this.engines.engine, input, this.profile);
    recordGates(context.span, outcome);
    if (outcome.kind === "forward") return this.forwardVerdict(outcome);
    const call = callRef(request, context.serverId);
    if (outcome.kind === "deny") return deniedVerdict(outcome.block, call);
    return this.approve(outcome, input, call, context);
  }

  pinPolicy(serverId: string): PinPolicy {
    const { mode, blockSeverity } = this.engines.engine.pins(serverId);
    return { mode, blockSeverity, enforce: this.profile === "production" };
  }

  secretScan(serverId: string): SecretScanPolicy {
    return this.engines.engine.secretScan(serverId);
  }

  /** The verdict of a forward outcome; an outcome the engine shares (frozen: a rule's) gets one shared verdict. */
  private forwardVerdict(outcome: Extract<Outcome, { kind: "forward" }>): Verdict {
    const shared = Object.isFrozen(outcome);
    const known = shared ? this.verdicts.get(outcome) : undefined;
    if (known) return known;
    const verdict: Verdict = { action: "forward", gate: outcome.gate, ruleId: outcome.ruleId, policyId: outcome.policyId, reason: outcome.reason };
    if (outcome.would) verdict.would = outcome.would;
    if (outcome.autoApproved) verdict.autoApproved = true;
    if (shared) this.verdicts.set(outcome, Object.freeze(verdict));
    return verdict;
  }

  filterList(serverId: string, kind: ListKind, names: string[]): string[] {
    return this.engines.engine.visibility.filter(serverId, kind, names);
  }

  /**
   * A changed or flagged definition: only the agent's user can accept it here (no service, so no
   * page, CLI or Slack); without elicitation, or with no one answering, the call is refused and the
   * refusal says how to accept (`thoughtgate pins accept`).
   */
  private async acceptDefinition(change: DefinitionChange, call: CallRef, context: DecisionContext): Promise<Verdict> {
    const { workflow } = this.engines.engine.pins(call.serverId);
    const destination = workflow.destination.type;
    if (!context.elicit || (destination !== "any" && destination !== "elicitation" && destination !== "slack")) {
      return definitionRefusal(change, call, "no person can be asked here: the agent did not declare MCP elicitation");
    }
    context.awaitingApproval(`the definition of ${change.name} ${change.status === "changed" ? "changed" : "was flagged"}: asking the user through the agent`);
    const timeout = AbortSignal.timeout(workflow.timeout);
    try {
      const answer = await context.elicit(acceptancePrompt(call.serverId, change), AbortSignal.any([context.signal, timeout]), "definition");
      // "For this session" means nothing more for a definition: it is accepted as shown, once.
      if (answer === "approved" || answer === "approved_session") return { action: "forward", gate: "definitions", ruleId: null, reason: "the new definition was accepted", approvedBy: "elicitation" };
      return definitionRefusal(change, call, answer === "declined" ? "the user declined it" : "no person answered (the agent answered the form itself)");
    } catch {
      return definitionRefusal(change, call, timeout.aborted ? `no answer in ${workflow.timeout} ms` : "cancelled");
    }
  }

  private async approve(outcome: Approval, input: EvaluateInput, call: CallRef, context: DecisionContext): Promise<Verdict> {
    const { workflow, ruleId, policyId } = outcome;
    const grant = grantKey(input);
    if (this.sessionGrants.has(grant)) {
      return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: allowed for this session by an earlier approval`, approvedBy: "session_grant" };
    }
    const block = (code: number, reason: string): Verdict => deniedVerdict({ gate: "approval", code, ruleId, policyId, reason }, call);
    const destination = workflow.destination.type;
    if (!context.elicit || (destination !== "any" && destination !== "elicitation" && destination !== "slack")) {
      const missing = destination === "slack" ? "Slack approvals are posted by the governance service, and the agent did not declare MCP elicitation" : "the agent did not declare MCP elicitation";
      return block(
        GOVERNANCE_ERROR.approvalRejected,
        `${outcome.reason}, but no approval channel is available (${missing}; run under \`thoughtgate wrap\` or with a governance service for the web page and \`thoughtgate approve\`)`,
      );
    }
    const noSlack = destination === "slack" ? " (not in Slack: Slack approvals are posted by the governance service, under `thoughtgate wrap` or `serve`)" : "";
    context.awaitingApproval(`${outcome.reason}: asking the user through the agent${noSlack}`);
    const timeout = AbortSignal.timeout(workflow.timeout);
    try {
      const answer = await context.elicit(approvalPrompt(input, outcome.reason), AbortSignal.any([context.signal, timeout]));
      if (answer === "approved") return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: approved`, approvedBy: "elicitation" };
      if (answer === "approved_session") {
        // This tool on this server, any arguments, until the shim stops (a standalone shim is its own session).
        this.sessionGrants.add(grant);
        return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: approved for this session`, approvedBy: "elicitation" };
      }
      if (answer === "declined") return block(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: rejected by the user`);
      // The agent answered for no one (it cannot show the question); a standalone shim has no other channel.
      return block(
        GOVERNANCE_ERROR.approvalRejected,
        `${outcome.reason}, but no person answered: the agent answered the approval form itself (it cannot show it in this mode); run under \`thoughtgate wrap\` for the approvals page and \`thoughtgate approve\``,
      );
    } catch {
      if (!timeout.aborted) return block(GOVERNANCE_ERROR.taskCancelled, `${outcome.reason}: cancelled`);
      if (workflow.on_timeout === "approve") {
        return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: no answer in ${workflow.timeout} ms, approved by on_timeout`, approvedBy: "timeout" };
      }
      return block(GOVERNANCE_ERROR.approvalTimeout, `${outcome.reason}: no answer in ${workflow.timeout} ms`);
    }
  }
}

function grantKey(input: EvaluateInput): string {
  return JSON.stringify([input.serverId, input.method, input.name]);
}
