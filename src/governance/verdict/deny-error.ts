import type { CallRef, Verdict } from "./decider.ts";
import type { Gate } from "./errors.ts";

/** Why a gate stopped a call: its JSON-RPC error code, the rule and Cedar policy that decided, and why. */
export type Block = { gate: Gate; code: number; ruleId: string | null; policyId: string | null; reason: string };

/**
 * The JSON-RPC error an agent receives for a denied call, whichever path decided it (the shim's own
 * engine, the governance service, an approval that was refused, governance unavailable): the gate's
 * code (kept from the original ThoughtGate) and `data` `{gate, tool, server_id, correlation_id,
 * reason, rule_id, policy_id}`, plus `task_id` when an approval task was involved, and
 * `person_reason` when the person who said no gave their reason: it ends the message too, so the
 * model reads it (docs/events.md, `person_reason`).
 */
export type DenyError = {
  code: number;
  message: string;
  data: {
    gate: Gate;
    tool: string;
    server_id: string;
    correlation_id: string;
    reason: string;
    rule_id: string | null;
    policy_id: string | null;
    task_id?: string;
    person_reason?: string;
  };
};

/** `personReason`: the person's own words, already redacted and escaped (tasks.ts, `personWords`). */
export function denyError(block: Block, call: CallRef, taskId?: string, personReason?: string): DenyError {
  const said = personReason !== undefined ? `; the person said: "${personReason}"` : "";
  return {
    code: block.code,
    message: `ThoughtGate blocked ${call.method} ${call.name}: ${block.reason}${said}`,
    data: {
      gate: block.gate,
      tool: call.name,
      server_id: call.serverId,
      correlation_id: call.correlationId,
      reason: block.reason,
      rule_id: block.ruleId,
      policy_id: block.policyId,
      ...(taskId !== undefined ? { task_id: taskId } : {}),
      ...(personReason !== undefined ? { person_reason: personReason } : {}),
    },
  };
}

/** A deny verdict carrying the one deny error. */
export function deniedVerdict(block: Block, call: CallRef, taskId?: string, personReason?: string): Verdict {
  return {
    action: "deny",
    gate: block.gate,
    ruleId: block.ruleId,
    policyId: block.policyId,
    reason: block.reason,
    error: denyError(block, call, taskId, personReason),
    ...(personReason !== undefined ? { personReason } : {}),
  };
}
