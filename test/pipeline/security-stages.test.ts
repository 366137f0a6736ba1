/**
 * The security stages every front end shares, each run alone with a fake `next`: a mutant in them
 * is caught here, without building the binary (docs/testing.md, "Mutation testing").
 */
import { describe, expect, test } from "bun:test";
import type { DecisionContext, Decider, Verdict } from "../../src/governance/verdict/decider.ts";
import { auditStage, recordPending } from "../../src/pipeline/audit-stage.ts";
import { callOf, toolCallRequest, type Call } from "../../src/pipeline/call.ts";
import { CallRecord, decisionFields } from "../../src/pipeline/call-record.ts";
import { decideStage } from "../../src/pipeline/decide-stage.ts";
import { decisionFailed, isDecisionFailure } from "../../src/pipeline/decision-failed.ts";
import { compose, type Next, type Stage } from "../../src/pipeline/stages.ts";
import type { EventStream } from "../../src/telemetry/events.ts";

const ALLOW: Verdict = { action: "forward", gate: "rules", ruleId: "reads", reason: "rule reads allows it" };
const DENY: Verdict = { action: "deny", gate: "rules", ruleId: "no-rm", reason: "rule no-rm denies it", error: { code: -32014, message: "denied" } };

const newCall = (args: unknown = { command: "ls" }): Call => callOf("hooks", "claude-code", toolCallRequest("t1", "Bash", args));
const context = (): DecisionContext => ({ signal: new AbortController().signal, serverId: "claude-code", annotations: undefined, elicit: null, awaitingApproval: () => {} });

/** A `next` that counts how often it ran and what the call held when it did; a stage that passes on anything but its call fails the test. */
function fakeNext(call: Call) {
  const seen: Array<Verdict | undefined> = [];
  const next: Next = (given) => {
    if (given !== call) throw new Error("the stage passed on another call than its own");
    seen.push(call.verdict);
  };
  return { next, seen };
}

function events(enabled = true) {
  const written: Array<{ type: string; fields: Record<string, unknown> }> = [];
  const stream = { enabled, emit: (type: string, fields: Record<string, unknown>) => written.push({ type, fields }) } as unknown as Pick<EventStream, "enabled" | "emit">;
  return { stream, written };
}

describe("decide", () => {
  const decider = (verdict: Verdict | Promise<Verdict> | (() => never)): Pick<Decider, "decide"> => ({ decide: () => (typeof verdict === "function" ? verdict() : verdict) });

  test("sets the decider's verdict before the stages after it run, once, synchronously when the decider is", () => {
    for (const verdict of [ALLOW, DENY]) {
      const call = newCall();
      const { next, seen } = fakeNext(call);
      expect(decideStage(decider(verdict), context).request?.(call, next)).toBeUndefined();
      expect(seen).toEqual([verdict]);
    }
  });

  test("a verdict that takes time reaches the stages after it when it comes", async () => {
    const call = newCall();
    const { next, seen } = fakeNext(call);
    await decideStage(decider(Promise.resolve(DENY)), context).request?.(call, next);
    expect(seen).toEqual([DENY]);
  });

  test("a decider that throws or rejects is a deny, never a forward (fails closed)", async () => {
    for (const failing of [
      decider(() => {
        throw new Error("engine broke");
      }),
      decider(Promise.reject(new Error("service gone"))),
    ]) {
      const call = newCall();
      const { next, seen } = fakeNext(call);
      await decideStage(failing, context).request?.(call, next);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ action: "deny", gate: "governance", reason: "decision failed" });
    }
  });

  test("a decision that failed tells the agent why, and is told apart from a policy's deny", () => {
    const call = newCall();
    const { next, seen } = fakeNext(call);
    decideStage(
      decider(() => {
        throw new Error("engine broke");
      }),
      context,
    ).request?.(call, next);
    expect(seen[0]).toEqual({ action: "deny", gate: "governance", ruleId: null, reason: "decision failed", error: { code: -32603, message: "ThoughtGate could not decide: engine broke" } });
    expect(isDecisionFailure(seen[0] as Verdict)).toBe(true);
    expect(isDecisionFailure(DENY)).toBe(false);
    expect(isDecisionFailure(decisionFailed("service gone"))).toBe(true);
  });

  test("a call a stage before it refused is not decided again", () => {
    const call = newCall();
    call.verdict = DENY;
    let asked = 0;
    const { next, seen } = fakeNext(call);
    decideStage({ decide: () => ((asked += 1), ALLOW) }, context).request?.(call, next);
    expect({ asked, seen }).toEqual({ asked: 0, seen: [DENY] });
  });
});

describe("audit", () => {
  test("records the start with the arguments redacted, the decision the stages before reached, and the end with status and bytes", () => {
    const { stream, written } = events();
    const stage = auditStage(new CallRecord(stream, () => true));
    const call = newCall({ command: "curl -H 'Authorization: Bearer sk-live-0123456789abcdefghij' x" });
    call.verdict = DENY;
    const { next, seen } = fakeNext(call);
    stage.request?.(call, next);
    call.status = "denied";
    call.bytesOut = 42;
    stage.response?.(call, next);
    expect(seen).toHaveLength(2);
    expect(written.map((event) => event.type)).toEqual(["tool_call_start", "tool_call_decision", "tool_call_end"]);
    const [start, decision, end] = written.map((event) => event.fields);
    expect(JSON.stringify(start)).not.toContain("sk-live-0123456789abcdefghij");
    expect(start).toMatchObject({ request_id: "t1", tool: "Bash", call_id: call.audit?.callId, args_hash: call.audit?.argsHash });
    expect(decision).toEqual({ call_id: call.audit?.callId, tool: "Bash", decision: "deny", gate: "rules", rule_id: "no-rm", policy_id: null, reason: "rule no-rm denies it" });
    expect(end).toMatchObject({ call_id: call.audit?.callId, status: "denied", bytes_out: 42 });
  });

  test("a call that reached it undecided is recorded as a deny, not a forward", () => {
    const { stream, written } = events();
    const call = newCall();
    auditStage(new CallRecord(stream, () => true)).request?.(call, fakeNext(call).next);
    expect(written[1]?.fields).toMatchObject({ decision: "deny", reason: "no decision was reached" });
  });

  test("a call that ended before it was decided (withdrawn while it waited) records only its end, no decision", () => {
    const { stream, written } = events();
    const stage = auditStage(new CallRecord(stream, () => true));
    const call = newCall();
    call.status = "cancelled";
    const { next, seen } = fakeNext(call);
    stage.request?.(call, next);
    stage.response?.(call, next);
    expect(seen).toHaveLength(2);
    expect(written.map((event) => event.type)).toEqual(["tool_call_start", "tool_call_end"]);
    expect(written[1]?.fields).toMatchObject({ status: "cancelled" });
  });

  test("a call waiting for a person is in the record as pending while it waits, then its decision, under one start", () => {
    const { stream, written } = events();
    const record = new CallRecord(stream, () => true);
    const call = newCall();
    recordPending(record, call, "rule ask-first asks a person (key ghp_0123456789abcdefghijABCDEFGHIJ012345)");
    call.verdict = ALLOW;
    auditStage(record).request?.(call, fakeNext(call).next);
    expect(written.map((event) => [event.type, event.fields.decision])).toEqual([
      ["tool_call_start", undefined],
      ["tool_call_decision", "pending"],
      ["tool_call_decision", "forward"],
    ]);
    expect(written[1]?.fields).toMatchObject({ call_id: call.audit?.callId, tool: "Bash", gate: null, rule_id: null });
    expect(written[1]?.fields.reason).toBe("rule ask-first asks a person (key [REDACTED:github_token])");
    const off = events(false);
    const unread = newCall();
    recordPending(new CallRecord(off.stream, () => true), unread, "asks");
    expect({ written: off.written, audit: unread.audit }).toEqual({ written: [], audit: undefined });
  });

  test("a request with no params is recorded with no arguments", () => {
    const { stream, written } = events();
    const call = newCall();
    const request = { kind: "request" as const, id: "r1", method: "resources/read", params: undefined, body: { jsonrpc: "2.0" as const, id: "r1", method: "resources/read" } };
    const bare: Call = { ...call, request };
    bare.verdict = DENY;
    auditStage(new CallRecord(stream, () => true)).request?.(bare, fakeNext(bare).next);
    expect(written.map((event) => event.type)).toEqual(["tool_call_start", "tool_call_decision"]);
  });

  test("audit.arguments: hash keeps the arguments out of the record, and a forward by an always rule names the person's earlier yes", () => {
    const { stream, written } = events();
    const call = newCall({ path: "/etc/passwd" });
    call.verdict = { ...ALLOW, ruleId: "always-allow-7f3a" };
    auditStage(new CallRecord(stream, () => false)).request?.(call, fakeNext(call).next);
    expect(written[0]?.fields).not.toHaveProperty("arguments");
    expect(written[1]?.fields).toMatchObject({ decision: "forward", decided_by: { channel: "always_rule" } });
  });

  test("writes nothing when no one reads the record, and still runs the stages after it", () => {
    const { stream, written } = events(false);
    const call = newCall();
    call.verdict = ALLOW;
    const { next, seen } = fakeNext(call);
    auditStage(new CallRecord(stream, () => true)).request?.(call, next);
    expect({ written, seen }).toEqual({ written: [], seen: [ALLOW] });
  });
});

describe("the call record every front end writes through", () => {
  const decided = { gate: "approval", ruleId: "ask", policyId: "p1", reason: "asked", would: "WOULD_REQUIRE_APPROVAL", autoApproved: true, approvedBy: "web", decidedBy: { channel: "web" as const, who: "ana" }, personReason: "fine" };

  test("a forward carries how it was let through; a deny or a pending decision does not claim an approval", () => {
    expect(decisionFields("forward", decided, "asked")).toEqual({
      decision: "forward",
      gate: "approval",
      rule_id: "ask",
      policy_id: "p1",
      reason: "asked",
      would: "WOULD_REQUIRE_APPROVAL",
      auto_approved: true,
      approved_by: "web",
      decided_by: { channel: "web", who: "ana" },
      person_reason: "fine",
    });
    expect(decisionFields("deny", decided, "no")).toEqual({ decision: "deny", gate: "approval", rule_id: "ask", policy_id: "p1", reason: "no", decided_by: { channel: "web", who: "ana" }, person_reason: "fine" });
    expect(decisionFields("pending", null, "waiting")).toEqual({ decision: "pending", gate: null, rule_id: null, policy_id: null, reason: "waiting" });
    expect(decisionFields("pending", decided, "waiting")).not.toHaveProperty("decided_by");
    expect(decisionFields("deny", { gate: "rules", ruleId: "always-allow-x", reason: "r" }, "r")).not.toHaveProperty("decided_by");
    // Only the rules gate's "always allow" rule is a person's earlier yes; a forward with no rule, or another gate's id, is not.
    expect(decisionFields("forward", { gate: "cedar", ruleId: "always-allow-x", reason: "r" }, "r")).not.toHaveProperty("decided_by");
    expect(decisionFields("forward", { gate: "rules", ruleId: null, reason: "r" }, "r")).toEqual({ decision: "forward", gate: "rules", rule_id: null, policy_id: null, reason: "r" });
    expect(decisionFields("forward", null, "no decider")).toEqual({ decision: "forward", gate: null, rule_id: null, policy_id: null, reason: "no decider" });
  });

  test("start: a fresh id and the arguments' hash, the arguments as recorded, and the front end's own fields; end: the latency in ms", () => {
    const { stream, written } = events();
    const record = new CallRecord(stream, () => true);
    const first = record.start("a", "Bash", { command: "ls" }, { action: "run", requires_policy: true });
    const second = record.start("b", "Bash", { command: "ls" });
    expect(first.callId).not.toBe(second.callId);
    expect(first.argsHash).toBe(second.argsHash);
    expect(first.argsHash).toMatch(/^[0-9a-f]{64}$|^sha256:/);
    expect(written[0]?.fields).toEqual({ call_id: first.callId, request_id: "a", tool: "Bash", args_hash: first.argsHash, arguments: { command: "ls" }, action: "run", requires_policy: true });
    const startedAt = performance.now() - 250;
    record.end(first, "Bash", "ok", startedAt, 3);
    const latency = written[2]?.fields.latency_ms as number;
    expect(latency).toBeGreaterThanOrEqual(250);
    expect(latency).toBeLessThan(60_000);
    expect(written[2]?.fields).toMatchObject({ call_id: first.callId, tool: "Bash", args_hash: first.argsHash, status: "ok", bytes_out: 3 });
  });

  test("the audit stage ends nothing that has not ended, and writes nothing when no one reads the record", () => {
    const { stream, written } = events();
    const call = newCall();
    auditStage(new CallRecord(stream, () => true)).response?.(call, fakeNext(call).next);
    expect(written).toEqual([]);
    const off = events(false);
    call.status = "ok";
    auditStage(new CallRecord(off.stream, () => true)).response?.(call, fakeNext(call).next);
    expect(off.written).toEqual([]);
  });
});

describe("a front end that is not MCP (docs/architecture.md, the hooks example)", () => {
  test("builds a Call from a tool name and input JSON, and runs decide → audit → its own answer, then the end on the way back", async () => {
    const { stream, written } = events();
    const record = new CallRecord(stream, () => true);
    const replies: Array<Verdict | undefined> = [];
    const answer: Stage = { name: "forward", request: (call, next) => (replies.push(call.verdict), next(call)) };
    const decideAndRecord = compose<Call>([decideStage({ decide: () => Promise.resolve(DENY) }, context), auditStage(record), answer], "request");
    const call = callOf("hooks", "claude-code", toolCallRequest("toolu_1", "Bash", { command: "rm -rf /" }));
    await decideAndRecord(call);
    call.status = "denied";
    compose<Call>([auditStage(record)], "response")(call);
    expect(replies).toEqual([DENY]);
    expect(written.map((event) => [event.type, event.fields.decision ?? event.fields.status ?? event.fields.tool])).toEqual([
      ["tool_call_start", "Bash"],
      ["tool_call_decision", "deny"],
      ["tool_call_end", "denied"],
    ]);
  });
});
