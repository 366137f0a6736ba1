import type { Stage } from "../../pipeline/stages.ts";
import type { CallTracer } from "../call-trace.ts";
import { endsCall, statusOf, type Answer } from "./answer.ts";

/** trace on the way back: the answer on the request's spans, and a call's spans ended with its status. */
export function traceStage(tracer: Pick<CallTracer, "response"> | undefined): Stage<Answer> {
  return {
    name: "trace",
    response(answer, next) {
      tracer?.response(answer.entry, answer.message);
      if (endsCall(answer)) answer.entry.trace?.end(statusOf(answer.message));
      return next();
    },
  };
}
