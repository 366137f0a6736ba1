/**
 * A person's decision travels: who decided (the channel, and who where it is known) and their own
 * words reach the shim's record (`tool_call_decision`: `decided_by`, `person_reason`), and a no with
 * a reason reaches the model in the deny error (its message and `error.data.person_reason`),
 * redacted and escaped. Through the compiled binaries: `thoughtgate serve`, `thoughtgate shim
 * --governance-endpoint --events`, `thoughtgate approve|deny`, the MCP SDK client as the agent.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";

/** Who decided, as the service names a person: the passwd entry of the uid it runs as (not $USER, which the test sets to "ada"). */
const who = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";

setDefaultTimeout(60_000);

const POLICY = `schema: 1
governance:
  rules:
    - { id: always-allow-everything-get-sum, match: get-sum, action: forward }
    - { id: ask-echo, match: echo, action: approve }
`;

const dir = tempDir();
const events = join(dir.path, "events.jsonl");
let serve: ServeProcess;
let client: Client;

beforeAll(async () => {
  writeFileSync(join(dir.path, "thoughtgate.yaml"), POLICY);
  serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")], { env: { USER: "ada", THOUGHTGATE_DESKTOP_NOTIFY: "off" } });
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "everything", "--governance-endpoint", serve.endpoint, "--events", events, "--", ...EVERYTHING_SERVER],
    env: { ...(process.env as Record<string, string>), THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    stderr: "ignore",
  });
  client = new Client({ name: "reason-e2e", version: "1" });
  await client.connect(transport);
});

afterAll(async () => {
  await client.close();
  await serve.stop();
  dir[Symbol.dispose]();
});

/** `thoughtgate approve|deny …` as a person runs it: at a terminal, confirming with y. */
async function cli(...args: string[]) {
  const run = await decideAtTerminal(args, { env: { ...process.env, ...serve.cliEnv } });
  return { code: run.exitCode, err: run.stderr };
}

async function pendingTask(message: string): Promise<string> {
  return waitFor(async () => {
    const listed = await tasksAtTerminal(["--json"], { env: { ...process.env, ...serve.cliEnv } });
    const tasks = JSON.parse(listed.stdout || "[]") as Array<{ task_id: string; status: string; arguments: { message?: string } }>;
    return tasks.find((t) => t.status === "pending" && t.arguments.message === message)?.task_id;
  }, `the task for ${message}`);
}

const decisions = () => readEvents(events).filter((e) => e.type === "tool_call_decision" && e.decision !== "pending");

test("a no with a reason: the model reads the person's words in the error; the record says who and why", async () => {
  const call = client.callTool({ name: "echo", arguments: { message: "push to main" } }).catch((error: unknown) => error);
  const id = await pendingTask("push to main");
  expect((await cli("deny", id, "--reason", "not main\u202e; token ghp_abcdefghijklmnopqrstuvwxyz0123456789")).code).toBe(0);
  const error = (await call) as McpError;
  expect(error).toBeInstanceOf(McpError);
  const words = "not main\\u202e; token [REDACTED:github_token]";
  expect(error.message).toEndWith(`rule ask-echo: approval required: rejected with thoughtgate deny by ${who}; the person said: "${words}"`);
  expect(error.data).toMatchObject({ gate: "approval", person_reason: words, task_id: id });
  await waitFor(() => decisions().length === 1, "the decision in the record");
  expect(decisions()[0]).toMatchObject({ tool: "echo", decision: "deny", decided_by: { channel: "cli", who }, person_reason: words });
});

test("a yes with a reason: the call runs, and the record keeps who, why and how far the yes reaches; a forward by an always rule says so", async () => {
  const call = client.callTool({ name: "echo", arguments: { message: "release notes" } });
  const id = await pendingTask("release notes");
  expect((await cli("approve", id, "--reason", "fine for the release")).code).toBe(0);
  expect((await call).content).toEqual([{ type: "text", text: "Echo: release notes" }]);
  expect((await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } })).isError).toBeFalsy();
  await waitFor(() => decisions().length === 3, "both decisions in the record");
  expect(decisions().slice(1)).toEqual([
    expect.objectContaining({ tool: "echo", decision: "forward", approved_by: "cli", decided_by: { channel: "cli", who, scope: "once" }, person_reason: "fine for the release" }),
    expect.objectContaining({ tool: "get-sum", decision: "forward", rule_id: "always-allow-everything-get-sum", decided_by: { channel: "always_rule", scope: "always" } }),
  ]);
});

test("a yes for this session is recorded as such, and so is each call it lets through after", async () => {
  const call = client.callTool({ name: "echo", arguments: { message: "for the session" } });
  const id = await pendingTask("for the session");
  expect((await cli("approve", id, "--session")).code).toBe(0);
  await call;
  expect((await client.callTool({ name: "echo", arguments: { message: "again" } })).isError).toBeFalsy();
  await waitFor(() => decisions().length === 5, "both decisions in the record");
  expect(decisions().slice(3).map((decision) => decision.decided_by)).toEqual([
    { channel: "cli", who, scope: "session" },
    { channel: "session_grant", scope: "session" },
  ]);
});
