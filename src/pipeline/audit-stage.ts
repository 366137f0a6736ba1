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
      if (record.enabled) {
        const identity = opened(record, call);
        const verdict = call.verdict;
        const reason = redactText(verdict?.reason ?? "no decision was reached");
        record.decision(identity, targetName(call.request), decisionFields(verdict?.action ?? "deny", verdict ?? null, reason));
      }
      return next();
    },
    response(call, next) {
      if (record.enabled && call.status) record.end(opened(record, call), targetName(call.request), call.status, call.startedAt, call.bytesOut ?? 0);
      return next();
    },
  };
}

function opened(record: CallRecord, call: Call) {
  call.audit ??= record.start(call.id, targetName(call.request), (call.request.params as { arguments?: unknown } | undefined)?.arguments);
  return call.audit;
}
