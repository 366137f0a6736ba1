/** A governed request for the way-in stages' unit tests, as the router builds it. */
import type { JsonRpcRequest } from "../../../src/core/jsonrpc.ts";
import type { ElicitOutcome, Verdict } from "../../../src/governance/verdict/decider.ts";
import type { Ask } from "../../../src/shim/input-asks.ts";
import { LEGACY, META_CAPABILITIES, META_VERSION, requestEra } from "../../../src/shim/era.ts";
import { LazyAbort } from "../../../src/shim/held-decisions.ts";
import type { GovernedRequest } from "../../../src/shim/stages/governed-request.ts";

export const forward: Extract<Verdict, { action: "forward" }> = { action: "forward", gate: "rules", ruleId: "r0", reason: "ok" };
export const deny: Verdict = { action: "deny", gate: "rules", ruleId: "r1", reason: "no", error: { code: -32014, message: "denied by rule r1" } };

/** A modern request's `_meta`: the protocol version, and form elicitation declared. */
export const MODERN_META = { [META_VERSION]: "2026-07-28", [META_CAPABILITIES]: { elicitation: { form: {} } } };

export function request(id: number | string, method: string, params: Record<string, unknown>): JsonRpcRequest {
  return { kind: "request", id, method, params, body: { jsonrpc: "2.0", id, method, params } };
}

export function toolCall(id: number | string, name: string, extra: Record<string, unknown> = {}): JsonRpcRequest {
  return request(id, "tools/call", { name, arguments: {}, ...extra });
}

export function governed(of: JsonRpcRequest, subscriptions?: unknown[] | null): GovernedRequest {
  return {
    entry: { id: of.id, method: of.method, startedAt: 0 },
    request: of,
    bytes: new TextEncoder().encode(JSON.stringify(of.body)),
    era: LEGACY,
    control: new LazyAbort(),
    subscriptions,
  };
}

/** A modern request's call, with its era read as the parse stage reads it. */
export function modernCall(id: number | string, name: string, meta: Record<string, unknown> = MODERN_META): GovernedRequest {
  const call = governed(toolCall(id, name, { _meta: meta }));
  call.era = requestEra(call.request);
  return call;
}

/** The modern retry of a call, carrying the person's answer to `ask` (what parse makes of it). */
export function answeredRetry(id: number | string, name: string, ask: Ask | undefined, outcome: ElicitOutcome = { kind: "approved", scope: "once" }): GovernedRequest {
  const retry = modernCall(id, name);
  if (ask) retry.answered = { ask, outcome };
  return retry;
}

/** A `next` that counts its calls and notes the verdict each saw; a stage that passes on anything but its call fails the test. */
export function fakeNext(call: GovernedRequest) {
  const seen: (Verdict | undefined)[] = [];
  const next = (given: GovernedRequest) => {
    if (given !== call) throw new Error("the stage passed on another call than its own");
    seen.push(call.verdict);
  };
  return { next, seen };
}

/** A promise and its resolver, to settle a decision when the test says so. */
export function later<T>() {
  // Both assigned by the executor, which runs at once.
  let settle!: (value: T) => void;
  let fail!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { promise, settle, fail };
}
