import { describe, expect, test } from "bun:test";
import { CallAssembler } from "../../src/record/call-assembler.ts";
import type { LogCall } from "../../src/record/log-call.ts";
import { renderDecidedCalls } from "../../src/wrap/session-record.ts";

const envelope = (seq: number) => ({ v: 1, ts: `2026-11-28T10:00:0${seq}.000Z`, run_id: "r1", server_id: "fs", profile: "production", seq });

function assemble(events: object[]): LogCall[] {
  const assembler = new CallAssembler({ session: "s1", fileKey: "f", loadCall: () => null, loadRun: () => null });
  for (const event of events) assembler.add(event as Record<string, unknown>);
  return [...assembler.changed.values()];
}

const start = (id: string, tool: string, args: object) => ({ ...envelope(2), type: "tool_call_start", call_id: id, request_id: 1, tool, args_hash: "h", arguments: args });
const end = (id: string, status: string) => ({ ...envelope(5), type: "tool_call_end", call_id: id, tool: "t", args_hash: "h", status, latency_ms: 3.5, bytes_out: 99 });

describe("calls assembled from the record", () => {
  test("who decided: decided_by and the person's words where the record has them", () => {
    const [call] = assemble([
      { ...envelope(1), type: "run_start", started_at: "x", pid: 1, server_command: [], policy: "p", version: "v", agent_command: ["claude", "-p", "hi"], project: "/home/u/site" },
      start("c1", "move_file", { source: "/a" }),
      { ...envelope(3), type: "tool_call_decision", call_id: "c1", tool: "move_file", decision: "pending", gate: null, rule_id: null, policy_id: null, reason: "rule moves: approval required (task t1)" },
      { ...envelope(4), type: "tool_call_decision", call_id: "c1", tool: "move_file", decision: "deny", gate: "approval", rule_id: "moves", policy_id: null, reason: "rule moves: rejected (slack)", decided_by: { channel: "slack", who: "U042" }, person_reason: "wrong folder" },
      end("c1", "denied"),
    ]);
    expect(call).toMatchObject({
      call_id: "c1",
      session: "s1",
      agent: "claude",
      project: "/home/u/site",
      arguments: { source: "/a" },
      decision: "deny",
      outcome: "denied",
      asked: true,
      decided_by: { channel: "slack", who: "U042" },
      person_reason: "wrong folder",
      latency_ms: 3.5,
      trail: [{ decision: "pending" }, { decision: "deny", gate: "approval" }],
    });
  });

  test("an older record: approved_by names the channel; a session grant is no person's approval of this call; a refusal's reason names its channel", () => {
    const calls = assemble([
      start("a", "move_file", {}),
      { ...envelope(3), type: "tool_call_decision", call_id: "a", tool: "move_file", decision: "forward", gate: "approval", rule_id: "moves", policy_id: null, reason: "ok: approved (web)", approved_by: "web" },
      end("a", "ok"),
      start("b", "move_file", {}),
      { ...envelope(3), type: "tool_call_decision", call_id: "b", tool: "move_file", decision: "forward", gate: "approval", rule_id: "moves", policy_id: null, reason: "granted", approved_by: "session_grant:t9" },
      end("b", "error"),
      start("c", "move_file", {}),
      { ...envelope(3), type: "tool_call_decision", call_id: "c", tool: "move_file", decision: "deny", gate: "approval", rule_id: "moves", policy_id: null, reason: "rule moves: approval required: rejected (cli)" },
      end("c", "denied"),
    ]);
    const by = Object.fromEntries(calls.map((call) => [call.call_id, [call.outcome, call.decided_by?.channel ?? null, call.asked]]));
    expect(by).toEqual({ a: ["approved", "web", true], b: ["errored", "session_grant", false], c: ["denied", "cli", true] });
  });

  test("wrap's summary lists the denied and the person-approved calls with who and why, redacted, and the log command", () => {
    const calls = assemble([
      start("a", "move_file", { source: "/src/a.txt", destination: "/dst" }),
      { ...envelope(3), type: "tool_call_decision", call_id: "a", tool: "move_file", decision: "forward", gate: "approval", rule_id: "moves", policy_id: null, reason: "approved", decided_by: { channel: "cli", who: "alice" }, person_reason: "fine, token ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
      end("a", "ok"),
      start("b", "write_file", { path: "/x", content: "password: hunter2" }),
      { ...envelope(3), type: "tool_call_decision", call_id: "b", tool: "write_file", decision: "deny", gate: "rules", rule_id: "no-writes", policy_id: null, reason: "rule no-writes: deny" },
      end("b", "denied"),
    ]);
    expect(renderDecidedCalls(calls, "s1")).toBe(
      [
        "  denied:",
        '    fs.write_file {"path":"/x","content":"password: [REDACTED:secret_field]"} by rules: rule no-writes: deny',
        "  approved by a person:",
        '    fs.move_file {"source":"/src/a.txt","destination":"/dst"} by cli alice: fine, token [REDACTED:github_token]',
        "  every call: thoughtgate log --session s1",
      ].join("\n"),
    );
  });
});
