/**
 * JSON-RPC error codes of the governance gates (kept from the original ThoughtGate so clients
 * that know them keep working). `error.data` is `{gate, tool, server_id, correlation_id, reason}`.
 */
export const GOVERNANCE_ERROR = {
  policyDenied: -32003,
  taskExpired: -32005,
  taskCancelled: -32006,
  approvalRejected: -32007,
  approvalTimeout: -32008,
  policyDrift: -32011,
  serviceUnavailable: -32013,
  ruleDenied: -32014,
  toolNotExposed: -32015,
} as const;

export const GATES = ["visibility", "rules", "cedar", "approval", "governance"] as const;
export type Gate = (typeof GATES)[number];

export function isGate(value: unknown): value is Gate {
  return (GATES as readonly unknown[]).includes(value);
}
