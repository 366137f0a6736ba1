import type { Stage } from "../../pipeline/stages.ts";
import type { CallAudit } from "../call-audit.ts";
import { endsCall, statusOf, type Answer } from "./answer.ts";
import { verdictOf, type DecidedRequest } from "./governed-request.ts";

/**
 * audit: on the way in, a governed request's decision (and, for a call the forward refused, its
 * `tool_call_end` once the error went out); on the way back, a call's `tool_call_end` with its
 * status and the bytes the agent gets (after secrets).
 */
export function auditStage<R extends DecidedRequest = DecidedRequest>(audit: Pick<CallAudit, "recordEnd" | "decision">): Stage<R, Answer> {
  return {
    name: "audit",
    request(decided, next) {
      audit.decision(decided.entry, verdictOf(decided), decided.request);
      next(decided);
      if (decided.answeredBytes !== undefined) audit.recordEnd(decided.entry, "denied", decided.answeredBytes);
    },
    response(answer, next) {
      if (endsCall(answer)) audit.recordEnd(answer.entry, statusOf(answer.message), answer.bytes.length);
      return next(answer);
    },
  };
}
