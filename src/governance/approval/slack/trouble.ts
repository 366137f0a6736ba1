import { log } from "../../../core/log.ts";
import type { GovernanceMetrics } from "../../../telemetry/metrics.ts";
import type { SlackFailure } from "./web-api.ts";

/** What a waiting call can still count on when Slack fails. */
const OTHER_CHANNELS = "calls waiting for approval can still be decided on the approvals page, with `thoughtgate approve|deny` or through the agent, else their workflow's timeout and on_timeout apply";

/**
 * Slack failures: every one is counted (`thoughtgate_slack_errors_total`), and each kind is logged
 * once per Slack destination until Slack answers again (an outage during a busy session is one
 * line, not one per call and retry). The recovery is logged too.
 */
export class SlackTrouble {
  /** Per destination label: the error codes already logged. */
  private readonly logged = new Map<string, Set<string>>();

  constructor(private readonly metrics: GovernanceMetrics) {}

  failed(where: string, method: string, failure: SlackFailure): void {
    this.metrics.countSlackError(method, failure.code);
    const seen = this.logged.get(where) ?? new Set<string>();
    this.logged.set(where, seen);
    if (seen.has(failure.code)) {
      log.debug(`Slack approvals (${where}): ${failure.detail}`);
      return;
    }
    seen.add(failure.code);
    log.error(`Slack approvals (${where}): ${failure.detail}; ${consequence(failure)}`);
  }

  /** A call succeeded: the next failure is news again. */
  recovered(where: string): void {
    const seen = this.logged.get(where);
    if (!seen || seen.size === 0) return;
    this.logged.delete(where);
    log.info(`Slack approvals (${where}): Slack answers again`);
  }
}

function consequence(failure: SlackFailure): string {
  switch (failure.kind) {
    case "auth":
      return `Slack approvals through this app are off until the token is replaced in the policy (a reload picks it up); ${OTHER_CHANNELS}`;
    case "rate_limited":
      return `waiting as Slack asked, then retrying; ${OTHER_CHANNELS}`;
    case "transient":
      return `retrying while the call waits; ${OTHER_CHANNELS}`;
    default:
      return `not retried (check the channel, the app's scopes and that the app is in the channel); ${OTHER_CHANNELS}`;
  }
}
