import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import type { Profile } from "../../core/profile.ts";
import type { Place } from "../../core/project.ts";
import { approvalPrompt } from "../verdict/approval-prompt.ts";
import { callRef, toInput, type CallRef, type DecisionContext, type DecisionScope, type Decider, type ListKind, type Verdict } from "../verdict/decider.ts";
import { acceptancePrompt, definitionRefusal, type DefinitionChange, type PinPolicy } from "../verdict/definition-acceptance.ts";
import { deniedVerdict } from "../verdict/deny-error.ts";
import type { EngineHolder } from "../engine/engine-holder.ts";
import { decideSafely, type EngineDecision, type EvaluateInput, type Outcome } from "../engine/engine.ts";
import { ASK_AGAIN, GOVERNANCE_ERROR } from "../verdict/errors.ts";
import { recordGates } from "../engine/gate-trail.ts";
import type { SecretScanPolicy } from "../verdict/secret-policy.ts";
import type { AlwaysWriter } from "../verdict/always-rule.ts";
import { projectFileReader } from "../verdict/file-before.ts";
import { projectRoot } from "../../core/project.ts";

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

  /** The shim's project: where an "always … in this project" rule applies, and the only place a prompt reads a file's old text. */
  private readonly project = projectRoot(process.cwd());
  private readonly readExisting = projectFileReader(this.project);
  private writer: AlwaysWriter | null = null;

  /**
   * `always`: loads the writer of "always allow" rules (governance/approval/always-allow.ts, given
   * by the shim command so this room does not import it), on the first approval only.
   */
  constructor(
    private readonly engines: Pick<EngineHolder, "engine" | "label">,
    private readonly profile: Profile,
    private readonly always?: () => Promise<AlwaysWriter>,
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

  auditArguments(): boolean {
    return this.engines.engine.auditArguments();
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
      if (answer.kind === "approved") return { action: "forward", gate: "definitions", ruleId: null, reason: "the new definition was accepted", approvedBy: "elicitation", decidedBy: { channel: "elicitation" } };
      return definitionRefusal(change, call, answer.kind === "declined" || answer.kind === "dismissed" ? "the user declined it" : "no person answered (the agent answered the form itself)");
    } catch {
      return definitionRefusal(change, call, timeout.aborted ? `no answer in ${workflow.timeout} ms` : "cancelled");
    }
  }

  /** The writer of "always allow" rules, loaded on the first approval; null when this shim has none or it failed to load. */
  private async alwaysWriter(): Promise<AlwaysWriter | null> {
    if (this.writer || !this.always) return this.writer;
    try {
      this.writer = await this.always();
    } catch {
      return null;
    }
    return this.writer;
  }

  private async approve(outcome: Approval, input: EvaluateInput, call: CallRef, context: DecisionContext): Promise<Verdict> {
    const { workflow, ruleId, policyId } = outcome;
    const grant = grantKey(input);
    if (this.sessionGrants.has(grant)) {
      return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: allowed for this session by an earlier approval`, approvedBy: "session_grant", decidedBy: { channel: "session_grant", scope: "session" } };
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
    const writer = await this.alwaysWriter();
    // The program that serves the tool goes with it: an "always" rule names it (always-allow.ts).
    const asked = { serverId: input.serverId, server: input.server, method: input.method, name: input.name, arguments: input.arguments, annotations: input.annotations, project: this.project };
    const offered = { always: writer !== null && writer.plan(asked) === null };
    const approved = (how: string, scope: DecisionScope): Verdict => ({ action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: ${how}`, approvedBy: "elicitation", decidedBy: { channel: "elicitation", scope } });
    try {
      const prompt = approvalPrompt({ ...input, ruleId }, outcome.reason, { readExisting: this.readExisting });
      const answer = await context.elicit(prompt, AbortSignal.any([context.signal, timeout]), "call", offered);
      if (answer.kind === "approved") {
        if (answer.scope === "once") return approved("approved", "once");
        if (answer.scope === "session") {
          // This tool on this server, any arguments, until the shim stops (a standalone shim is its own session).
          this.sessionGrants.add(grant);
          return approved("approved for this session", "session");
        }
        const written = writer ? await writer.write({ id: call.correlationId, ...asked }, { alwaysScope: answer.alwaysScope, by: "in the agent's prompt" }) : { ok: false as const, reason: "this shim cannot write a policy rule" };
        // The person's yes covers this call whatever happened to the rule; the outcome says which.
        return written.ok ? approved(written.note, "always") : approved(`approved once (always allow was not possible: ${written.reason})`, "once");
      }
      if (answer.kind === "declined") return { ...block(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: rejected by the person in the agent's prompt`), decidedBy: { channel: "elicitation" } };
      // Esc at a person's pace (an agent answering its own form answers faster: outcomeOf makes
      // that "unanswered"): the person's no, as under wrap.
      if (answer.kind === "dismissed") return { ...block(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: refused by the person: they dismissed the agent's prompt (Esc)`), decidedBy: { channel: "elicitation" } };
      // The agent answered for no one (it cannot show the question): no other channel here.
      return block(
        GOVERNANCE_ERROR.approvalRejected,
        `${outcome.reason}, but no person answered: the agent answered the approval form itself (it cannot show it in this mode); run under \`thoughtgate wrap\` for the approvals page and \`thoughtgate approve\``,
      );
    } catch {
      if (!timeout.aborted) return block(GOVERNANCE_ERROR.taskCancelled, `${outcome.reason}: cancelled`);
      if (workflow.on_timeout === "approve") {
        return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: no answer in ${workflow.timeout} ms, approved by on_timeout`, approvedBy: "timeout", decidedBy: { channel: "timeout" } };
      }
      return { ...block(GOVERNANCE_ERROR.approvalTimeout, `${outcome.reason}: no answer in ${workflow.timeout} ms; ${ASK_AGAIN}`), decidedBy: { channel: "timeout" } };
    }
  }
}

function grantKey(input: EvaluateInput): string {
  return JSON.stringify([input.serverId, input.method, input.name]);
}
