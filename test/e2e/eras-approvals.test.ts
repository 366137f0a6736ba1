/**
 * Approvals of 2026-07-28 calls that the agent's user does not decide in time, or that a person
 * decides outside the agent, through the compiled shim against tmcp (`--era modern`). The shim
 * answers the call with `input_required` at once; what the agent's retry meets depends on what
 * happened meanwhile: the workflow's timeout (`on_timeout`), or under `thoughtgate serve` a
 * decision by `thoughtgate approve` / `deny` (docs/governance.md, "Approvals").
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent, type Received } from "../support/raw-agent.ts";
import { ServeProcess } from "../support/serve.ts";
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(30_000);
requireBinary();

const meta = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});
const ELICIT = { elicitation: { form: {} } };
const SERVER = fixture("tmcp-server-fixture.ts", "--era", "modern");
const ONCE = { action: "accept", content: { decision: "once" } };
const NO_ONE = { action: "cancel" };

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

type Shim = { agent: RawAgent; events: () => Array<Record<string, unknown>> };

function shim(dir: string, args: string[], env: Record<string, string | undefined> = process.env): Shim {
  const events = join(dir, "events.jsonl");
  const agent = new RawAgent(["--server-id", "notes", "--events", events, ...args, "--", ...SERVER], env);
  agents.push(agent);
  return { agent, events: () => readEvents(events) };
}

const text = (answer: Received) => String(answer.result?.content?.[0]?.text ?? "");
const call = (id: string) => ({ name: "delete_note", arguments: { id } });

/** The first request: answered by the shim with its `input_required` question. */
async function ask(agent: RawAgent, id: number, note: string): Promise<string> {
  const first = await agent.request(id, "tools/call", { ...call(note), _meta: meta(ELICIT) });
  expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { thoughtgate_approval: { method: "elicitation/create" } } });
  return String(first.result.requestState);
}

/** The agent's retry of the same call, carrying `answer` to the question and the shim's state. */
async function retry(agent: RawAgent, id: number, note: string, state: string, answer: Record<string, unknown>): Promise<Received> {
  await personReads();
  return agent.request(id, "tools/call", { ...call(note), inputResponses: { thoughtgate_approval: answer }, requestState: state, _meta: meta(ELICIT) });
}

const decisions = (events: Shim["events"]) => events().filter((e) => e.type === "tool_call_decision");

describe("a standalone shim: no answer before the workflow's timeout", () => {
  const policy = (onTimeout: string) =>
    `schema: 1\ngovernance:\n  rules:\n    - { id: ask-delete, match: delete_note, action: approve, approval: quick }\napproval:\n  quick: { timeout: 300ms, on_timeout: ${onTimeout} }\n`;

  function standalone(dir: string, onTimeout: string): Shim {
    writeFileSync(join(dir, "thoughtgate.yaml"), policy(onTimeout));
    return shim(dir, ["--thoughtgate-config", join(dir, "thoughtgate.yaml")]);
  }

  test("on_timeout deny: the retry that comes after the timeout gets -32008 however it answers, the server never runs it, and the audit says why", async () => {
    using dir = tempDir();
    const { agent, events } = standalone(dir.path, "deny");
    const state = await ask(agent, 1, "a");
    // The timeout is the call's decision, recorded as soon as it fires (before any retry).
    const timedOut = await waitFor(() => decisions(events).find((e) => e.decision === "deny"), "the timeout's decision in the audit");
    expect(timedOut).toMatchObject({ tool: "delete_note", gate: "approval", rule_id: "ask-delete", reason: "rule ask-delete: approval required: no answer in 300 ms; the call was not made; the person may not have seen the question in time: call the tool again to ask them again" });

    const late = await retry(agent, 2, "a", state, ONCE);
    expect(late.error).toMatchObject({ code: -32008, data: { gate: "approval", rule_id: "ask-delete", tool: "delete_note", reason: "rule ask-delete: approval required: no answer in 300 ms; the call was not made; the person may not have seen the question in time: call the tool again to ask them again" } });
    expect(late.error?.message).toBe("ThoughtGate blocked tools/call delete_note: rule ask-delete: approval required: no answer in 300 ms; the call was not made; the person may not have seen the question in time: call the tool again to ask them again");
    expect(text(await agent.request(3, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: meta({}) }))).toBe("first note");
    expect(await agent.close()).toBe(0);
    const ends = events().filter((e) => e.type === "tool_call_end" && e.tool === "delete_note").map((e) => e.status);
    expect(ends).toEqual(["input_required", "denied"]);
    expect(decisions(events).filter((e) => e.tool === "delete_note").map((e) => e.decision)).toEqual(["pending", "deny", "deny"]);
  });

  test("on_timeout approve: the retry after the timeout runs once, recorded as approved by the timeout", async () => {
    using dir = tempDir();
    const { agent, events } = standalone(dir.path, "approve");
    const state = await ask(agent, 1, "a");
    await waitFor(() => decisions(events).find((e) => e.decision === "forward"), "the timeout's decision in the audit");

    expect(text(await retry(agent, 2, "a", state, NO_ONE))).toBe("deleted a");
    // Used once: the same state again is a new call, asked about again, never a second run.
    expect((await retry(agent, 3, "a", state, ONCE)).result).toMatchObject({ resultType: "input_required" });
    expect(await agent.close()).toBe(0);
    const forwarded = decisions(events).filter((e) => e.decision === "forward");
    expect(forwarded.map((e) => [e.approved_by, e.reason])).toEqual([
      ["timeout", "rule ask-delete: approval required: no answer in 300 ms, approved by on_timeout"],
      ["timeout", "rule ask-delete: approval required: no answer in 300 ms, approved by on_timeout"],
    ]);
  });
  for (const [how, answer] of [
    ["chooses Deny", { action: "accept", content: { decision: "deny" } }],
    ["declines the form", { action: "decline" }],
  ] as const) {
    test(`on_timeout approve, but the person's late retry ${how}: their no wins, -32007, and the server never runs the call`, async () => {
      using dir = tempDir();
      const { agent, events } = standalone(dir.path, "approve");
      const state = await ask(agent, 1, "a");
      await waitFor(() => decisions(events).find((e) => e.decision === "forward"), "the timeout's decision in the audit");

      const late = await retry(agent, 2, "a", state, answer);
      expect(late.error).toMatchObject({ code: -32007, data: { gate: "approval", rule_id: "ask-delete", tool: "delete_note" } });
      expect(late.error?.data?.reason).toContain("rejected by the user");
      expect(text(await agent.request(3, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: meta({}) }))).toBe("first note");
      expect(await agent.close()).toBe(0);
      expect(decisions(events).filter((e) => e.tool === "delete_note").map((e) => [e.decision, e.approved_by ?? null])).toEqual([
        ["pending", null],
        ["forward", "timeout"],
        ["deny", null],
      ]);
    });
  }
});

describe("under a governance service: decided outside the agent", () => {
  const CONFIG = `schema: 1
governance:
  defaults: { action: forward }
  rules:
    - { id: ask-delete, match: delete_note, action: approve, approval: human }
    - { id: ask-confirm, match: confirm_action, action: approve, approval: impatient }
approval:
  human: { timeout: 30s }
  impatient: { timeout: 1s }
`;
  const dir = tempDir();
  let serve: ServeProcess;
  beforeAll(async () => {
    writeFileSync(join(dir.path, "thoughtgate.yaml"), CONFIG);
    serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")]);
  });
  afterAll(async () => {
    await serve.stop();
    dir[Symbol.dispose]();
  });

  function governed(path: string): Shim {
    return shim(path, ["--governance-endpoint", serve.endpoint], { ...process.env, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret });
  }

  type TaskRow = { task_id: string; status: string; name: string; arguments: Record<string, unknown>; decided_by?: string };
  async function tasks(): Promise<TaskRow[]> {
    return JSON.parse((await tasksAtTerminal(["--json", "--all"], { env: serve.cliEnv })).stdout) as TaskRow[];
  }
  /** The service's task for this tool and these arguments once it is in `status`. */
  function task(name: string, args: Record<string, unknown>, status: string): Promise<TaskRow> {
    const same = (row: TaskRow) => row.name === name && JSON.stringify(row.arguments) === JSON.stringify(args) && row.status === status;
    return waitFor(async () => (await tasks()).find(same), `a ${status} task for ${name}`);
  }

  test("the agent answers for no one (cancel): its retry waits, and `thoughtgate approve` lets it run once", async () => {
    using own = tempDir();
    const { agent, events } = governed(own.path);
    const state = await ask(agent, 1, "a");
    agent.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { ...call("a"), inputResponses: { thoughtgate_approval: NO_ONE }, requestState: state, _meta: meta(ELICIT) } });
    const waiting = await task("delete_note", { id: "a" }, "pending");
    // Meanwhile the connection is not blocked: another call is answered while the retry waits.
    agent.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_note", arguments: { id: "b" }, _meta: meta({}) } });
    const other = await agent.until(3);
    expect(text(other.match)).toBe("second note");
    expect(other.before).toEqual([]);
    expect(await decideAtTerminal(["approve", waiting.task_id], { env: serve.cliEnv })).toMatchObject({ exitCode: 0 });
    expect(text((await agent.until(2)).match)).toBe("deleted a");
    expect(text(await agent.request(4, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: meta({}) }))).toBe("no note a");
    expect(await agent.close()).toBe(0);
    expect(decisions(events).filter((e) => e.decision === "forward" && e.tool === "delete_note").map((e) => e.approved_by)).toEqual(["cli"]);
  });

  test("approved with `thoughtgate approve` before the agent retries: the retry runs under that decision", async () => {
    using own = tempDir();
    const { agent, events } = governed(own.path);
    const state = await ask(agent, 1, "b");
    const waiting = await task("delete_note", { id: "b" }, "pending");
    expect(await decideAtTerminal(["approve", waiting.task_id], { env: serve.cliEnv })).toMatchObject({ exitCode: 0 });
    // The shim has the decision (it audits it for the first request) before the agent retries.
    expect(await waitFor(() => decisions(events).find((e) => e.decision === "forward"), "the shim to take the decision")).toMatchObject({ approved_by: "cli" });
    expect(text(await retry(agent, 2, "b", state, NO_ONE))).toBe("deleted b");
  });

  test("`thoughtgate deny` while the retry waits: -32007 naming the task, and the server never runs it", async () => {
    using own = tempDir();
    const { agent } = governed(own.path);
    const state = await ask(agent, 1, "a");
    const pending = retry(agent, 2, "a", state, NO_ONE);
    const waiting = await task("delete_note", { id: "a" }, "pending");
    expect(await decideAtTerminal(["deny", waiting.task_id, "--reason", "not this one"], { env: serve.cliEnv })).toMatchObject({ exitCode: 0 });
    expect((await pending).error).toMatchObject({ code: -32007, data: { gate: "approval", rule_id: "ask-delete", task_id: waiting.task_id } });
    expect(text(await agent.request(3, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: meta({}) }))).toBe("first note");
  });

  test("the agent's user approves in the retry: the answer is relayed, and the task is recorded as decided through the agent", async () => {
    using own = tempDir();
    const { agent } = governed(own.path);
    const state = await ask(agent, 1, "a");
    expect(text(await retry(agent, 2, "a", state, ONCE))).toBe("deleted a");
    expect(await task("delete_note", { id: "a" }, "approved")).toMatchObject({ decided_by: "elicitation" });
  });

  test("nobody decides before the workflow's timeout: the waiting retry gets -32008, the task is timed out, the audit says so", async () => {
    using own = tempDir();
    const { agent, events } = governed(own.path);
    const args = { action: "wipe" };
    const first = await agent.request(1, "tools/call", { name: "confirm_action", arguments: args, _meta: meta(ELICIT) });
    expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { thoughtgate_approval: {} } });
    const late = await agent.request(2, "tools/call", { name: "confirm_action", arguments: args, inputResponses: { thoughtgate_approval: NO_ONE }, requestState: first.result.requestState, _meta: meta(ELICIT) });
    expect(late.error).toMatchObject({ code: -32008, data: { gate: "approval", rule_id: "ask-confirm" } });
    expect(late.error?.message).toContain("no answer before the approval timed out");
    expect(await task("confirm_action", args, "timed_out")).toBeDefined();
    expect(await agent.close()).toBe(0);
    // One deny (the waiting retry's), or two when the timeout came before the retry (the first call's too).
    const denied = decisions(events).filter((e) => e.decision === "deny");
    expect([...new Set(denied.map((e) => e.reason))]).toEqual(["rule ask-confirm: approval required: no answer before the approval timed out; the call was not made; the person may not have seen the question in time: call the tool again to ask them again"]);
    expect(events().filter((e) => e.type === "tool_call_end").map((e) => e.status)).toEqual(["input_required", "denied"]);
  });
});
