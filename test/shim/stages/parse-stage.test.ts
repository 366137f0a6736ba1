/**
 * The shim's parse stage alone, with a fake `next`: a request that cannot be decided as sent is
 * refused, a modern retry is told apart (our question's answer continues its call; a forged state is
 * refused; a retry without the answer is asked again and goes no further), and the retry of a tool's
 * own round continues under the decision already made.
 */
import { describe, expect, test } from "bun:test";
import type { JsonRpcResponse } from "../../../src/core/jsonrpc.ts";
import type { Verdict } from "../../../src/governance/verdict/decider.ts";
import { HeldDecisions } from "../../../src/shim/held-decisions.ts";
import { APPROVAL_INPUT_KEY } from "../../../src/shim/input-asks.ts";
import type { PendingRequest } from "../../../src/shim/request-tracker.ts";
import { RetryAsks } from "../../../src/shim/retry-asks.ts";
import { parseStage } from "../../../src/shim/stages/parse-stage.ts";
import { fakeNext, forward, governed, MODERN_META, request, toolCall } from "./governed.ts";

function setup() {
  const toAgent: string[] = [];
  const ended: string[] = [];
  const audit = { decision: () => {}, endCall: (entry: PendingRequest, status: string) => void ended.push(`${entry.id} ${status}`) };
  const asks = new RetryAsks("s", new HeldDecisions(), { sendText: (line) => void toAgent.push(line) }, audit);
  const begun: string[] = [];
  const stage = parseStage({ serverId: "s", asks, trace: { begin: (req) => (begun.push(req.method), {} as never) } });
  const run = (call: ReturnType<typeof governed>) => {
    const { next, seen } = fakeNext(call);
    stage.request?.(call, next);
    return seen;
  };
  /** Ask the agent about call `id` as the decide stage would: the state it gets back. */
  const ask = (id: number) => {
    const first = governed(toolCall(id, "echo", { _meta: MODERN_META }));
    void asks.elicit(first)("Allow echo?", new AbortController().signal);
    const question = JSON.parse(toAgent.at(-1) ?? "{}") as { result: { requestState: string } };
    return { first, state: question.result.requestState };
  };
  return { asks, toAgent, ended, begun, run, ask };
}

const answer = { action: "accept", content: { decision: "once" } };

describe("parse (the shim's way in)", () => {
  test("params that cannot be decided are refused with invalid params, and the stages after see the refusal", () => {
    const { run, begun } = setup();
    const call = governed(request(1, "tools/call", { arguments: {} }));
    const seen = run(call);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ action: "deny", gate: "governance", error: { code: -32602, data: { gate: "governance", server_id: "s" } } });
    expect(seen[0]?.action === "deny" && seen[0].error.message).toBe(`Invalid params: ${seen[0]?.reason}`);
    expect(seen[0]?.reason).not.toBe("");
    expect(begun).toEqual(["tools/call"]);
  });

  test("a legacy call goes on as it came, synchronously, with its era read", () => {
    const { run } = setup();
    const call = governed(toolCall(1, "echo"));
    const seen = run(call);
    expect({ seen, era: call.era.era, answered: call.answered }).toEqual({ seen: [undefined], era: "legacy", answered: undefined });
  });

  test("a legacy call is never read as a retry: our state and an answer in it do not approve it", () => {
    const { run, ask } = setup();
    const { state } = ask(1);
    const call = governed(toolCall(2, "echo", { requestState: state, inputResponses: { [APPROVAL_INPUT_KEY]: answer } }));
    const sent = call.bytes;
    const seen = run(call);
    expect({ seen, era: call.era.era, answered: call.answered, bytes: call.bytes }).toEqual({ seen: [undefined], era: "legacy", answered: undefined, bytes: sent });
  });

  test("our state for another call, or one already used: a new call, decided afresh on the request with our state taken out", () => {
    const stripped = toolCall(2, "echo", { _meta: MODERN_META });
    const strippedBytes = new TextEncoder().encode(JSON.stringify(stripped.body));
    const looked: unknown[] = [];
    const stage = parseStage({ serverId: "s", asks: { recognize: () => ({ kind: "stale", request: stripped, bytes: strippedBytes }), askAgain: () => {}, continuesRound: (req) => (looked.push(req), null) } });
    const call = governed(toolCall(2, "echo", { _meta: MODERN_META, requestState: "old" }));
    call.era = { ...call.era, era: "modern" } as typeof call.era;
    const { next, seen } = fakeNext(call);
    stage.request?.(call, next);
    expect({ seen, request: call.request, bytes: call.bytes, looked }).toEqual({ seen: [undefined], request: stripped, bytes: strippedBytes, looked: [stripped] });
  });

  test("a requestState ThoughtGate did not mint is refused", () => {
    const { run, ask } = setup();
    const { state } = ask(1);
    const forged = `${state.slice(0, -4)}AAAA`;
    const call = governed(toolCall(2, "echo", { _meta: MODERN_META, requestState: forged, inputResponses: { [APPROVAL_INPUT_KEY]: answer } }));
    const seen = run(call);
    expect(seen[0]).toMatchObject({ action: "deny", error: { code: -32602, message: expect.stringContaining("ThoughtGate refused the retry") } });
  });

  test("the retry that carries our question's answer continues its call: our state taken out, cancelling it aborts the approval", () => {
    const { run, ask } = setup();
    const { first, state } = ask(1);
    const call = governed(toolCall(2, "echo", { _meta: MODERN_META, requestState: state, inputResponses: { [APPROVAL_INPUT_KEY]: answer } }));
    const before = call.control;
    const seen = run(call);
    expect({ seen, verdict: call.verdict, asked: call.answered?.ask.first }).toEqual({ seen: [undefined], verdict: undefined, asked: first.entry });
    expect(JSON.parse(new TextDecoder().decode(call.bytes)).params).toEqual({ name: "echo", arguments: {}, _meta: MODERN_META });
    expect(call.control).not.toBe(before);
    call.control.abort();
    expect(first.control.aborted).toBe(true);
  });

  test("a retry with our state and no answer is asked the same question again, and goes no further", () => {
    const { run, ask, toAgent, ended } = setup();
    const { state } = ask(1);
    const call = governed(toolCall(2, "echo", { _meta: MODERN_META, requestState: state }));
    const seen = run(call);
    expect(seen).toEqual([]);
    expect(JSON.parse(toAgent.at(-1) ?? "{}")).toMatchObject({ id: 2, result: { resultType: "input_required", requestState: state } });
    expect(ended).toEqual(["1 input_required", "2 input_required"]);
  });

  test("a tool's own round: the retry continues under the decision already made, once", () => {
    const { run, asks } = setup();
    const decided = governed(toolCall(1, "echo", { _meta: MODERN_META }));
    asks.decided(decided.entry, decided.request, forward);
    const round: JsonRpcResponse = { kind: "response", id: 1, isError: false, body: { jsonrpc: "2.0", id: 1, result: { resultType: "input_required", inputRequests: { city: {} }, requestState: "server-state" } } as JsonRpcResponse["body"] };
    asks.serverAnswered(decided.entry, round);
    const retry = () => governed(toolCall(2, "echo", { _meta: MODERN_META, requestState: "server-state", inputResponses: { city: "Paris" } }));
    const first = run(retry());
    const again = run(retry());
    expect(first[0]).toMatchObject({ action: "forward", reason: "continues the call the server asked input for: ok" } satisfies Partial<Verdict>);
    expect(again).toEqual([undefined]);
  });

  test("subscriptions/listen: subscriptions that are not a list of URIs are refused; a list goes on", () => {
    const { run } = setup();
    const unreadable = run(governed(request(1, "subscriptions/listen", {}), null));
    const notUris = run(governed(request(2, "subscriptions/listen", {}), ["file:///a", 3]));
    const uris = run(governed(request(3, "subscriptions/listen", {}), ["file:///a"]));
    expect([unreadable[0]?.action, notUris[0]?.action, uris[0]]).toEqual(["deny", "deny", undefined]);
    const reason = "subscriptions/listen needs params.notifications as an object and its resourceSubscriptions as a list of URI strings";
    expect(notUris[0]).toMatchObject({ reason, error: { code: -32602, message: `Invalid params: ${reason}`, data: { reason } } });
  });
});
