import { errorResponse } from "../../core/jsonrpc.ts";
import type { Stage } from "../../pipeline/stages.ts";
import type { Sink } from "../../stdio/line-sink.ts";
import type { PendingRequest } from "../request-tracker.ts";
import { verdictOf, type DecidedRequest } from "./governed-request.ts";

/**
 * forward, last on the way in: a request let through goes to the server (tracked for its answer);
 * a refused one is answered with the deny's error and reaches no one, and the stages before it
 * end the call on their way out (`answeredBytes`).
 */
export function forwardStage<R extends DecidedRequest = DecidedRequest>(send: (entry: PendingRequest, bytes: Uint8Array) => void, toAgent: Pick<Sink, "sendText">): Stage<R, never> {
  return {
    name: "forward",
    request(decided, next) {
      const { entry } = decided;
      const verdict = verdictOf(decided);
      if (verdict.action === "forward") {
        send(entry, decided.bytes);
      } else {
        const line = errorResponse(entry.id, verdict.error.code, verdict.error.message, verdict.error.data);
        toAgent.sendText(line);
        decided.answeredBytes = Buffer.byteLength(line);
      }
      return next(decided);
    },
  };
}
