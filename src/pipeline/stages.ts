import type { Call, StageMarks } from "./call.ts";

/**
 * The stages every call passes through, in order, declared here and nowhere else
 * (docs/architecture.md, "Every tool call, one pipeline"). On the way in: parsed once by the
 * front end, then the lists and the tool catalog, the definitions (pins, poisoning), the decision
 * (the decider, approvals, asks), the audit, the trace, and the forward (to the server, or the
 * error to the agent). On the way back: secrets (scan and redact), definitions, audit, trace.
 */
export const REQUEST_STAGES = ["parse", "lists", "definitions", "decide", "audit", "trace", "forward"] as const;
export const RESPONSE_STAGES = ["secrets", "definitions", "audit", "trace"] as const;

type RequestStageName = (typeof REQUEST_STAGES)[number];
type ResponseStageName = (typeof RESPONSE_STAGES)[number];
export type Direction = "request" | "response";

/** Run the stages after this one on `call`. Returns what they return: synchronous when they all are. */
export type Next<C = Call> = (call: C) => void | Promise<void>;

/**
 * One stage. It sees the call before `next(call)` and, if it waits for it, after; it calls `next`
 * at most once, with the call it was given (twice is a bug, and throws). To end a call it sets
 * `call.verdict` to a deny and still calls `next`: the stages after it see the outcome (the audit
 * records it, the forward answers the agent with its error instead of forwarding).
 */
export type Stage<In = Call, Out = In> = {
  readonly name: RequestStageName | ResponseStageName;
  request?(call: In, next: Next<In>): void | Promise<void>;
  response?(call: Out, next: Next<Out>): void | Promise<void>;
};

/** What a stage is to one direction of a pipeline over `C`. */
type Handler<C> = (call: C, next: Next<C>) => void | Promise<void>;
type StageFor<C> = { readonly name: Stage["name"]; request?: Handler<C>; response?: Handler<C> };

/** A front end's stages for one direction, run in the declared order. */
export type Pipeline<C = Call> = (call: C) => void | Promise<void>;

/** Told each time a stage is entered (a test counts entries per call with it; absent: nothing is told). */
export type StageProbe = (direction: Direction, name: Stage["name"]) => void;

/**
 * Compose `stages` for `direction` in the declared order (after Hono's `compose`): each stage is
 * entered once, and a stage that answers synchronously keeps the whole run synchronous, so the
 * hot path of a call nobody waits on costs no promise. Stages a front end does not have are
 * skipped; a stage named twice, or out of the declared order, is refused when composing. The
 * runners are built here, once: a call passes through them with no function made for it.
 */
export function compose<C extends StageMarks>(stages: readonly { readonly name: Stage["name"]; request?: Handler<C> }[], direction: "request", probe?: StageProbe): Pipeline<C>;
export function compose<C extends StageMarks>(stages: readonly { readonly name: Stage["name"]; response?: Handler<C> }[], direction: "response", probe?: StageProbe): Pipeline<C>;
export function compose<C extends StageMarks>(stages: readonly StageFor<C>[], direction: Direction, probe?: StageProbe): Pipeline<C> {
  const order: readonly string[] = direction === "request" ? REQUEST_STAGES : RESPONSE_STAGES;
  const ordered = stages.filter((stage) => stage[direction] !== undefined && order.includes(stage.name));
  let last = -1;
  for (const stage of ordered) {
    const at = order.indexOf(stage.name);
    if (at <= last) throw new Error(`pipeline: stage "${stage.name}" is out of order for the ${direction} (${order.join(" → ")})`);
    last = at;
  }
  // Built from the last stage back, each runner closing over the one after it; each handler is
  // called as its stage's method (no bound function in between: this is on every call).
  const end = ordered.length;
  let run: Next<C> = direction === "request" ? (call) => enterRequest(call, end, "the end") : (call) => enterResponse(call, end, "the end");
  for (let i = ordered.length - 1; i >= 0; i -= 1) {
    const stage = ordered[i] as Required<StageFor<C>>;
    const after = run;
    const label = `stage "${stage.name}"`;
    const enter = direction === "request" ? enterRequest : enterResponse;
    run = probe
      ? (call) => (enter(call, i, label), probe(direction, stage.name), stage[direction](call, after))
      : direction === "request"
        ? (call) => (enterRequest(call, i, label), stage.request(call, after))
        : (call) => (enterResponse(call, i, label), stage.response(call, after));
  }
  return run;
}

/** The call enters stage `at` of its way in: the first stage starts it, any other must come after the last one entered. */
function enterRequest(call: StageMarks, at: number, name: string): void {
  if (at > 0 && (call.requestAt as number) >= at) throw new Error(`pipeline: next() called twice before ${name}`);
  call.requestAt = at;
}

/** The same for its way back. */
function enterResponse(call: StageMarks, at: number, name: string): void {
  if (at > 0 && (call.responseAt as number) >= at) throw new Error(`pipeline: next() called twice before ${name}`);
  call.responseAt = at;
}

/** The order as `--explain` and the shim's debug log print it. */
export function describePipeline(): string {
  return `request: ${REQUEST_STAGES.join(" → ")}\nresponse: ${RESPONSE_STAGES.join(" → ")}`;
}
