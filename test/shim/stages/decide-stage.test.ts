/**
 * The shim's decide stage alone, with a fake `next` (docs/testing.md, "Mutation testing"): it fails
 * closed, keeps what an earlier stage decided, holds a call only while it waits, asks a changed
 * definition's acceptance before the call, and continues a modern call asked through
 * `input_required` in the retry that carries the answer.
 */
import { describe, expect, test } from "bun:test";
import type { DefinitionChange } from "../../../src/governance/verdict/definition-acceptance.ts";
import type { DecisionContext, Decider, ElicitOutcome, Verdict } from "../../../src/governance/verdict/decider.ts";
import { HeldDecisions } from "../../../src/shim/held-decisions.ts";
import type { PendingRequest } from "../../../src/shim/request-tracker.ts";
import { RetryAsks } from "../../../src/shim/retry-asks.ts";
import { decideStage } from "../../../src/shim/stages/decide-stage.ts";
import type { GovernedRequest } from "../../../src/shim/stages/governed-request.ts";
import { answeredRetry, deny, fakeNext, forward, governed, later, MODERN_META, modernCall, request, toolCall } from "./governed.ts";

const change: DefinitionChange = { kind: "tool", name: "echo", status: "changed", changed: ["description"], pinnedDigest: "a", servedDigest: "b", diff: "", findings: [] };

function setup(decide: Decider["decide"], agentCanElicit = false, annotations: Record<string, Record<string, unknown>> = {}, answering: (client: unknown) => string[] = () => []) {
  const held = new HeldDecisions();
  const toAgent: string[] = [];
  const written: string[] = [];
  const audit = {
    decision: (entry: PendingRequest, verdict: Verdict | { action: "pending" }) => void written.push(`decision ${entry.id} ${verdict.action}`),
    endCall: (entry: PendingRequest, status: string) => void written.push(`end ${entry.id} ${status}`),
  };
  const asks = new RetryAsks("s", held, { sendText: (line) => void toAgent.push(line) }, audit);
  const accepted: string[] = [];
  const announced: string[] = [];
  const contexts: DecisionContext[] = [];
  const decided: string[] = [];
  const requests: unknown[] = [];
  const stage = decideStage({
    serverId: "s",
    server: { command: ["server"], url: null },
    decider: {
      decide: (req, context) => {
        contexts.push(context);
        requests.push(req);
        decided.push(`${req.method} ${(req.params as { name?: string; uri?: string }).name ?? (req.params as { uri?: string }).uri}`);
        return decide(req, context);
      },
    },
    catalog: { annotationsOf: (name) => annotations[name], annotationSourceOf: (name) => (annotations[name] ? "server" : undefined) },
    held,
    audit,
    asks,
    own: { elicit: () => Promise.resolve({ kind: "declined" }), agentCanElicit, formsAnsweredBy: answering },
    definitions: { accept: (c, by) => void accepted.push(`${c.name} by ${by}`) },
    listChanges: { announce: (kinds) => void announced.push(...kinds) },
  });
  const run = (call: GovernedRequest) => {
    const { next, seen } = fakeNext(call);
    const result = stage.request?.(call, next);
    return { result, seen };
  };
  return { held, toAgent, written, asks, accepted, announced, contexts, decided, requests, run };
}

describe("decide (the shim's way in)", () => {
  test("a verdict given at once is set for the stages after, synchronously: no promise", () => {
    const { run, held } = setup(() => forward);
    const { result, seen } = run(governed(toolCall(1, "echo")));
    expect({ result, seen, held: held.size }).toEqual({ result: undefined, seen: [forward], held: 0 });
  });

  test("a decider that throws fails closed: a deny from the governance gate, and the call goes on to be answered with it", () => {
    const { run } = setup(() => {
      throw new Error("engine broke");
    });
    const { result, seen } = run(governed(toolCall(1, "echo")));
    expect(result).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ action: "deny", gate: "governance", reason: "decision failed", error: { code: -32603 } });
  });

  test("a decider that rejects fails closed; the call is held while it waits and released after", async () => {
    const pending = later<Verdict>();
    const { run, held } = setup(() => pending.promise);
    const { result, seen } = run(governed(toolCall(7, "echo")));
    expect({ held: held.has(7), seen: seen.length }).toEqual({ held: true, seen: 0 });
    pending.fail(new Error("service gone"));
    await result;
    expect({ held: held.size, count: seen.length }).toEqual({ held: 0, count: 1 });
    expect(seen[0]).toMatchObject({ action: "deny", gate: "governance", error: { code: -32603 } });
  });

  test("an earlier stage's deny is kept: the decider is not asked, and the stages after see that deny", () => {
    const { run, decided } = setup(() => forward);
    const call = governed(toolCall(1, "echo"));
    call.verdict = deny;
    const { seen } = run(call);
    expect({ decided, seen }).toEqual({ decided: [], seen: [deny] });
  });

  test("a call cancelled while it waits goes no further, whatever the decision then says", async () => {
    const pending = later<Verdict>();
    const { run, held } = setup(() => pending.promise);
    const call = governed(toolCall(3, "echo"));
    const { result, seen } = run(call);
    expect(held.cancel(3)).toBe(call.entry);
    expect(call.control.aborted).toBe(true);
    pending.settle(forward);
    await result;
    expect(seen).toEqual([]);
  });

  test("a changed definition is asked about first: accepted, it becomes the pin, the agent is told, then the call itself is decided", () => {
    const { run, contexts, accepted, announced, decided } = setup((_req, context) => (context.definitionChange ? { ...forward, approvedBy: "elicitation" } : forward));
    const call = governed(toolCall(1, "echo"));
    call.change = change;
    const { seen } = run(call);
    expect({ decided, asked: contexts.map((c) => c.definitionChange?.name ?? null), accepted, announced, seen }).toEqual({
      decided: ["tools/call echo", "tools/call echo"],
      asked: ["echo", null],
      accepted: ["echo by elicitation"],
      announced: ["tool"],
      seen: [forward],
    });
  });

  test("a changed definition refused: the call is refused with the definitions gate's error, never decided itself", () => {
    const { run, accepted, decided } = setup(() => deny);
    const call = governed(toolCall(1, "echo"));
    call.change = change;
    const { seen } = run(call);
    expect({ decided, accepted }).toEqual({ decided: ["tools/call echo"], accepted: [] });
    expect(seen[0]).toMatchObject({ action: "deny", gate: "definitions" });
  });

  test("legacy: the agent is asked by elicitation/create only when its initialize declared form elicitation", () => {
    const without = setup(() => forward);
    without.run(governed(toolCall(1, "echo")));
    const withForms = setup(() => forward, true);
    withForms.run(governed(toolCall(1, "echo")));
    expect([without.contexts[0]?.elicit, typeof withForms.contexts[0]?.elicit]).toEqual([null, "function"]);
  });

  test("modern: the call is answered with input_required and ends here; its retry with the answer continues under the decision", async () => {
    const { run, toAgent, asks, held, written } = setup(async (_req, context) => {
      const outcome: ElicitOutcome = (await context.elicit?.("Allow echo?", context.signal)) ?? { kind: "unanswered" };
      return outcome.kind === "approved" ? { ...forward, approvedBy: "elicitation" } : deny;
    });
    const first = modernCall(1, "echo");
    const asked = run(first);
    const question = JSON.parse(toAgent[0] ?? "{}");
    expect(question).toMatchObject({ id: 1, result: { resultType: "input_required" } });
    expect({ held: held.size, written }).toEqual({ held: 0, written: ["end 1 input_required"] });

    const ask = asks.openFor(first.entry);
    expect(ask).toBeDefined();
    const continued = run(answeredRetry(2, "echo", ask));
    await continued.result;
    await asked.result;
    expect(asked.seen).toEqual([]);
    const approved: Verdict = { ...forward, approvedBy: "elicitation" };
    expect(continued.seen).toEqual([approved]);
    expect({ held: held.size, written }).toEqual({ held: 0, written: ["end 1 input_required", "decision 2 pending"] });
  });

  test("subscriptions/listen: each URI decided as resources/subscribe, never asked; one refusal refuses the listen", async () => {
    const { run, decided, contexts } = setup((req) => ((req.params as { uri: string }).uri === "file:///b" ? deny : forward));
    const call = governed(request(1, "subscriptions/listen", {}), ["file:///a", "file:///b"]);
    const { result, seen } = run(call);
    await result;
    expect({ decided, asks: contexts.map((c) => c.elicit), seen }).toEqual({ decided: ["resources/subscribe file:///a", "resources/subscribe file:///b"], asks: [null, null], seen: [deny] });
  });

  test("a decider that waits for a person: the call's pending decision is in the record while it waits, and its span notes the wait", () => {
    const { run, written } = setup((_req, context) => (context.awaitingApproval("rule ask: approval required"), forward));
    const untraced = run(governed(toolCall(1, "echo")));
    const waited: string[] = [];
    const traced = governed(toolCall(2, "echo"));
    traced.entry.trace = { waiting: () => void waited.push("waiting"), deciding: undefined } as unknown as PendingRequest["trace"];
    const withSpans = run(traced);
    expect({ written, waited }).toEqual({ written: ["decision 1 pending", "decision 2 pending"], waited: ["waiting"] });
    // With tracing off or on, the decision after the wait is the decider's.
    expect([untraced.seen, withSpans.seen]).toEqual([[forward], [forward]]);
  });

  test("a tool's annotations (and where they came from) are given for a tools/call only", () => {
    const { run, contexts } = setup(() => forward, false, { echo: { readOnlyHint: true } });
    run(governed(toolCall(1, "echo")));
    run(governed(request(2, "prompts/get", { name: "echo" })));
    expect(contexts.map((c) => [c.annotations, c.annotationSource])).toEqual([
      [{ readOnlyHint: true }, "server"],
      [undefined, undefined],
    ]);
  });

  test("modern: an agent whose request does not declare form elicitation is not asked; a forward is kept for the server's own rounds, a deny or a legacy call is not", () => {
    const { run, contexts, asks } = setup((req) => ((req.params as { name: string }).name === "blocked" ? deny : forward));
    const kept: Array<string | number> = [];
    const keep = asks.decided.bind(asks);
    asks.decided = (entry, req, verdict) => (kept.push(entry.id), keep(entry, req, verdict));
    run(modernCall(1, "echo", { "io.modelcontextprotocol/protocolVersion": "2026-07-28" }));
    run(modernCall(2, "blocked"));
    run(governed(toolCall(3, "echo")));
    run(modernCall(4, "echo"));
    expect(contexts[0]?.elicit).toBeNull();
    expect(kept).toEqual([1, 4]);
  });

  test("modern: a client whose project could answer its forms (Claude Code's Elicitation hook) is put none; another client is", () => {
    const { run, contexts } = setup(() => forward, false, {}, (client) => (client === "claude-code" ? ["/repo/.claude/settings.json"] : []));
    const fromClient = (id: number, client: string) => modernCall(id, "echo", { ...MODERN_META, "io.modelcontextprotocol/clientInfo": { name: client, version: "1" } });
    run(fromClient(1, "claude-code"));
    run(fromClient(2, "other-agent"));
    expect(contexts.map((context) => context.elicit === null)).toEqual([true, false]);
  });

  test("a changed definition refused by another gate: the definitions gate's error, carrying the approval task; accepted without a channel named: 'unknown'", () => {
    const refusing: Verdict = { action: "deny", ruleId: "r1", gate: "approval", reason: "rejected", error: { code: -32007, message: "no", data: { task_id: "task-9" } } };
    const { run } = setup(() => refusing);
    const call = governed(toolCall(1, "echo"));
    call.change = change;
    const { seen } = run(call);
    expect(seen[0]).toMatchObject({ action: "deny", gate: "definitions", reason: expect.stringContaining("rejected"), error: { code: -32011, data: { gate: "definitions", task_id: "task-9" } } });
    const noTask = setup(() => ({ ...refusing, error: { code: -32007, message: "no", data: { task_id: 9 } } }));
    const other = governed(toolCall(1, "echo"));
    other.change = change;
    const refused = noTask.run(other).seen[0];
    expect(refused?.action === "deny" && refused.error.data).not.toHaveProperty("task_id");
    // The definitions gate's own refusal goes to the agent as it is.
    const own: Verdict = { action: "deny", ruleId: null, gate: "definitions", reason: "own", error: { code: -32011, message: "own words" } };
    const kept = setup(() => own);
    const third = governed(toolCall(1, "echo"));
    third.change = change;
    expect(kept.run(third).seen).toEqual([own]);
    const anonymous = setup((_req, context) => (context.definitionChange ? forward : forward));
    const fourth = governed(toolCall(1, "echo"));
    fourth.change = change;
    anonymous.run(fourth);
    expect(anonymous.accepted).toEqual(["echo by unknown"]);
  });

  test("the retry that carries an answer: a decision given at once goes on synchronously; an answer that ends nothing goes no further", async () => {
    const sync = setup(() => forward);
    sync.asks.changeAsked = () => undefined;
    sync.asks.answered = () => forward;
    const retry = governed(toolCall(2, "echo"));
    retry.answered = { ask: {} as never, outcome: { kind: "approved", scope: "once" } };
    const once = sync.run(retry);
    expect({ result: once.result, seen: once.seen }).toEqual({ result: undefined, seen: [forward] });
    const none = setup(() => forward);
    none.asks.changeAsked = () => undefined;
    none.asks.answered = () => Promise.resolve(null);
    const other = governed(toolCall(3, "echo"));
    other.answered = { ask: {} as never, outcome: { kind: "approved", scope: "once" } };
    const nothing = none.run(other);
    await nothing.result;
    expect(nothing.seen).toEqual([]);
  });

  test("modern: a decider that asks only after a wait holds the call, and lets it go when the question goes out", async () => {
    const { run, held, asks, toAgent } = setup(async (_req, context) => {
      await Promise.resolve();
      const outcome: ElicitOutcome = (await context.elicit?.("Allow echo?", context.signal)) ?? { kind: "unanswered" };
      return outcome.kind === "approved" ? forward : deny;
    });
    const first = modernCall(1, "echo");
    const asked = run(first);
    expect(held.has(1)).toBe(true);
    const ask = await (async () => {
      while (!asks.openFor(first.entry)) await Promise.resolve();
      return asks.openFor(first.entry);
    })();
    expect(JSON.parse(toAgent[0] ?? "{}")).toMatchObject({ id: 1, result: { resultType: "input_required" } });
    const continued = run(answeredRetry(2, "echo", ask));
    await continued.result;
    await asked.result;
    expect({ first: asked.seen, retry: continued.seen, held: held.size }).toEqual({ first: [], retry: [forward], held: 0 });
  });

  test("subscriptions/listen: each URI as a resources/subscribe request; all allowed is one forward; a decider that throws refuses it; a cancel ends it", async () => {
    const { run, requests, contexts } = setup(() => forward, true);
    const call = governed(request(5, "subscriptions/listen", {}), ["file:///a", "file:///b"]);
    const { result, seen } = run(call);
    await result;
    expect(seen).toEqual([{ action: "forward", gate: "rules", ruleId: "r0", reason: "every resource subscription allowed (2)" }]);
    expect(requests[0]).toEqual({ kind: "request", id: 5, method: "resources/subscribe", params: { uri: "file:///a" }, body: { jsonrpc: "2.0", id: 5, method: "resources/subscribe", params: { uri: "file:///a" } } });
    // Never asked, even of an agent that can answer a form.
    expect(contexts.map((c) => c.elicit)).toEqual([null, null]);

    const throwing = setup((req) => {
      if ((req.params as { uri: string }).uri === "file:///b") throw new Error("engine broke");
      return forward;
    });
    const broken = throwing.run(governed(request(6, "subscriptions/listen", {}), ["file:///a", "file:///b"]));
    await broken.result;
    expect(broken.seen[0]).toMatchObject({ action: "deny", gate: "governance", reason: "decision failed" });

    const ungated = setup(() => ({ action: "forward", gate: null, ruleId: null, reason: "no policy" }));
    const none = ungated.run(governed(request(7, "subscriptions/listen", {}), []));
    await none.result;
    expect(none.seen).toEqual([{ action: "forward", gate: null, ruleId: null, reason: "every resource subscription allowed (0)" }]);

    const cancelled = setup(() => forward);
    const waiting = governed(request(8, "subscriptions/listen", {}), ["file:///a"]);
    const run8 = cancelled.run(waiting);
    cancelled.held.cancel(8);
    await run8.result;
    expect(run8.seen).toEqual([]);
  });
});
