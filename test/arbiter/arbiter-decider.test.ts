/**
 * The arbiter's decider alone, on a fake engine and a fake terminal: each answer a person can give
 * (or not give) becomes the verdict the child is sent, and what ends the session is told apart, so
 * a mutant in it is caught without the binary (docs/testing.md, "Mutation testing").
 */
import { describe, expect, test } from "bun:test";
import { ArbiterDecider, UNWAITED_DENY, Withdrawn } from "../../src/arbiter/arbiter-decider.ts";
import type { ApprovalAnswer, ApprovalQuestion, Approver } from "../../src/arbiter/terminal-approver.ts";
import type { Profile } from "../../src/core/profile.ts";
import type { JsonRpcRequest } from "../../src/core/jsonrpc.ts";
import type { EngineHolder } from "../../src/governance/engine/engine-holder.ts";
import type { EngineDecision } from "../../src/governance/engine/engine.ts";
import type { DecisionContext, Verdict } from "../../src/governance/verdict/decider.ts";
import { GOVERNANCE_ERROR } from "../../src/governance/verdict/errors.ts";

const request: JsonRpcRequest = {
  kind: "request",
  id: "w-1",
  method: "tools/call",
  params: { name: "fs.write", arguments: { path: "notes.txt" } },
  body: { jsonrpc: "2.0", id: "w-1", method: "tools/call", params: { name: "fs.write", arguments: { path: "notes.txt" } } },
};

const FORWARD: EngineDecision = { kind: "forward", gate: "rules", ruleId: "reads", policyId: "p-reads", reason: "rule reads: forward" };
const DENY: EngineDecision = { kind: "deny", block: { gate: "rules", code: GOVERNANCE_ERROR.ruleDenied, ruleId: "no-write", policyId: null, reason: "rule no-write: deny" } };
const approve = (on_timeout: "approve" | "deny" = "deny"): EngineDecision => ({
  kind: "approve",
  ruleId: "ask-writes",
  policyId: "p-ask",
  reason: "rule ask-writes: approval required",
  workflowName: "default",
  workflow: { destination: { type: "any" }, timeout: 1_500, on_timeout } as Extract<EngineDecision, { kind: "approve" }>["workflow"],
});

/** A terminal that answers `answer` (or never, for null) and keeps each question it was asked. */
function terminal(answer: ApprovalAnswer | null) {
  const asked: ApprovalQuestion[] = [];
  const approver: Approver = {
    ask: (question) => (asked.push(question), answer === null ? new Promise<ApprovalAnswer>(() => {}) : Promise.resolve(answer)),
    interrupt: () => false,
    close: () => {},
  };
  return { approver, asked };
}

function deciderWith(decision: EngineDecision, approver: Approver, options: { profile?: Profile; defaultAction?: "allow" | "deny"; decisionTimeoutMs?: number; action?: string | null } = {}) {
  const engine = { evaluate: () => decision, auditArguments: () => false };
  return new ArbiterDecider({
    engines: { engine, label: "team-policy" } as unknown as Pick<EngineHolder, "engine" | "label">,
    profile: options.profile ?? "production",
    serverId: "codecli",
    approver,
    defaultAction: options.defaultAction ?? "deny",
    decisionTimeoutMs: options.decisionTimeoutMs ?? 60_000,
    actionOf: () => (options.action === undefined ? "write" : options.action),
  });
}

function contextWith(signal = new AbortController().signal) {
  const waiting: string[] = [];
  const context: DecisionContext = { signal, serverId: "codecli", annotations: undefined, elicit: null, awaitingApproval: (reason) => waiting.push(reason) };
  return { context, waiting };
}

const denyOf = (verdict: Verdict) => (verdict.action === "deny" ? { code: verdict.error.code, reason: verdict.reason, gate: verdict.gate, decidedBy: verdict.decidedBy } : null);

describe("the arbiter's decider", () => {
  test("a forward and a deny of the engine are given at once, as the engine said them", () => {
    const { approver, asked } = terminal("approve");
    expect(deciderWith(FORWARD, approver).decide(request, contextWith().context)).toEqual({ action: "forward", gate: "rules", ruleId: "reads", policyId: "p-reads", reason: "rule reads: forward" });
    const denied = deciderWith(DENY, approver).decide(request, contextWith().context) as Verdict;
    expect(denied).toMatchObject({ action: "deny", gate: "rules", ruleId: "no-write", reason: "rule no-write: deny", error: { code: GOVERNANCE_ERROR.ruleDenied, message: "ThoughtGate blocked tools/call fs.write: rule no-write: deny" } });
    expect(asked).toEqual([]);
    // Development: what production would have asked about runs, and says so in the record.
    expect(deciderWith(approve(), approver, { profile: "development" }).decide(request, contextWith().context)).toEqual({
      action: "forward",
      gate: "approval",
      ruleId: "ask-writes",
      policyId: "p-ask",
      reason: "WOULD_REQUIRE_APPROVAL: rule ask-writes: approval required",
      would: "WOULD_REQUIRE_APPROVAL",
      autoApproved: true,
    });
    const decider = deciderWith(FORWARD, approver);
    expect({ policy: decider.policy, auditArguments: decider.auditArguments() }).toEqual({ policy: "team-policy", auditArguments: false });
  });

  test("an approval asks on the terminal, with the call and the question's time, and is recorded as waiting first", async () => {
    const { approver, asked } = terminal("approve");
    const { context, waiting } = contextWith();
    const verdict = await deciderWith(approve(), approver).decide(request, context);
    expect(waiting).toEqual(["rule ask-writes: approval required: asking on the terminal"]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.timeoutMs).toBe(1_500);
    expect(asked[0]?.text.split("\n")[0]).toBe("thoughtgate: codecli wants to run fs.write (action: write)");
    // The prompt under the first line, every line of it indented.
    const below = asked[0]?.text.split("\n").slice(1) ?? [];
    expect(below.length).toBeGreaterThan(1);
    expect(below.filter((line) => !line.startsWith("  "))).toEqual([]);
    expect(asked[0]?.text).toContain("notes.txt");
    expect(verdict).toEqual({ action: "forward", gate: "approval", ruleId: "ask-writes", policyId: "p-ask", reason: "rule ask-writes: approval required: approved on the terminal", approvedBy: "terminal" });
    // A request with no codecli action: the question names none.
    const plain = terminal("approve");
    await deciderWith(approve(), plain.approver, { action: null }).decide(request, contextWith().context);
    expect(plain.asked[0]?.text.split("\n")[0]).toBe("thoughtgate: codecli wants to run fs.write");
  });

  test("each answer at the terminal: a no, an abort (which ends the session), a timeout by the workflow's on_timeout", async () => {
    const rejected = deciderWith(approve(), terminal("reject").approver);
    const no = await rejected.decide(request, contextWith().context);
    expect(denyOf(no)).toEqual({ code: GOVERNANCE_ERROR.approvalRejected, gate: "approval", reason: "rule ask-writes: approval required: denied on the terminal", decidedBy: undefined });
    expect(rejected.endsSession(no)).toBe(false);

    const aborting = deciderWith(approve(), terminal("abort").approver);
    const aborted = await aborting.decide(request, contextWith().context);
    expect(denyOf(aborted)).toEqual({ code: GOVERNANCE_ERROR.approvalRejected, gate: "approval", reason: "rule ask-writes: approval required: the user aborted the session", decidedBy: undefined });
    expect(aborting.endsSession(aborted)).toBe(true);

    const timedOut = await deciderWith(approve("deny"), terminal("timeout").approver).decide(request, contextWith().context);
    expect(denyOf(timedOut)).toEqual({ code: GOVERNANCE_ERROR.approvalTimeout, gate: "approval", reason: "rule ask-writes: approval required: no answer in 1500 ms", decidedBy: { channel: "timeout" } });
    expect(await deciderWith(approve("approve"), terminal("timeout").approver).decide(request, contextWith().context)).toEqual({
      action: "forward",
      gate: "approval",
      ruleId: "ask-writes",
      policyId: "p-ask",
      reason: "rule ask-writes: approval required: no answer in 1500 ms, approved by on_timeout",
      approvedBy: "timeout",
      decidedBy: { channel: "timeout" },
    });
  });

  test("no terminal to ask on: --default-action decides, a deny unless it says allow", async () => {
    const denied = await deciderWith(approve(), terminal("no_terminal").approver, { defaultAction: "deny" }).decide(request, contextWith().context);
    expect(denyOf(denied)).toEqual({ code: GOVERNANCE_ERROR.approvalRejected, gate: "approval", reason: "rule ask-writes: approval required: no terminal to ask on; --default-action deny", decidedBy: undefined });
    expect(await deciderWith(approve(), terminal("no_terminal").approver, { defaultAction: "allow" }).decide(request, contextWith().context)).toEqual({
      action: "forward",
      gate: "approval",
      ruleId: "ask-writes",
      policyId: "p-ask",
      reason: "rule ask-writes: approval required: no terminal to ask on; --default-action allow",
      approvedBy: "default_action",
    });
  });

  test("a question nobody answers ends at the child's decision timeout, or when the session withdraws it, or the child goes away: a deny each time", async () => {
    // The terminal never answers and does not hear the signal: the decider's own race ends the wait.
    const timedOut = await deciderWith(approve(), terminal(null).approver, { decisionTimeoutMs: 30 }).decide(request, contextWith().context);
    expect(denyOf(timedOut)).toEqual({ code: GOVERNANCE_ERROR.approvalTimeout, gate: "approval", reason: "policy timeout: no decision in 30 ms", decidedBy: { channel: "timeout" } });

    const session = new AbortController();
    const withdrawn = deciderWith(approve(), terminal(null).approver).decide(request, contextWith(session.signal).context);
    session.abort(new Withdrawn("session aborted: the child ended"));
    expect(denyOf(await withdrawn)).toEqual({ code: GOVERNANCE_ERROR.taskCancelled, gate: "governance", reason: "session aborted: the child ended", decidedBy: undefined });

    // Withdrawn before the question was put: the terminal does not hear it, the decider does.
    const ended = new AbortController();
    ended.abort(new Withdrawn("session aborted: already over"));
    const late = await deciderWith(approve(), terminal(null).approver).decide(request, contextWith(ended.signal).context);
    expect(denyOf(late)).toEqual({ code: GOVERNANCE_ERROR.taskCancelled, gate: "governance", reason: "session aborted: already over", decidedBy: undefined });

    const gone = new AbortController();
    gone.abort();
    const cancelled = await deciderWith(approve(), terminal("cancelled").approver).decide(request, contextWith(gone.signal).context);
    expect(denyOf(cancelled)).toEqual({ code: GOVERNANCE_ERROR.taskCancelled, gate: "approval", reason: "rule ask-writes: approval required: cancelled", decidedBy: undefined });
  });

  test("a request the child ran without waiting: the same gates, nobody asked, and what production would not have let run unasked is a deny", () => {
    const { approver, asked } = terminal("approve");
    expect(deciderWith(FORWARD, approver).unwaited.decide(request, contextWith().context)).toEqual({
      action: "forward",
      gate: "rules",
      ruleId: "reads",
      policyId: "p-reads",
      reason: "not waited for (requires_policy: false); rule reads: forward",
    });
    expect(denyOf(deciderWith(DENY, approver).unwaited.decide(request, contextWith().context) as Verdict)).toEqual({
      code: GOVERNANCE_ERROR.ruleDenied,
      gate: "rules",
      reason: "ran without waiting for a decision (requires_policy: false), but rule no-write: deny",
      decidedBy: undefined,
    });
    const unasked = deciderWith(approve(), approver).unwaited.decide(request, contextWith().context) as Verdict;
    expect(unasked).toMatchObject({ action: "deny", gate: "approval", ruleId: "ask-writes", policyId: "p-ask", reason: `${UNWAITED_DENY}rule ask-writes: approval required`, error: { code: GOVERNANCE_ERROR.approvalRejected } });
    expect(asked).toEqual([]);
  });
});
