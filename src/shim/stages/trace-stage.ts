import type { Stage } from "../../pipeline/stages.ts";
import type { CallTracer } from "../call-trace.ts";
import { endsCall, statusOf, type Answer } from "./answer.ts";
import { verdictOf, type DecidedRequest } from "./governed-request.ts";

/**
 * trace: on the way in, the decision on the request's span and, for a forward, the server's copy
 * of the request with the span's context in `_meta` (added after the gates decided on the request
 * as the agent sent it: call-trace.ts), and a refused call's spans ended once its error went out;
 * on the way back, the answer on the request's spans, and a call's spans ended with its status.
 */
export function traceStage<R extends DecidedRequest = DecidedRequest>(tracer: Pick<CallTracer, "response"> | undefined): Stage<R, Answer> {
  return {
    name: "trace",
    request(decided, next) {
      const trace = decided.entry.trace;
      const verdict = verdictOf(decided);
      trace?.decided(verdict);
      if (trace && verdict.action === "forward") decided.bytes = trace.forwarded(decided.bytes);
      next(decided);
      if (decided.answeredBytes !== undefined) trace?.end("denied");
    },
    response(answer, next) {
      tracer?.response(answer.entry, answer.message);
      if (endsCall(answer)) answer.entry.trace?.end(statusOf(answer.message));
      return next(answer);
    },
  };
}
