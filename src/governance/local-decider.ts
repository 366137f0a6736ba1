import type { Profile } from "../core/profile.ts";
import { targetName, type DecisionContext, type Decider, type Request, type Verdict } from "../shim/decide.ts";
import type { ListKind } from "./visibility.ts";
import { applyProfile, type Block, type EngineDecision, type EvaluateInput } from "./engine.ts";
import { GOVERNANCE_ERROR } from "./errors.ts";
import type { EngineHolder } from "./engine-holder.ts";

/**
 * A shim's own engine (no governance service): the same 4 gates in-process. Approvals can only
 * be asked through the agent (MCP elicitation); with no such channel, an approval fails closed.
 */
export class LocalDecider implements Decider {
  constructor(
    private readonly engines: Pick<EngineHolder, "engine" | "label">,
    private readonly profile: Profile,
  ) {}

  get policy(): string {
    return this.engines.label;
  }

  decide(request: Request, context: DecisionContext): Verdict | Promise<Verdict> {
    const input = toInput(request, context);
    let decision: EngineDecision;
    try {
      decision = this.engines.engine.evaluate(input);
    } catch (error) {
      decision = { kind: "deny", block: { gate: "governance", code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason: `engine error: ${(error as Error).message}` } };
    }
    const outcome = applyProfile(decision, this.profile);
    if (outcome.kind === "forward") {
      const verdict: Verdict = { action: "forward", gate: outcome.gate, ruleId: outcome.ruleId, policyId: outcome.policyId, reason: outcome.reason };
      if (outcome.would) verdict.would = outcome.would;
      if (outcome.autoApproved) verdict.autoApproved = true;
      return verdict;
    }
    if (outcome.kind === "deny") return denied(outcome.block, input, request);
    return this.approve(outcome, input, request, context.signal, context);
  }

  filterList(serverId: string, kind: ListKind, names: string[]): string[] {
    return this.engines.engine.visibility.filter(serverId, kind, names);
  }

  private async approve(
    outcome: Extract<EngineDecision, { kind: "approve" }>,
    input: EvaluateInput,
    request: Request,
    signal: AbortSignal,
    context: DecisionContext,
  ): Promise<Verdict> {
    const { workflow, ruleId, policyId } = outcome;
    const block = (code: number, reason: string): Verdict => denied({ gate: "approval", code, ruleId, policyId, reason }, input, request);
    const destination = workflow.destination.type;
    if (!context.elicit || (destination !== "any" && destination !== "elicitation")) {
      return block(
        GOVERNANCE_ERROR.approvalRejected,
        `${outcome.reason}, but no approval channel is available (the agent did not declare MCP elicitation; run under \`thoughtgate wrap\` or with a governance service for the web page and \`thoughtgate approve\`)`,
      );
    }
    context.awaitingApproval(`${outcome.reason}: asking the user through the agent`);
    const timeout = AbortSignal.timeout(workflow.timeout);
    try {
      const approved = await context.elicit(approvalPrompt(input, outcome.reason), AbortSignal.any([signal, timeout]));
      if (approved) return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: approved`, approvedBy: "elicitation" };
      return block(GOVERNANCE_ERROR.approvalRejected, `${outcome.reason}: rejected by the user`);
    } catch {
      if (!timeout.aborted) return block(GOVERNANCE_ERROR.taskCancelled, `${outcome.reason}: cancelled`);
      if (workflow.on_timeout === "approve") {
        return { action: "forward", gate: "approval", ruleId, policyId, reason: `${outcome.reason}: no answer in ${workflow.timeout} ms, approved by on_timeout`, approvedBy: "timeout" };
      }
      return block(GOVERNANCE_ERROR.approvalTimeout, `${outcome.reason}: no answer in ${workflow.timeout} ms`);
    }
  }
}

export function toInput(request: Request, context: DecisionContext): EvaluateInput {
  const params = (request.params ?? {}) as { arguments?: unknown };
  const input: EvaluateInput = {
    serverId: context.serverId,
    method: request.method,
    name: targetName(request),
    arguments: request.method === "tools/call" ? (params.arguments ?? {}) : request.params,
  };
  if (context.annotations) input.annotations = context.annotations;
  return input;
}

/** The JSON-RPC error a blocked call gets: the gate's code and `{gate, tool, server_id, correlation_id, reason}`. */
export function denied(block: Block, input: EvaluateInput, request: Request): Verdict {
  return {
    action: "deny",
    gate: block.gate,
    ruleId: block.ruleId,
    policyId: block.policyId,
    reason: block.reason,
    error: {
      code: block.code,
      message: `ThoughtGate blocked ${input.method} ${input.name}: ${block.reason}`,
      data: { gate: block.gate, tool: input.name, server_id: input.serverId, correlation_id: String(request.id), reason: block.reason, rule_id: block.ruleId, policy_id: block.policyId },
    },
  };
}

/** What the human is asked: which server, which tool, with which arguments (truncated), and why. */
export function approvalPrompt(input: EvaluateInput, reason: string): string {
  const args = JSON.stringify(input.arguments ?? {});
  const shown = args.length > 500 ? `${args.slice(0, 500)}…` : args;
  return `Allow ${input.serverId}.${input.name} with ${shown}? (${reason})`;
}
