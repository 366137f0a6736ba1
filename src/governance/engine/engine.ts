import { userInfo } from "node:os";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "../../core/config/defaults.ts";
import type { ThoughtGateConfig, Workflow } from "../../core/config/schema.ts";
import type { Profile } from "../../core/profile.ts";
import { messageOf } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import { placeOf, type Place } from "../../core/project.ts";
import type { CedarPolicies } from "./cedar.ts";
import type { EvaluateInput } from "../verdict/decider.ts";
import type { PinSettings } from "../verdict/definition-acceptance.ts";
import type { Block } from "../verdict/deny-error.ts";
import { GOVERNANCE_ERROR, type Gate } from "../verdict/errors.ts";
import { Rules, type Candidate, type RuleMatch } from "./rules.ts";
import { secretScanOf, type SecretScanPolicy } from "../verdict/secret-policy.ts";
import { listKindOf, Visibility, type ListVisibility } from "./visibility.ts";
import { unreadableShell } from "../verdict/agent-tools.ts";
import { selfProtectionRules } from "./default-policy.ts";

export type { EvaluateInput };

/** What the gates say, before the profile is applied. */
export type EngineDecision =
  | { kind: "forward"; gate: Gate; ruleId: string | null; policyId: string | null; reason: string }
  | { kind: "deny"; block: Block }
  | {
      kind: "approve";
      ruleId: string | null;
      policyId: string | null;
      reason: string;
      workflowName: string;
      workflow: Workflow;
    };

/** A rule `action: approve` naming no workflow gets this one (every channel, 15 min, deny on timeout). */
export const DEFAULT_WORKFLOW: Workflow = { destination: { type: "any" }, timeout: DEFAULT_APPROVAL_TIMEOUT_MS, on_timeout: "deny" };

/**
 * What every front end decides with (through `decideSafely`) and filters lists with: one
 * `GovernanceEngine`, or `StrictestOf` two of them (the user's policy restricted by a project's).
 */
export interface PolicyEngine {
  evaluate(input: EvaluateInput): EngineDecision;
  readonly visibility: ListVisibility;
  /** How a server's definitions are pinned (docs/governance.md, "Pinned definitions"). */
  pins(serverId: string): PinSettings;
  /** How results from this server are scanned for secrets (secret-policy.ts). */
  secretScan(serverId: string): SecretScanPolicy;
  /** Whether the audit records calls' arguments (redacted) beside their hash (`audit.arguments`). */
  auditArguments(): boolean;
}

/**
 * The 4-gate engine (docs/architecture.md, decision 4): Visibility → Rules → Cedar → Approval. Pure apart from
 * reading the clock for Cedar's context: the same input and config give the same decision.
 */
export class GovernanceEngine implements PolicyEngine {
  readonly visibility: Visibility;
  private readonly rules: Rules;
  private readonly ruleDecisions = new Map<RuleMatch, EngineDecision>();

  constructor(
    readonly config: ThoughtGateConfig,
    readonly cedar: CedarPolicies | null,
    readonly origin: string,
    private readonly user = currentUser(),
  ) {
    this.visibility = new Visibility(config);
    // The agent may not rewrite what governs it, whatever the policy file says (default-policy.ts).
    this.rules = new Rules(config, selfProtectionRules(process.env, process.cwd()));
  }

  /**
   * Build from a config, loading (and validating) its Cedar policies. Throws CONFIG errors. Cedar's
   * wasm (tens of MB, docs/benchmarks.md) is loaded only when the config has policies.
   */
  static async fromConfig(config: ThoughtGateConfig, origin: string): Promise<GovernanceEngine> {
    const cedar = config.cedar ? (await import("./cedar.ts")).CedarPolicies.load(config.cedar) : null;
    return new GovernanceEngine(config, cedar, origin);
  }

  secretScan(serverId: string): SecretScanPolicy {
    return secretScanOf(this.config.secrets, serverId);
  }

  auditArguments(): boolean {
    return this.config.audit?.arguments !== "hash";
  }

  evaluate(input: EvaluateInput): EngineDecision {
    const kind = listKindOf(input.method);
    if (kind && !this.visibility.isVisible(input.serverId, kind, input.name)) {
      return deny("visibility", GOVERNANCE_ERROR.toolNotExposed, null, null, `${kind.slice(0, -1)} "${input.name}" is not exposed by source "${input.serverId}"`);
    }
    const place = input.place ?? defaultPlace();
    const rule = this.rules.match(input, place);
    const hints = rule.readsAnnotations ? hintNote(input) : "";
    // A shell line the parser could not read cannot be judged command by command: whatever would
    // let it through asks a person instead (docs/governance.md, "Built-in tools").
    const unreadable = rule.action === "forward" || rule.action === "policy" ? unreadableShell(input) : null;
    if (unreadable !== null) return this.approval(rule.ruleId, null, rule.approval, `rule ${rule.ruleId} would allow it, but the shell command cannot be read (${unreadable}): a person decides`);
    switch (rule.action) {
      case "forward":
      case "deny":
        return hints === "" ? this.ruleDecision(rule) : withNote(this.ruleDecision(rule), hints);
      case "approve":
        return this.approval(rule.ruleId, null, rule.approval, `rule ${rule.ruleId}: approval required${hints}`);
      case "policy":
        return this.policy(input, place, rule.ruleId, rule.policyId, rule.approval);
    }
  }

  /** The rules that may decide this tool's calls (rules.ts, `whatDecides`), for `validate-config --explain`. */
  whatDecides(input: Omit<EvaluateInput, "arguments">): Candidate[] {
    return this.rules.whatDecides({ serverId: input.serverId, method: input.method, name: input.name, annotations: input.annotations, place: input.place ?? defaultPlace(), server: input.server });
  }

  pins(serverId: string): PinSettings {
    const { mode, block_severity, approval } = this.config.pins;
    const source = this.config.sources.find((s) => s.id === serverId);
    const workflow = approval === undefined ? DEFAULT_WORKFLOW : (this.config.approval[approval] ?? DEFAULT_WORKFLOW);
    return { mode: source?.pin ?? mode, blockSeverity: block_severity, workflowName: approval ?? "default", workflow };
  }

  /**
   * A rule that forwards or denies decides the same every time: its decision is built once, frozen
   * and shared, not rebuilt with its reason per call.
   */
  private ruleDecision(rule: RuleMatch): EngineDecision {
    let decision = this.ruleDecisions.get(rule);
    if (!decision) {
      decision =
        rule.action === "forward"
          ? { kind: "forward", gate: "rules", ruleId: rule.ruleId, policyId: null, reason: `rule ${rule.ruleId}: forward` }
          : deny("rules", GOVERNANCE_ERROR.ruleDenied, rule.ruleId, null, `rule ${rule.ruleId}: deny`);
      // Frozen: shared by every call the rule decides, and the mark a caller may cache on.
      Object.freeze(decision);
      this.ruleDecisions.set(rule, decision);
    }
    return decision;
  }

  private policy(input: EvaluateInput, place: Place, ruleId: string, policyId: string | null, approval: string | null): EngineDecision {
    if (!this.cedar) {
      return deny("cedar", GOVERNANCE_ERROR.policyDenied, ruleId, policyId, "no Cedar policies are loaded");
    }
    const verdict = this.cedar.evaluate({
      user: this.user,
      serverId: input.serverId,
      method: input.method,
      name: input.name,
      arguments: input.arguments,
      policyId,
      project: place.project,
      cwd: place.cwd,
    });
    if (verdict.decision === "error") {
      return deny("cedar", GOVERNANCE_ERROR.policyDenied, ruleId, policyId, `Cedar error (failing closed): ${verdict.reason}`);
    }
    const determining = verdict.policies.join(", ") || null;
    if (verdict.decision === "deny") {
      return deny("cedar", GOVERNANCE_ERROR.policyDenied, ruleId, determining, determining ? `forbidden by Cedar policy ${determining}` : "no Cedar policy permits it");
    }
    if (approval !== null) return this.approval(ruleId, determining, approval, `permitted by Cedar policy ${determining}; approval required`);
    return { kind: "forward", gate: "cedar", ruleId, policyId: determining, reason: `permitted by Cedar policy ${determining}` };
  }

  private approval(ruleId: string, policyId: string | null, name: string | null, reason: string): EngineDecision {
    const workflow = name === null ? DEFAULT_WORKFLOW : this.config.approval[name];
    // The config schema guarantees named workflows exist; a missing one must still fail closed.
    if (!workflow) return deny("approval", GOVERNANCE_ERROR.approvalRejected, ruleId, policyId, `no approval workflow "${name}"`);
    return { kind: "approve", ruleId, policyId, reason, workflowName: name ?? "default", workflow };
  }
}

/**
 * Where the annotations a rule matched on came from, when that is not plain: the tool declared
 * none (MCP's defaults then count it as not read-only and destructive), or they are ThoughtGate's
 * catalog hint for that exact definition. Said in the reason, so the record and the prompt name it.
 */
function hintNote(input: EvaluateInput): string {
  if (input.method !== "tools/call") return "";
  if (input.annotations === undefined) return "; the tool declares no annotations, so MCP's defaults apply: not read-only, destructive";
  return input.annotationSource ? `; annotations from ${input.annotationSource}` : "";
}

function withNote(decision: EngineDecision, note: string): EngineDecision {
  if (decision.kind === "deny") return { kind: "deny", block: { ...decision.block, reason: `${decision.block.reason}${note}` } };
  return { ...decision, reason: `${decision.reason}${note}` };
}

let processPlace: Place | null = null;

/** The place of a call that came without one (the arbiter, an older shim): this process's working directory. */
function defaultPlace(): Place {
  processPlace ??= placeOf(process.cwd());
  return processPlace;
}

function deny(gate: Gate, code: number, ruleId: string | null, policyId: string | null, reason: string): EngineDecision {
  return { kind: "deny", block: { gate, code, ruleId, policyId, reason } };
}

/**
 * The profile's effect: `production` enforces; `development` forwards what it would have blocked
 * (`WOULD_BLOCK`) and auto-approves what needed approval (`WOULD_REQUIRE_APPROVAL`).
 */
export type Outcome =
  | { kind: "forward"; gate: Gate | null; ruleId: string | null; policyId: string | null; reason: string; would?: "WOULD_BLOCK" | "WOULD_REQUIRE_APPROVAL"; autoApproved?: boolean }
  | { kind: "deny"; block: Block }
  | Extract<EngineDecision, { kind: "approve" }>;

export function applyProfile(decision: EngineDecision, profile: Profile): Outcome {
  if (profile === "production" || decision.kind === "forward") return decision;
  if (decision.kind === "deny") {
    const { gate, ruleId, policyId, reason } = decision.block;
    return { kind: "forward", gate, ruleId, policyId, reason: `WOULD_BLOCK: ${reason}`, would: "WOULD_BLOCK" };
  }
  return {
    kind: "forward",
    gate: "approval",
    ruleId: decision.ruleId,
    policyId: decision.policyId,
    reason: `WOULD_REQUIRE_APPROVAL: ${decision.reason}`,
    would: "WOULD_REQUIRE_APPROVAL",
    autoApproved: true,
  };
}

/**
 * Every front end's decision: the engine's gates, then the profile. An engine that throws is a deny
 * from the governance gate (docs/architecture.md, decision 3), with the profile applied like any other.
 */
export function decideSafely(engine: Pick<PolicyEngine, "evaluate">, input: EvaluateInput, profile: Profile): Outcome {
  let decision: EngineDecision;
  try {
    decision = engine.evaluate(input);
  } catch (error) {
    log.error(`governance engine failed (denying, fail closed): ${messageOf(error)}`);
    decision = deny("governance", GOVERNANCE_ERROR.serviceUnavailable, null, null, `governance engine failed: ${messageOf(error)}`);
  }
  return applyProfile(decision, profile);
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? "unknown";
  }
}

