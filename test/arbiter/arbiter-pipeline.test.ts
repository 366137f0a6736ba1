/**
 * The arbiter's calls through the shared stages, without the binary: a `tool.request` becomes a
 * `Call` (origin arbiter), the decide stage asks a fake decider (or the arbiter's own, on a fake
 * engine and approver), the audit stage records it through the one `CallRecord`, and the arbiter's
 * forward writes the decision on the control channel (docs/codecli-protocol.md). test/e2e/arbiter.test.ts
 * holds the same through the compiled binary.
 */
import { describe, expect, test } from "bun:test";
import { Arbiter } from "../../src/arbiter/arbiter.ts";
import type { ArbiterDeciding } from "../../src/arbiter/arbiter-decider.ts";
import type { ControlChannel } from "../../src/arbiter/control-channel.ts";
import type { AbortCode, ControlMessage, ToolRequest } from "../../src/arbiter/protocol.ts";
import type { ApprovalQuestion, Approver } from "../../src/arbiter/terminal-approver.ts";
import type { EngineHolder } from "../../src/governance/engine/engine-holder.ts";
import type { Decider, Verdict } from "../../src/governance/verdict/decider.ts";
import type { EventStream } from "../../src/telemetry/events.ts";

const ALLOW: Verdict = { action: "forward", gate: "rules", ruleId: "reads", policyId: null, reason: "rule reads: forward" };
const DENY: Verdict = { action: "deny", gate: "rules", ruleId: "no-shell", policyId: null, reason: "rule no-shell: deny", error: { code: -32014, message: "denied" } };

const request = (id: string, tool: string, extra: Partial<ToolRequest> = {}): ToolRequest => ({ v: 1, type: "tool.request", id, tool, args: { path: "a" }, requires_policy: true, ...extra });

/** Resolves once `done()` holds (checked each turn of the event loop). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

/** An approver nobody answers: it hears only its question's signal. */
const silent: Approver = {
  ask: (question: ApprovalQuestion) => new Promise((resolve) => question.signal.addEventListener("abort", () => resolve("cancelled"), { once: true })),
  interrupt: () => false,
  close: () => {},
};

function arbiterWith(decide: Decider["decide"] | null, options: { engine?: unknown; approver?: Approver } = {}) {
  const sent: ControlMessage[] = [];
  const written: Array<{ type: string; fields: Record<string, unknown> }> = [];
  const aborts: AbortCode[] = [];
  const control = { sent: 0, send: (message: ControlMessage) => (sent.push(message), true) } as unknown as ControlChannel;
  const events = { enabled: true, dropped: 0, emit: (type: string, fields: Record<string, unknown>) => written.push({ type, fields }) } as unknown as EventStream;
  const decider: ArbiterDeciding | undefined =
    decide === null ? undefined : { decide, auditArguments: () => true, unwaited: { decide }, endsSession: () => false };
  const arbiter = new Arbiter({
    engines: { engine: options.engine, label: "test" } as unknown as Pick<EngineHolder, "engine" | "label">,
    profile: "production",
    serverId: "codecli",
    runId: "run-1",
    defaultAction: "deny",
    decisionTimeoutMs: 60_000,
    control,
    approver: options.approver ?? silent,
    events,
    onAbort: (code) => aborts.push(code),
    ...(decider ? { decider } : {}),
  });
  const send = (event: ToolRequest) => arbiter.handle({ kind: "request", event });
  const record = () => written.filter((event) => event.type.startsWith("tool_call_")).map((event) => [event.type, event.fields.decision ?? event.fields.status ?? null]);
  return { arbiter, sent, written, aborts, send, record };
}

describe("the arbiter's call through the shared stages", () => {
  test("an allow: the decision goes to the child, the record has the start (with the protocol's fields), the decision and, on its result, the end", () => {
    const { arbiter, sent, written, send, record } = arbiterWith(() => ALLOW);
    send(request("t-1", "fs.read", { action: "read" }));
    expect(sent).toMatchObject([{ type: "policy.decision", id: "t-1", decision: "allow", reason: "rule reads: forward", rule_id: "reads" }]);
    arbiter.handle({ kind: "result", event: { v: 1, type: "tool.result", id: "t-1", ok: true } });
    expect(record()).toEqual([
      ["tool_call_start", null],
      ["tool_call_decision", "forward"],
      ["tool_call_end", "ok"],
    ]);
    expect(written[0]?.fields).toMatchObject({ request_id: "t-1", tool: "fs.read", action: "read", requires_policy: true, arguments: { path: "a" } });
    expect(arbiter.summary).toMatchObject({ requests_total: 1, allowed: 1, denied: 0 });
  });

  test("a deny is sent and recorded with its gate and reason, and the call ends there", () => {
    const { sent, written, send, record } = arbiterWith(() => DENY);
    send(request("s-1", "shell.exec"));
    expect(sent).toMatchObject([{ id: "s-1", decision: "deny", reason: "rule no-shell: deny", rule_id: "no-shell" }]);
    expect(record()).toEqual([
      ["tool_call_start", null],
      ["tool_call_decision", "deny"],
      ["tool_call_end", "denied"],
    ]);
    expect(written[1]?.fields).toMatchObject({ tool: "shell.exec", gate: "rules", rule_id: "no-shell", reason: "rule no-shell: deny" });
  });

  test("a decider that throws or rejects: the child gets a deny, never an allow, and the record says so", async () => {
    for (const decide of [
      () => {
        throw new Error("engine broke");
      },
      () => Promise.reject(new Error("engine broke")),
    ] as Decider["decide"][]) {
      const { sent, written, send, record } = arbiterWith(decide);
      send(request("x-1", "fs.write"));
      await until(() => sent.length > 0);
      expect(sent).toMatchObject([{ id: "x-1", decision: "deny", reason: "decision failed", rule_id: null }]);
      expect(record()).toEqual([
        ["tool_call_start", null],
        ["tool_call_decision", "deny"],
        ["tool_call_end", "denied"],
      ]);
      expect(written[1]?.fields).toMatchObject({ gate: "governance", reason: "decision failed" });
    }
  });

  test("an abort denies every call still waiting for a person first, then writes policy.abort (docs/codecli-protocol.md §3.4)", async () => {
    // The arbiter's own decider, on an engine that asks a person about every call; nobody answers.
    const approve = { kind: "approve", ruleId: "ask", policyId: null, reason: "rule ask: approval required", workflowName: "default", workflow: { destination: { type: "any" }, timeout: 60_000, on_timeout: "deny" } };
    const engine = { evaluate: () => approve, auditArguments: () => true };
    const { arbiter, sent, send, record, aborts } = arbiterWith(null, { engine });
    send(request("w-1", "fs.write"));
    send(request("w-2", "fs.write"));
    expect(sent).toEqual([]);
    expect(record()).toEqual([
      ["tool_call_start", null],
      ["tool_call_decision", "pending"],
      ["tool_call_start", null],
      ["tool_call_decision", "pending"],
    ]);
    arbiter.abort("user_cancel", "thoughtgate arbiter received SIGTERM");
    await arbiter.aborted();
    expect(sent.map((message) => [message.type, "id" in message ? message.id : null, "decision" in message ? message.decision : null, "reason" in message ? message.reason : null])).toEqual([
      ["policy.decision", "w-1", "deny", "session aborted: thoughtgate arbiter received SIGTERM"],
      ["policy.decision", "w-2", "deny", "session aborted: thoughtgate arbiter received SIGTERM"],
      ["policy.abort", "abort-1", null, "thoughtgate arbiter received SIGTERM"],
    ]);
    expect(aborts).toEqual(["user_cancel"]);
    // Nothing is decided after an abort.
    send(request("w-3", "fs.write"));
    expect(sent).toHaveLength(3);
  });

  test("a call still waiting when the child goes away gets no decision: its record ends cancelled", async () => {
    const approve = { kind: "approve", ruleId: "ask", policyId: null, reason: "rule ask: approval required", workflowName: "default", workflow: { destination: { type: "any" }, timeout: 60_000, on_timeout: "deny" } };
    const { arbiter, sent, record } = (() => {
      const made = arbiterWith(null, { engine: { evaluate: () => approve, auditArguments: () => true } });
      made.send(request("w-1", "fs.write"));
      return made;
    })();
    arbiter.close();
    await until(() => record().length === 3);
    // The withdrawn decision settles a turn later: it must add nothing, neither a decision nor a line to the child.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    expect(record()).toEqual([
      ["tool_call_start", null],
      ["tool_call_decision", "pending"],
      ["tool_call_end", "cancelled"],
    ]);
  });
});
