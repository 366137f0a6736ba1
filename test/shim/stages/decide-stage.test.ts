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
import { requestEra } from "../../../src/shim/era.ts";
import type { PendingRequest } from "../../../src/shim/request-tracker.ts";
import { RetryAsks } from "../../../src/shim/retry-asks.ts";
import { decideStage } from "../../../src/shim/stages/decide-stage.ts";
import type { GovernedRequest } from "../../../src/shim/stages/governed-request.ts";
import { deny, fakeNext, forward, governed, later, MODERN_META, request, toolCall } from "./governed.ts";

const change: DefinitionChange = { kind: "tool", name: "echo", status: "changed", changed: ["description"], pinnedDigest: "a", servedDigest: "b", diff: "", findings: [] };

function setup(decide: Decider["decide"], agentCanElicit = false) {
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
  const stage = decideStage({
    serverId: "s",
    server: { command: ["server"], url: null },
    decider: {
      decide: (req, context) => {
        contexts.push(context);
        decided.push(`${req.method} ${(req.params as { name?: string; uri?: string }).name ?? (req.params as { uri?: string }).uri}`);
        return decide(req, context);
      },
    },
    catalog: { annotationsOf: () => undefined, annotationSourceOf: () => undefined },
    held,
    audit,
    asks,
    own: { elicit: () => Promise.resolve({ kind: "declined" }), agentCanElicit },
    definitions: { accept: (c, by) => void accepted.push(`${c.name} by ${by}`) },
    listChanges: { announce: (kinds) => void announced.push(...kinds) },
  });
  const run = (call: GovernedRequest) => {
    const { next, seen } = fakeNext(call);
    const result = stage.request?.(call, next);
    return { result, seen };
  };
  return { held, toAgent, written, asks, accepted, announced, contexts, decided, run };
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
    const first = governed(toolCall(1, "echo", { _meta: MODERN_META }));
    first.era = requestEra(first.request);
    const asked = run(first);
    const question = JSON.parse(toAgent[0] ?? "{}");
    expect(question).toMatchObject({ id: 1, result: { resultType: "input_required" } });
    expect({ held: held.size, written }).toEqual({ held: 0, written: ["end 1 input_required"] });

    const ask = asks.openFor(first.entry);
    expect(ask).toBeDefined();
    const retry = governed(toolCall(2, "echo", { _meta: MODERN_META }));
    retry.era = requestEra(retry.request);
    if (ask) retry.answered = { ask, outcome: { kind: "approved", scope: "once" } };
    const continued = run(retry);
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
});
