import type { Gate } from "./errors.ts";

/**
 * The JSON-RPC error an agent receives for a denied call: the gate's code (kept from the original
 * ThoughtGate) and `data` `{gate, tool, server_id, correlation_id, reason}` plus the rule and policy.
 * Worded like the in-process shim's (`local-decider.ts`), so an agent sees the same either way.
 */
export type DenyError = {
  code: number;
  message: string;
  data: { gate: Gate; tool: string; server_id: string; correlation_id: string; reason: string; rule_id: string | null; policy_id: string | null };
};

export function denyError(
  block: { code: number; gate: Gate; reason: string; ruleId: string | null; policyId: string | null },
  call: { serverId: string; method: string; name: string; correlationId: string },
): DenyError {
  return {
    code: block.code,
    message: `ThoughtGate blocked ${call.method} ${call.name}: ${block.reason}`,
    data: {
      gate: block.gate,
      tool: call.name,
      server_id: call.serverId,
      correlation_id: call.correlationId,
      reason: block.reason,
      rule_id: block.ruleId,
      policy_id: block.policyId,
    },
  };
}
