import type { Workflow } from "../../core/config/schema.ts";
import { SEVERITIES } from "../../core/severity.ts";
import type { PinSettings } from "../verdict/definition-acceptance.ts";
import type { EngineDecision, EvaluateInput, PolicyEngine } from "./engine.ts";
import { GOVERNANCE_ERROR } from "../verdict/errors.ts";
import { stricterScan, type SecretScanPolicy } from "../verdict/secret-policy.ts";
import type { ListKind } from "../verdict/decider.ts";
import type { ListVisibility } from "./visibility.ts";

type Approval = Extract<EngineDecision, { kind: "approve" }>;
type Destination = Workflow["destination"];

/**
 * Two policies in force at once, the stricter winning gate by gate: the user's policy (or the
 * embedded default) as `base`, a project's `thoughtgate.yaml` as `restriction`
 * (docs/governance.md, "Where the policy comes from"). A repository's policy may only add
 * restrictions, so:
 * - visibility: a tool, prompt or resource is visible only when both show it;
 * - rules, Cedar, approval: deny beats approval beats forward; when both ask for approval, the
 *   stricter workflow (the shorter timeout, `on_timeout: deny` over `approve`, and a channel both
 *   allow);
 * - secret scanning: scanned when either scans, each kind the stricter way (secret-policy.ts).
 * Nothing the restriction says can turn a deny or an approval of the base into a forward. When the
 * base decides, its decision is reported as it is; a decision of the restriction says so in its
 * reason ("project policy: rule x: deny"). Pure, like the engines it combines.
 */
export class StrictestOf implements PolicyEngine {
  readonly visibility: ListVisibility;

  constructor(
    readonly base: PolicyEngine,
    readonly restriction: PolicyEngine,
    private readonly restrictionName = "project policy",
  ) {
    const isVisible = (serverId: string, kind: ListKind, name: string) =>
      base.visibility.isVisible(serverId, kind, name) && restriction.visibility.isVisible(serverId, kind, name);
    this.visibility = { isVisible, filter: (serverId, kind, names) => names.filter((name) => isVisible(serverId, kind, name)) };
  }

  evaluate(input: EvaluateInput): EngineDecision {
    const first = this.base.evaluate(input);
    // Nothing is stricter than a deny: the restriction need not be asked (nor its Cedar policies run).
    if (first.kind === "deny") return first;
    const second = this.restriction.evaluate(input);
    if (second.kind === "deny") return { kind: "deny", block: { ...second.block, reason: this.attributed(second.block.reason) } };
    if (second.kind === "forward") return first;
    if (first.kind === "forward") return { ...second, reason: this.attributed(second.reason) };
    return this.bothApprove(first, second);
  }

  /** Pinning: the stricter mode (strict, warn, off), the lower severity that hides, the stricter workflow. */
  pins(serverId: string): PinSettings {
    const a = this.base.pins(serverId);
    const b = this.restriction.pins(serverId);
    const modes = ["off", "warn", "strict"] as const;
    const threshold = (s: PinSettings["blockSeverity"]) => (s === "none" ? SEVERITIES.length : SEVERITIES.indexOf(s));
    return {
      mode: modes[Math.max(modes.indexOf(a.mode), modes.indexOf(b.mode))] ?? "strict",
      blockSeverity: threshold(b.blockSeverity) < threshold(a.blockSeverity) ? b.blockSeverity : a.blockSeverity,
      workflowName: a.workflowName === b.workflowName ? a.workflowName : `${a.workflowName} + ${this.restrictionName} ${b.workflowName}`,
      workflow: {
        destination: narrower(a.workflow.destination, b.workflow.destination) ?? a.workflow.destination,
        timeout: Math.min(a.workflow.timeout, b.workflow.timeout),
        on_timeout: a.workflow.on_timeout === "deny" || b.workflow.on_timeout === "deny" ? "deny" : "approve",
      },
    };
  }

  secretScan(serverId: string): SecretScanPolicy {
    return stricterScan(this.base.secretScan(serverId), this.restriction.secretScan(serverId));
  }

  /**
   * The user's own setting only: a project's policy (a cloned repository's) must not be able to
   * take the arguments out of the user's record of what the agent did there.
   */
  auditArguments(): boolean {
    return this.base.auditArguments();
  }

  private bothApprove(first: Approval, second: Approval): EngineDecision {
    const reason = `${first.reason}; ${this.attributed(second.reason)}`;
    const destination = narrower(first.workflow.destination, second.workflow.destination);
    if (!destination) {
      const block = {
        gate: "approval" as const,
        code: GOVERNANCE_ERROR.approvalRejected,
        ruleId: first.ruleId,
        policyId: first.policyId,
        reason: `${reason}, but one asks only by ${first.workflow.destination.type} and the other only by ${second.workflow.destination.type}: no approval channel satisfies both`,
      };
      return { kind: "deny", block };
    }
    const workflow: Workflow = {
      destination,
      timeout: Math.min(first.workflow.timeout, second.workflow.timeout),
      on_timeout: first.workflow.on_timeout === "deny" || second.workflow.on_timeout === "deny" ? "deny" : "approve",
    };
    const workflowName = first.workflowName === second.workflowName ? first.workflowName : `${first.workflowName} + ${this.restrictionName} ${second.workflowName}`;
    return { kind: "approve", ruleId: first.ruleId, policyId: first.policyId ?? second.policyId, reason, workflowName, workflow };
  }

  private attributed(reason: string): string {
    return `${this.restrictionName}: ${reason}`;
  }
}

/** The channel both workflows allow: `any` yields to the other; two different single channels have none. */
function narrower(a: Destination, b: Destination): Destination | null {
  if (a.type === "any") return b;
  if (b.type === "any" || a.type === b.type) return a;
  return null;
}
