/**
 * The hooks front end's pipeline with a fake decider: the Call it builds goes through the shared
 * decide and audit stages, so a mutant in how the hook decides or records is caught without the
 * binary (the e2e tests in test/e2e/hook.test.ts hold the same through it).
 */
import { describe, expect, test } from "bun:test";
import { argsHash } from "../../src/core/canonical-json.ts";
import type { DecisionContext, Decider, Verdict } from "../../src/governance/verdict/decider.ts";
import type { BuiltinCall } from "../../src/hook/builtin-call.ts";
import { recordHookCallRan, runHookCall } from "../../src/hook/hook-pipeline.ts";
import { CallRecord } from "../../src/pipeline/call-record.ts";
import { isDecisionFailure } from "../../src/pipeline/decision-failed.ts";
import type { EventStream } from "../../src/telemetry/events.ts";

const SHELL: BuiltinCall = { name: "shell", arguments: { command: "rm -rf ./data", commands: ["rm -rf ./data"], tool: "Bash" }, annotations: undefined };
const ALLOW: Verdict = { action: "forward", gate: "rules", ruleId: "agent-read-only-shell", reason: "rule agent-read-only-shell: forward" };
const DENY: Verdict = { action: "deny", gate: "rules", ruleId: "agent-no-rm", reason: "rule agent-no-rm: deny", error: { code: -32014, message: "denied" } };

function recorder() {
  const written: Array<{ type: string; fields: Record<string, unknown> }> = [];
  const stream = { enabled: true, emit: (type: string, fields: Record<string, unknown>) => written.push({ type, fields }) } as unknown as Pick<EventStream, "enabled" | "emit">;
  return { record: new CallRecord(stream, () => true), written, types: () => written.map((event) => event.type) };
}

const options = (agentCanPrompt = false) => ({ callId: "agent-toolu_01", signal: new AbortController().signal, agentCanPrompt });
const deciding = (decide: Decider["decide"]): Pick<Decider, "decide"> => ({ decide });

describe("the hook's call through the shared stages", () => {
  test("an allow records its start (the agent's call id, the command) and its decision; its end comes when the agent ran it", async () => {
    const { record, written, types } = recorder();
    let asked = null as { method: string; params: unknown; serverId: string } | null;
    const outcome = await runHookCall(SHELL, deciding((request, context) => ((asked = { method: request.method, params: request.params, serverId: context.serverId }), ALLOW)), record, options());
    expect(outcome).toEqual({ verdict: ALLOW, askedInAgent: null });
    expect(asked).toEqual({ method: "tools/call", params: { name: "shell", arguments: SHELL.arguments }, serverId: "agent" });
    expect(types()).toEqual(["tool_call_start", "tool_call_decision"]);
    expect(written[0]?.fields).toMatchObject({ call_id: "agent-toolu_01", request_id: "hook-agent-toolu_01", tool: "shell", arguments: { command: "rm -rf ./data" } });
    expect(written[1]?.fields).toEqual({ call_id: "agent-toolu_01", tool: "shell", decision: "forward", gate: "rules", rule_id: "agent-read-only-shell", policy_id: null, reason: "rule agent-read-only-shell: forward" });
    await recordHookCallRan(SHELL, record, "agent-toolu_01", 12);
    expect(types()).toEqual(["tool_call_start", "tool_call_decision", "tool_call_end"]);
    expect(written[2]?.fields).toMatchObject({ call_id: "agent-toolu_01", tool: "shell", status: "ok", bytes_out: 0, args_hash: written[0]?.fields.args_hash });
    expect(written[2]?.fields.latency_ms as number).toBeGreaterThanOrEqual(12);
  });

  test("a deny is recorded with its gate and reason, and ends there (status denied)", async () => {
    const { record, written, types } = recorder();
    const outcome = await runHookCall(SHELL, deciding(() => DENY), record, options());
    expect(outcome.verdict).toEqual(DENY);
    expect(types()).toEqual(["tool_call_start", "tool_call_decision", "tool_call_end"]);
    expect(written[1]?.fields).toMatchObject({ decision: "deny", gate: "rules", rule_id: "agent-no-rm", reason: "rule agent-no-rm: deny" });
    expect(written[2]?.fields).toMatchObject({ call_id: "agent-toolu_01", status: "denied", bytes_out: 0 });
  });

  test("a decider that gives no verdict at all: the hook refuses the call with the governance error, and records it so", async () => {
    const { record, written } = recorder();
    const { verdict } = await runHookCall(SHELL, deciding(() => undefined as unknown as Verdict), record, options());
    expect(verdict).toEqual({ action: "deny", gate: "governance", ruleId: null, reason: "no decision was reached", error: { code: -32603, message: "ThoughtGate reached no decision" } });
    expect(written.map((event) => [event.type, event.fields.decision ?? event.fields.status ?? null, event.fields.reason ?? null])).toEqual([
      ["tool_call_start", null, null],
      ["tool_call_decision", "deny", "no decision was reached"],
      ["tool_call_end", "denied", null],
    ]);
  });

  test("the decider is asked with the hook's deadline and no MCP form; the agent's mode comes with its prompt", async () => {
    const signal = new AbortController().signal;
    const seen: Array<Pick<DecisionContext, "signal" | "elicit" | "agentMode"> & { canAskInAgent: boolean }> = [];
    const decide = deciding((_request, context) => (seen.push({ signal: context.signal, elicit: context.elicit, agentMode: context.agentMode, canAskInAgent: context.askInAgent !== undefined }), ALLOW));
    await runHookCall(SHELL, decide, recorder().record, { callId: "c1", signal, agentCanPrompt: true, agentMode: "acceptEdits" });
    await runHookCall(SHELL, decide, recorder().record, { callId: "c2", signal, agentCanPrompt: true, agentMode: null });
    await runHookCall(SHELL, decide, recorder().record, { callId: "c3", signal, agentCanPrompt: false, agentMode: "acceptEdits" });
    expect(seen).toEqual([
      { signal, elicit: null, agentMode: "acceptEdits", canAskInAgent: true },
      { signal, elicit: null, agentMode: undefined, canAskInAgent: true },
      { signal, elicit: null, agentMode: undefined, canAskInAgent: false },
    ]);
  });

  test("a call the person allowed in the agent's own prompt: that yes is recorded as its decision, with its scope, before its end", async () => {
    for (const [scope, how] of [
      ["once", "allowed in the agent's own prompt, once"],
      ["session", "allowed in the agent's own prompt, with its edits for this session"],
    ] as const) {
      const { record, written, types } = recorder();
      await recordHookCallRan(SHELL, record, "agent-toolu_02", null, { scope, ruleId: "agent-ask" });
      expect(types()).toEqual(["tool_call_decision", "tool_call_end"]);
      expect(written[0]?.fields).toEqual({
        call_id: "agent-toolu_02",
        tool: "shell",
        decision: "forward",
        gate: "approval",
        rule_id: "agent-ask",
        policy_id: null,
        reason: how,
        decided_by: { channel: "agent_prompt", scope },
      });
      expect(written[1]?.fields).toMatchObject({ call_id: "agent-toolu_02", status: "ok", bytes_out: 0, args_hash: argsHash(SHELL.arguments) });
    }
  });

  test("a decider that throws or rejects is a deny the hook blocks on, recorded as one, never an allow", async () => {
    for (const decide of [
      () => {
        throw new Error("service gone");
      },
      () => Promise.reject(new Error("service gone")),
    ] as Decider["decide"][]) {
      const { record, written } = recorder();
      const { verdict } = await runHookCall(SHELL, deciding(decide), record, options());
      expect(verdict).toMatchObject({ action: "deny", gate: "governance", error: { message: "ThoughtGate could not decide: service gone" } });
      expect(isDecisionFailure(verdict)).toBe(true);
      expect(written.map((event) => [event.type, event.fields.decision ?? event.fields.status ?? null])).toEqual([
        ["tool_call_start", null],
        ["tool_call_decision", "deny"],
        ["tool_call_end", "denied"],
      ]);
    }
    expect(isDecisionFailure(DENY)).toBe(false);
  });

  test("a wait for a person is recorded while it waits; a question handed to the agent's prompt comes back with the verdict", async () => {
    const { record, written } = recorder();
    const handed: Verdict = { ...ALLOW, gate: "approval", reason: "asked in the agent's prompt", decidedBy: { channel: "agent_prompt" } };
    const decide = (_request: unknown, context: DecisionContext): Verdict => {
      context.awaitingApproval("rule agent-ask: approval required: asking");
      context.askInAgent?.("Allow rm -rf ./data?");
      return handed;
    };
    const outcome = await runHookCall(SHELL, deciding(decide as Decider["decide"]), record, options(true));
    expect(outcome).toEqual({ verdict: handed, askedInAgent: "Allow rm -rf ./data?" });
    expect(written.map((event) => [event.type, event.fields.decision ?? null])).toEqual([
      ["tool_call_start", null],
      ["tool_call_decision", "pending"],
      ["tool_call_decision", "forward"],
    ]);
    expect(written[2]?.fields).toMatchObject({ decided_by: { channel: "agent_prompt" } });
    // An agent that cannot show a prompt is offered none.
    let offered = true;
    await runHookCall(SHELL, deciding((_request, context) => ((offered = context.askInAgent !== undefined), ALLOW)), recorder().record, options(false));
    expect(offered).toBe(false);
  });
});
