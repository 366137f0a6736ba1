import type { ListKind } from "../verdict/decider.ts";
import type { PinSettings } from "../verdict/definition-acceptance.ts";
import { GOVERNANCE_ERROR } from "../verdict/errors.ts";
import { SCAN_EVERYTHING, type SecretScanPolicy } from "../verdict/secret-policy.ts";
import { DEFAULT_WORKFLOW, type EngineDecision, type EvaluateInput, type PolicyEngine } from "./engine.ts";
import type { ListVisibility } from "./visibility.ts";

/**
 * A policy that could not be had (the organisation's, refused: organisation.ts), standing where it
 * would have decided: every governed call is denied with the reason, as governance that is
 * unavailable (-32013, docs/architecture.md, decision 3). Lists are left whole, so the agent sees
 * its tools and the reason on each call rather than tools that silently vanished; definitions are
 * pinned strictly and results scanned, the strictest settings there are.
 */
export class FailClosed implements PolicyEngine {
  readonly visibility: ListVisibility = {
    isVisible: () => true,
    filter: (_serverId: string, _kind: ListKind, names: string[]) => names,
  };

  constructor(readonly reason: string) {}

  evaluate(_input: EvaluateInput): EngineDecision {
    return { kind: "deny", block: { gate: "governance", code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason: this.reason } };
  }

  pins(_serverId: string): PinSettings {
    return { mode: "strict", blockSeverity: "low", workflowName: "default", workflow: DEFAULT_WORKFLOW };
  }

  secretScan(_serverId: string): SecretScanPolicy {
    return SCAN_EVERYTHING;
  }

  /** The record keeps each call's arguments as a person is shown them (the default, docs/events.md). */
  auditArguments(): boolean {
    return true;
  }
}
