/**
 * The full service path through compiled binaries: `thoughtgate serve` decides, `thoughtgate shim
 * --governance-endpoint` asks, the real SDK client is the agent, server-everything the server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { answerForms, NO_ONE_ANSWERS, type FormAnswer } from "../support/approval-answers.ts";
import { EVERYTHING_SERVER, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";

setDefaultTimeout(60_000);

const CONFIG = `schema: 1
sources:
  - { id: everything, expose: { mode: blocklist, tools: [get-tiny-image] } }
governance:
  rules:
    - { id: no-resources, match: get-resource-links, action: deny }
    - { id: ask-echo, match: echo, action: approve, approval: human }
    - { id: ask-sum, match: get-sum, action: approve, approval: impatient }
approval:
  human: { timeout: 30s }
  impatient: { timeout: 300ms }
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

type Agent = { client: Client; stderr: () => string; prompts: string[]; closed: Promise<void> };
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.client.close();
});

async function agent(options: { elicit?: FormAnswer; secret?: string; service?: ServeProcess } = {}): Promise<Agent> {
  const service = options.service ?? serve;
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "everything", "--governance-endpoint", service.endpoint, "--", ...EVERYTHING_SERVER],
    env: { ...(process.env as Record<string, string>), THOUGHTGATE_GOVERNANCE_SECRET: options.secret ?? service.secret },
    stderr: "pipe",
  });
  let stderr = "";
  (transport.stderr as Readable | null)?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "service-e2e", version: "1" }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  const prompts: string[] = [];
  if (options.elicit) answerForms(client, options.elicit, prompts);
  const closed = new Promise<void>((resolve) => (client.onclose = () => resolve()));
  await client.connect(transport);
  const created = { client, stderr: () => stderr, prompts, closed };
  agents.push(created);
  return created;
}

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("the call was not blocked");
}

/** `thoughtgate tasks …` as a person runs it, at a terminal of its own. */
async function tasksCli(...args: string[]) {
  const result = await tasksAtTerminal(args, { env: { ...process.env, ...serve.cliEnv } });
  return { code: result.exitCode, out: result.stdout, err: result.stderr };
}

type Listed = { task_id: string; status: string; name: string; arguments: Record<string, unknown> };

/** The pending task for `tool` (and, when given, for a call with this `message` argument). */
async function pendingTask(tool: string, message?: string): Promise<Listed> {
  return waitFor(async () => {
    const listed = await tasksCli("--json");
    const tasks = JSON.parse(listed.out) as Listed[];
    return tasks.find((task) => task.status === "pending" && task.name === tool && (message === undefined || task.arguments.message === message));
  }, `a pending approval for ${tool}`);
}

describe("decisions come from the service", () => {
  test("rule and visibility denials carry the service's codes; lists are filtered by the service", async () => {
    const { client } = await agent();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("echo");
    expect(names).not.toContain("get-tiny-image");
    const denied = await rejection(client.callTool({ name: "get-resource-links", arguments: { count: 1 } }));
    expect(denied.code).toBe(-32014);
    expect(denied.data).toMatchObject({ gate: "rules", rule_id: "no-resources", server_id: "everything" });
    expect((await rejection(client.callTool({ name: "get-tiny-image", arguments: {} }))).code).toBe(-32015);
  });

  test("the MCP server behind the shim cannot see the governance secret", async () => {
    const { client } = await agent();
    const result = await client.callTool({ name: "get-env", arguments: {} });
    const text = JSON.stringify(result.content);
    expect(text).toContain("PATH");
    expect(text).not.toContain(serve.secret);
    expect(text).not.toContain("THOUGHTGATE_");
  });
});

describe("approvals", () => {
  test("thoughtgate approve lets a held call through", async () => {
    const { client } = await agent();
    const call = client.callTool({ name: "echo", arguments: { message: "approved by cli" } });
    const task = await pendingTask("echo");
    // Meanwhile the connection is not blocked.
    expect(await client.ping()).toEqual({});
    const approved = await decideAtTerminal(["approve", task.task_id], { env: serve.cliEnv });
    expect(approved.exitCode).toBe(0);
    expect((await call).content).toEqual([{ type: "text", text: "Echo: approved by cli" }]);
    expect(await serve.task(task.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });
  });

  test("thoughtgate deny rejects it with -32007", async () => {
    const { client } = await agent();
    const call = rejection(client.callTool({ name: "echo", arguments: { message: "no" } }));
    const task = await pendingTask("echo");
    expect((await decideAtTerminal(["deny", task.task_id, "--reason", "not today"], { env: serve.cliEnv })).exitCode).toBe(0);
    const error = await call;
    expect(error.code).toBe(-32007);
    expect(error.data).toMatchObject({ gate: "approval", task_id: task.task_id });
  });

  test("the agent's user approves through MCP elicitation, relayed to the service", async () => {
    const { client, prompts } = await agent({ elicit: "approve" });
    expect((await client.callTool({ name: "echo", arguments: { message: "asked in the agent" } })).content).toEqual([
      { type: "text", text: "Echo: asked in the agent" },
    ]);
    expect(prompts[0]).toContain("ThoughtGate: allow echo on server everything?");
    const listed = JSON.parse((await tasksCli("--json", "--all")).out) as Array<Record<string, unknown>>;
    expect(listed.find((task) => (task.arguments as { message?: string }).message === "asked in the agent")).toMatchObject({ status: "approved", decided_by: "elicitation" });
  });

  for (const answer of NO_ONE_ANSWERS) {
    test(`the agent answers the form for no one (${answer}): not a person's no; the task stays pending and \`thoughtgate approve\` lets the call through`, async () => {
      const message = `asked no one: ${answer}`;
      const { client, prompts, stderr } = await agent({ elicit: answer });
      const call = client.callTool({ name: "echo", arguments: { message } });
      const task = await pendingTask("echo", message);
      // The shim has the agent's answer once it says so, or (were it taken as a no) once the task is decided.
      await waitFor(async () => stderr().includes("the agent answered the approval form without asking anyone") || (await serve.task(task.task_id)).status !== "pending", "the agent's answer to reach the shim");
      expect(prompts).toHaveLength(1);
      expect(await serve.task(task.task_id)).toMatchObject({ status: "pending" });
      expect(await client.ping()).toEqual({});
      expect((await decideAtTerminal(["approve", task.task_id], { env: serve.cliEnv })).exitCode).toBe(0);
      expect((await call).content).toEqual([{ type: "text", text: `Echo: ${message}` }]);
      expect(await serve.task(task.task_id)).toMatchObject({ status: "approved", decided_by: "cli" });
    });
  }

  test("a decline after the form could be read is the user's no: the task is denied by elicitation, -32007", async () => {
    const { client, prompts } = await agent({ elicit: "decline-after-reading" });
    const error = await rejection(client.callTool({ name: "echo", arguments: { message: "read and refused" } }));
    expect(prompts).toHaveLength(1);
    expect(error.code).toBe(-32007);
    expect(error.data).toMatchObject({ gate: "approval", rule_id: "ask-echo" });
    expect(error.message).toContain("rejected by the person in the agent's prompt");
    const taskId = String((error.data as { task_id?: unknown }).task_id);
    expect(await serve.task(taskId)).toMatchObject({ status: "denied", decided_by: "elicitation", arguments: { message: "read and refused" } });
  });

  test("nobody answers: the workflow's timeout denies with -32008", async () => {
    const { client } = await agent();
    expect((await rejection(client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } }))).code).toBe(-32008);
  });

  test("the agent cancels while the call waits: the task is cancelled", async () => {
    const { client } = await agent();
    const controller = new AbortController();
    const call = client.callTool({ name: "echo", arguments: { message: "cancel" } }, undefined, { signal: controller.signal }).catch((e: unknown) => e);
    const task = await pendingTask("echo");
    controller.abort("never mind");
    expect(String(await call)).toContain("never mind");
    await waitFor(async () => (await serve.task(task.task_id)).status === "cancelled", "the task to be cancelled");
  });
});

describe("service failures", () => {
  test("a shim with the wrong secret refuses to start (exit 1, one line)", () => {
    const result = Bun.spawnSync([requireBinary(), "shim", "--governance-endpoint", serve.endpoint, "--", "cat"], {
      env: { ...process.env, THOUGHTGATE_GOVERNANCE_SECRET: "0".repeat(64) },
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.toString()).toContain("wrong or missing THOUGHTGATE_GOVERNANCE_SECRET");
    const noSecret = Bun.spawnSync([requireBinary(), "shim", "--governance-endpoint", serve.endpoint, "--", "cat"], { env: { PATH: process.env.PATH ?? "" } });
    expect(noSecret.exitCode).toBe(2);
  });

  test("when the service dies, calls fail closed (-32013) and the shim shuts down at its next heartbeat", async () => {
    await using own = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")]);
    const { client, closed } = await agent({ service: own });
    expect((await client.callTool({ name: "get-env", arguments: {} })).isError).toBeFalsy();
    own.proc.kill("SIGKILL");
    await own.proc.exited;
    const error = await rejection(client.callTool({ name: "get-env", arguments: {} }));
    expect(error.code).toBe(-32013);
    await closed; // the shim exits rather than run ungoverned
  });
});
