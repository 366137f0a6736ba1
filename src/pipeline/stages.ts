import type { Call } from "./call.ts";

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

/** Run the stages after this one. Returns what they return: synchronous when they all are. */
export type Next = () => void | Promise<void>;

/**
 * One stage. It sees the call before `next()` and, if it waits for it, after; it calls `next`
 * at most once (twice is a bug, and throws). To end a call it sets `call.verdict` to a deny and
 * still calls `next`: the stages after it see the outcome (the audit records it, the forward
 * answers the agent with its error instead of forwarding).
 */
export type Stage<In = Call, Out = In> = {
  readonly name: RequestStageName | ResponseStageName;
  request?(call: In, next: Next): void | Promise<void>;
  response?(call: Out, next: Next): void | Promise<void>;
};

/** What a stage is to one direction of a pipeline over `C`. */
type Handler<C> = (call: C, next: Next) => void | Promise<void>;
type StageFor<C> = { readonly name: Stage["name"]; request?: Handler<C>; response?: Handler<C> };

/** A front end's stages for one direction, run in the declared order. */
export type Pipeline<C = Call> = (call: C) => void | Promise<void>;

/** Told each time a stage is entered (a test counts entries per call with it; absent: nothing is told). */
export type StageProbe = (direction: Direction, name: Stage["name"]) => void;

/**
 * Compose `stages` for `direction` in the declared order (after Hono's `compose`): each stage is
 * entered once, and a stage that answers synchronously keeps the whole run synchronous, so the
 * hot path of a call nobody waits on costs no promise. Stages a front end does not have are
 * skipped; a stage named twice, or out of the declared order, is refused when composing.
 */
export function compose<C>(stages: readonly { readonly name: Stage["name"]; request?: Handler<C> }[], direction: "request", probe?: StageProbe): Pipeline<C>;
export function compose<C>(stages: readonly { readonly name: Stage["name"]; response?: Handler<C> }[], direction: "response", probe?: StageProbe): Pipeline<C>;
export function compose<C>(stages: readonly StageFor<C>[], direction: Direction, probe?: StageProbe): Pipeline<C> {
  const order: readonly string[] = direction === "request" ? REQUEST_STAGES : RESPONSE_STAGES;
  const ordered = stages.filter((stage) => stage[direction] !== undefined && order.includes(stage.name));
  let last = -1;
  for (const stage of ordered) {
    const at = order.indexOf(stage.name);
    if (at <= last) throw new Error(`pipeline: stage "${stage.name}" is out of order for the ${direction} (${order.join(" → ")})`);
    last = at;
  }
  // Each stage's handler called as its method (no bound function in between: it is on every call).
  const handlers: Array<(call: C, next: Next) => void | Promise<void>> =
    direction === "request"
      ? ordered.map((stage) => (call, next) => (stage as Required<StageFor<C>>).request(call, next))
      : ordered.map((stage) => (call, next) => (stage as Required<StageFor<C>>).response(call, next));
  return (call) => {
    let entered = -1;
    const dispatch = (i: number): void | Promise<void> => {
      if (i <= entered) throw new Error(`pipeline: next() called twice in stage "${ordered[entered]?.name}"`);
      entered = i;
      const handler = handlers[i];
      if (handler === undefined) return;
      probe?.(direction, (ordered[i] as StageFor<C>).name);
      return handler(call, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}

/** The order as `--explain` and the shim's debug log print it. */
export function describePipeline(): string {
  return `request: ${REQUEST_STAGES.join(" → ")}\nresponse: ${RESPONSE_STAGES.join(" → ")}`;
}
