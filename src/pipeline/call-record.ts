import { argsHash } from "../core/canonical-json.ts";
import type { JsonRpcId } from "../core/jsonrpc.ts";
import type { Verdict } from "../governance/verdict/decider.ts";
import { ALWAYS_RULE_PREFIX } from "../governance/verdict/always-rule.ts";
import type { CallStatus, DecisionFields, RecordedDecision, EventStream } from "../telemetry/events.ts";
import { recordedArguments } from "../telemetry/recorded-arguments.ts";

/** A call's identity in the record: its `call_id` and the hash of its canonical arguments. */
export type AuditIdentity = { callId: string; argsHash: string };

/** What a front end's protocol adds to a call's `tool_call_start` (docs/events.md). */
export type StartFields = { action?: string; requires_policy?: boolean };

/** What a decision event says, from any front end's verdict (the shim's `Verdict`, the arbiter's gate fields). */
export type Decided = Pick<Verdict, "gate" | "ruleId" | "policyId" | "reason" | "decidedBy" | "personReason"> & {
  would?: string | undefined;
  autoApproved?: boolean | undefined;
  approvedBy?: string | undefined;
};

/**
 * The one writer of a tool call's record (`tool_call_start`, `tool_call_decision`,
 * `tool_call_end`: docs/events.md) for every front end: the shim's audit, the arbiter and the
 * audit stage all write through it, so a call reads the same in `thoughtgate log` whichever way
 * it came.
 */
export class CallRecord {
  constructor(
    private readonly events: Pick<EventStream, "enabled" | "emit">,
    /** Whether the record keeps each call's arguments (redacted) beside their hash: the user's `audit.arguments`. */
    private readonly recordArguments: () => boolean,
  ) {}

  get enabled(): boolean {
    return this.events.enabled;
  }

  /** `tool_call_start`, and the identity the call's later events carry (`callId`: the front end's own, or a new one). */
  start(requestId: JsonRpcId, tool: string, args: unknown, extra: StartFields = {}, callId: string = Bun.randomUUIDv7()): AuditIdentity {
    const identity = { callId, argsHash: argsHash(args) };
    this.events.emit("tool_call_start", {
      call_id: identity.callId,
      request_id: requestId,
      tool,
      args_hash: identity.argsHash,
      ...(this.recordArguments() ? { arguments: recordedArguments(args) } : {}),
      ...extra,
    });
    return identity;
  }

  decision(identity: AuditIdentity, tool: string, fields: DecisionFields): void {
    this.events.emit("tool_call_decision", { call_id: identity.callId, tool, ...fields });
  }

  end(identity: AuditIdentity, tool: string, status: CallStatus, startedAt: number, bytesOut: number): void {
    this.events.emit("tool_call_end", {
      call_id: identity.callId,
      tool,
      args_hash: identity.argsHash,
      status,
      latency_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
      bytes_out: bytesOut,
    });
  }
}

/** A decision event's fields; `reason` as recorded (the shim's is redacted). */
export function decisionFields(decision: RecordedDecision, decided: Decided | null, reason: string): DecisionFields {
  const forward = decision === "forward" && decided !== null;
  return {
    decision,
    gate: decided?.gate ?? null,
    rule_id: decided?.ruleId ?? null,
    policy_id: decided?.policyId ?? null,
    reason,
    ...(forward && decided.would ? { would: decided.would } : {}),
    ...(forward && decided.autoApproved ? { auto_approved: true } : {}),
    ...(forward && decided.approvedBy ? { approved_by: decided.approvedBy } : {}),
    ...decidedByFields(decision, decided),
  };
}

/**
 * `decided_by` and `person_reason` (docs/events.md): who decided a call a person was asked about,
 * and their words. A forward by a rule "always allow" wrote is a person's earlier decision too.
 */
function decidedByFields(decision: RecordedDecision, decided: Decided | null): { decided_by?: { channel: string; who?: string; scope?: string }; person_reason?: string } {
  if (!decided || decision === "pending") return {};
  const always = decision === "forward" && decided.gate === "rules" && decided.ruleId?.startsWith(ALWAYS_RULE_PREFIX);
  const by = decided.decidedBy ?? (always ? { channel: "always_rule" as const, scope: "always" as const } : undefined);
  return { ...(by ? { decided_by: by } : {}), ...(decided.personReason !== undefined ? { person_reason: decided.personReason } : {}) };
}
