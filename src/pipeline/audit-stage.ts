import { targetName } from "../governance/verdict/decider.ts";
import { redactText } from "../telemetry/redact.ts";
import type { Call } from "./call.ts";
import { decisionFields, type CallRecord } from "./call-record.ts";
import type { Stage } from "./stages.ts";

/**
 * audit: the call's record. On the way in, its `tool_call_start` (once) and the decision the
 * stages before it reached; on the way back, `tool_call_end` with the status and the bytes the
 * agent got (a denied call too: the forward stage set its status when it answered). A call with no verdict
 * reached this stage undecided: recorded as the deny the forward stage will answer with (a
 * governance doubt fails closed, docs/architecture.md decision 3).
 */
export function auditStage(record: CallRecord): Stage {
  return {
    name: "audit",
    request(call, next) {
      // A call that ended before it was decided (withdrawn while it waited) has no decision to record, only its end.
      if (record.enabled && call.status === undefined) {
        const identity = opened(record, call);
        const verdict = call.verdict;
        const reason = redactText(verdict?.reason ?? "no decision was reached");
        record.decision(identity, targetName(call.request), decisionFields(verdict?.action ?? "deny", verdict ?? null, reason));
      }
      return next(call);
    },
    response(call, next) {
      if (record.enabled && call.status) record.end(opened(record, call), targetName(call.request), call.status, call.startedAt, call.bytesOut ?? 0);
      return next(call);
    },
  };
}

/**
 * The call now waits for a person (the decider's `awaitingApproval`): its start, and a `pending`
 * decision, so what waits is in the record while it waits. The audit stage writes the decision
 * that ends the wait.
 */
export function recordPending(record: CallRecord, call: Call, reason: string): void {
  if (record.enabled) record.decision(opened(record, call), targetName(call.request), decisionFields("pending", null, redactText(reason)));
}

function opened(record: CallRecord, call: Call) {
  call.audit ??= record.start(call.id, targetName(call.request), (call.request.params as { arguments?: unknown } | undefined)?.arguments, call.startFields, call.recordCallId);
  return call.audit;
}
