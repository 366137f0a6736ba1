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
  /** A tool (prompt, resource template) whose definition changed since it was pinned, or was flagged: not accepted by a person yet. */
  definitionChanged: -32011,
  serviceUnavailable: -32013,
  ruleDenied: -32014,
  toolNotExposed: -32015,
} as const;

const GATES = ["visibility", "rules", "cedar", "approval", "governance", "definitions"] as const;
export type Gate = (typeof GATES)[number];

export function isGate(value: unknown): value is Gate {
  return (GATES as readonly unknown[]).includes(value);
}

/**
 * What the agent is told after a wait for a person ran out, after what ran out: nothing was done,
 * and calling the tool again asks the person again (the model can tell them, or retry when asked).
 */
export const ASK_AGAIN = "the call was not made; the person may not have seen the question in time: call the tool again to ask them again";
