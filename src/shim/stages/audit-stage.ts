import type { Stage } from "../../pipeline/stages.ts";
import type { CallAudit } from "../call-audit.ts";
import { endsCall, statusOf, type Answer } from "./answer.ts";

/** audit on the way back: a call's `tool_call_end`, with its status and the bytes the agent gets (after secrets). */
export function auditStage(audit: Pick<CallAudit, "recordEnd">): Stage<Answer> {
  return {
    name: "audit",
    response(answer, next) {
      if (endsCall(answer)) audit.recordEnd(answer.entry, statusOf(answer.message), answer.bytes.length);
      return next();
    },
  };
}
