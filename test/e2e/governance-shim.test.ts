/**
 * A standalone shim with a policy (no governance service): the four gates through the compiled
 * binary, with the real MCP SDK client in front and server-everything behind.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { answerForms, NO_ONE_ANSWERS, type FormAnswer } from "../support/approval-answers.ts";
import { EVERYTHING_SERVER, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { policyHome } from "../support/policy-home.ts";

setDefaultTimeout(60_000);
requireBinary();

type Session = { client: Client; transport: StdioClientTransport; events: string; stderr: () => string; prompts: string[] };
const open: Session[] = [];
afterEach(async () => {
  for (const session of open.splice(0)) await session.client.close();
});

async function start(dir: string, yaml: string | null, options: { profile?: string; answer?: FormAnswer; elicitation?: boolean } = {}): Promise<Session> {
  const events = join(dir, "events.jsonl");
  const args = ["shim", "--server-id", "everything", "--events", events, "--profile", options.profile ?? "production"];
  if (yaml !== null) {
    writeFileSync(join(dir, "thoughtgate.yaml"), yaml);
    args.push("--thoughtgate-config", join(dir, "thoughtgate.yaml"));
  }
  const transport = new StdioClientTransport({ command: requireBinary(), args: [...args, "--", ...EVERYTHING_SERVER], stderr: "pipe" });
  let stderr = "";
  (transport.stderr as Readable | null)?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "governance-e2e", version: "1" }, { capabilities: options.elicitation === false ? {} : { elicitation: {} } });
  const prompts: string[] = [];
  if (options.elicitation !== false) {
    answerForms(client, options.answer ?? "reject", prompts);
  }
  await client.connect(transport);
  const session = { client, transport, events, stderr: () => stderr, prompts };
  open.push(session);
  return session;
}

async function callError(client: Client, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal): Promise<McpError> {
  try {
    await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error(`${name} was not blocked`);
}

const decisions = (events: string) => readEvents(events).filter((e) => e.type === "tool_call_decision");

describe("gates in production", () => {
  test("visibility: tools/list shows allowlist ∩ real tools; a hidden tool is -32015", async () => {
    using dir = tempDir();
    const { client, events } = await start(dir.path, `schema: 1
sources:
  - { id: everything, expose: { mode: allowlist, tools: [echo, "get-s*", no-such-tool] } }
`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["echo", "get-structured-content", "get-sum"]);
    const error = await callError(client, "get-env");
    expect(error.code).toBe(-32015);
    expect(error.data).toMatchObject({ gate: "visibility", tool: "get-env", server_id: "everything" });
    expect((await client.callTool({ name: "echo", arguments: { message: "ok" } })).content).toEqual([{ type: "text", text: "Echo: ok" }]);
    await waitFor(() => decisions(events).length === 2, "two decisions in the audit");
    expect(decisions(events).map((e) => [e.tool, e.decision, e.gate])).toEqual([["get-env", "deny", "visibility"], ["echo", "forward", "rules"]]);
  });

  test("rules: first match wins, deny is -32014 with the rule id", async () => {
    using dir = tempDir();
    const { client } = await start(dir.path, `schema: 1
governance:
  rules:
    - { id: sums-ok, match: get-sum, action: forward }
    - { id: no-get, match: "get-*", action: deny }
`);
    expect((await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } })).isError).toBeFalsy();
    const error = await callError(client, "get-env");
    expect(error.code).toBe(-32014);
    expect(error.data).toMatchObject({ gate: "rules", rule_id: "no-get", reason: "rule no-get: deny" });
  });

  test("Cedar: a forbid on the arguments is -32003 naming the policy; permitted calls go through", async () => {
    using dir = tempDir();
    writeFileSync(
      join(dir.path, "policy.cedar"),
      `@id("allow-all") permit(principal, action, resource);
@id("no-secrets") forbid(principal, action == ThoughtGate::Action::"tools/call", resource)
  when { resource.name == "echo" && resource.arguments has message && resource.arguments.message like "*secret*" };`,
    );
    writeFileSync(join(dir.path, "arguments.cedarschema"), "namespace ThoughtGate { type Arguments = { message?: String }; }\n");
    const { client } = await start(dir.path, `schema: 1
governance:
  rules: [{ id: cedar, match: "*", action: policy }]
cedar: { policies: [policy.cedar], schema: arguments.cedarschema }
`);
    expect((await client.callTool({ name: "echo", arguments: { message: "hello" } })).content).toEqual([{ type: "text", text: "Echo: hello" }]);
    const error = await callError(client, "echo", { message: "the secret plan" });
    expect(error.code).toBe(-32003);
    expect(error.data).toMatchObject({ gate: "cedar", policy_id: "no-secrets" });
  });
});

describe("development profile", () => {
  test("what production blocks is forwarded with WOULD_BLOCK in the log and the audit", async () => {
    using dir = tempDir();
    const { client, events, stderr } = await start(
      dir.path,
      `schema: 1\ngovernance:\n  rules: [{ id: no-env, match: get-env, action: deny }, { id: ask, match: echo, action: approve }]\n`,
      { profile: "development", elicitation: false },
    );
    expect((await client.callTool({ name: "get-env", arguments: {} })).isError).toBeFalsy();
    expect((await client.callTool({ name: "echo", arguments: { message: "x" } })).isError).toBeFalsy();
    await waitFor(() => decisions(events).length === 2, "the decisions in the audit");
    expect(decisions(events).map((e) => [e.decision, e.would, e.auto_approved ?? false])).toEqual([
      ["forward", "WOULD_BLOCK", false],
      ["forward", "WOULD_REQUIRE_APPROVAL", true],
    ]);
    expect(stderr()).toContain("WOULD_BLOCK tools/call get-env");
    expect(readEvents(events).every((e) => e.profile === "development")).toBe(true);
  });
});

describe("approval through MCP elicitation", () => {
  const approveEcho = `schema: 1
governance:
  rules: [{ id: ask-echo, match: echo, action: approve, approval: quick }]
approval:
  quick: { timeout: 1s }
`;

  test("the user approves: the call goes through, and the prompt named the tool and its arguments", async () => {
    using dir = tempDir();
    const { client, prompts, events } = await start(dir.path, approveEcho, { answer: "approve" });
    expect((await client.callTool({ name: "echo", arguments: { message: "hi" } })).content).toEqual([{ type: "text", text: "Echo: hi" }]);
    expect(prompts).toEqual(['ThoughtGate: allow echo on server everything? (rule ask-echo: approval required)\nmessage: "hi"']);
    await waitFor(() => decisions(events).length === 2, "both decisions");
    expect(decisions(events).map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["forward", "elicitation"]]);
  });

  test("the user rejects: -32007 with the rule in error.data", async () => {
    using dir = tempDir();
    const { client } = await start(dir.path, approveEcho, { answer: "reject" });
    const error = await callError(client, "echo", { message: "no" });
    expect(error.code).toBe(-32007);
    expect(error.data).toMatchObject({ gate: "approval", rule_id: "ask-echo" });
  });

  test("no answer within the workflow's timeout: -32008 (on_timeout deny)", async () => {
    using dir = tempDir();
    const { client } = await start(dir.path, approveEcho, { answer: "never" });
    const error = await callError(client, "echo", { message: "wait" });
    expect(error.code).toBe(-32008);
  });

  test("a pending approval holds only its call: a ping and other tools are answered meanwhile", async () => {
    using dir = tempDir();
    const { client, prompts } = await start(dir.path, approveEcho.replace("1s", "30s"), { answer: "never" });
    const pending = client.callTool({ name: "echo", arguments: { message: "held" } }).catch((e: unknown) => e);
    await waitFor(() => prompts.length === 1, "the approval prompt");
    expect(await client.ping()).toEqual({});
    expect((await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })).content).toEqual([{ type: "text", text: "The sum of 2 and 3 is 5." }]);
    // Let it end: the client gives up on the call (cancel), which is covered below.
    void pending;
  });

  test("cancelling a call that awaits approval aborts it: it never reaches the server", async () => {
    using dir = tempDir();
    const { client, prompts, events } = await start(dir.path, approveEcho.replace("1s", "30s"), { answer: "never" });
    const controller = new AbortController();
    const call = client.callTool({ name: "echo", arguments: { message: "cancel me" } }, undefined, { signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(() => prompts.length === 1, "the approval prompt");
    controller.abort("changed my mind");
    expect(String(await call)).toContain("changed my mind");
    await waitFor(() => readEvents(events).some((e) => e.type === "tool_call_end"), "the call's end in the audit");
    expect(readEvents(events).find((e) => e.type === "tool_call_end")).toMatchObject({ tool: "echo", status: "cancelled" });
    expect(await client.ping()).toEqual({});
  });

  for (const answer of NO_ONE_ANSWERS) {
    test(`the agent answers the form for no one (${answer}): not a person's no; the call fails closed with -32007 saying no person answered`, async () => {
      using dir = tempDir();
      const { client, prompts, events } = await start(dir.path, approveEcho.replace("1s", "30s"), { answer });
      const error = await callError(client, "echo", { message: "asked no one" });
      expect(prompts).toHaveLength(1);
      expect(error.code).toBe(-32007);
      expect(error.message).toContain("rule ask-echo: approval required, but no person answered: the agent answered the approval form itself");
      expect(error.message).not.toContain("rejected by the person");
      await waitFor(() => decisions(events).length === 2, "both decisions");
      expect(decisions(events).map((e) => [e.decision, String(e.reason).includes("no person answered")])).toEqual([["pending", false], ["deny", true]]);
    });
  }

  test("a decline after the form could be read is the person's no: -32007, rejected by the person", async () => {
    using dir = tempDir();
    const { client, prompts } = await start(dir.path, approveEcho.replace("1s", "30s"), { answer: "decline-after-reading" });
    const error = await callError(client, "echo", { message: "read and refused" });
    expect(prompts).toHaveLength(1);
    expect(error.code).toBe(-32007);
    expect(error.data).toMatchObject({ gate: "approval", rule_id: "ask-echo" });
    expect(error.message).toContain("rule ask-echo: approval required: rejected by the person in the agent's prompt");
    expect(error.message).not.toContain("no person answered");
  });

  test("an agent without elicitation cannot approve: the call fails closed with -32007", async () => {
    using dir = tempDir();
    const { client } = await start(dir.path, approveEcho, { elicitation: false });
    const error = await callError(client, "echo", { message: "x" });
    expect(error.code).toBe(-32007);
    expect(error.message).toContain("no approval channel");
  });
});

describe("configuration", () => {
  test("a config that was asked for and is invalid stops the shim with the problems (exit 1)", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "bad.yaml"), "schema: 1\nsources: [{ id: x, expose: { mode: allow } }]\n");
    const result = Bun.spawnSync([requireBinary(), "shim", "--thoughtgate-config", join(dir.path, "bad.yaml"), "--", "cat"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout.toString()).toBe("");
    expect(result.stderr.toString()).toContain('sources[0].expose.mode: expected one of all|allowlist|blocklist, got "allow"');
    const missing = Bun.spawnSync([requireBinary(), "shim", "--thoughtgate-config", join(dir.path, "nope.yaml"), "--", "cat"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.toString()).toContain("no such file");
  });

  test("SIGHUP reloads the policy; a broken file keeps the old one", async () => {
    using dir = tempDir();
    const session = await start(dir.path, `schema: 1\ngovernance:\n  rules: [{ id: r1, match: get-env, action: deny }]\n`);
    const shimPid = session.transport.pid as number;
    expect((await callError(session.client, "get-env")).code).toBe(-32014);
    writeFileSync(join(dir.path, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules: [{ id: r2, match: get-env, action: forward }]\n");
    process.kill(shimPid, "SIGHUP");
    await waitFor(() => session.stderr().includes("reloaded"), "the reload");
    expect((await session.client.callTool({ name: "get-env", arguments: {} })).isError).toBeFalsy();
    writeFileSync(join(dir.path, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules: [{ id: r3, match: get-env, action: nope }]\n");
    process.kill(shimPid, "SIGHUP");
    await waitFor(() => session.stderr().includes("keeping the policy in force"), "the failed reload");
    expect(session.stderr()).toContain("governance.rules[0].action");
    expect((await session.client.callTool({ name: "get-env", arguments: {} })).isError).toBeFalsy();
  });
});

describe("the user's policy and a project's together", () => {
  test("the project's deny adds to the user's; a reload (SIGHUP, or the files changing) reads both; the audit names both", async () => {
    using policy = policyHome();
    policy.writeUser("schema: 1\ngovernance:\n  rules: [{ id: user-no-env, match: get-env, action: deny }]\n");
    policy.writeProject("schema: 1\ngovernance:\n  rules: [{ id: project-no-sum, match: get-sum, action: deny }]\n");
    const events = join(policy.project, "..", "events.jsonl");
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args: ["shim", "--server-id", "everything", "--events", events, "--", ...EVERYTHING_SERVER],
      cwd: policy.project,
      env: policy.env,
      stderr: "pipe",
    });
    let stderr = "";
    (transport.stderr as Readable | null)?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: "governance-e2e", version: "1" });
    await client.connect(transport);
    open.push({ client, transport, events, stderr: () => stderr, prompts: [] });
    expect((await callError(client, "get-env")).data).toMatchObject({ rule_id: "user-no-env", reason: "rule user-no-env: deny" });
    expect((await callError(client, "get-sum", { a: 1, b: 2 })).data).toMatchObject({ rule_id: "project-no-sum", reason: "project policy: rule project-no-sum: deny" });
    expect(readEvents(events).find((e) => e.type === "run_start")?.policy).toBe(`user policy ${policy.userFile}, restricted by project policy ${policy.projectFile}`);

    policy.writeUser("schema: 1\ngovernance:\n  rules: [{ id: user-no-echo, match: echo, action: deny }]\n");
    policy.writeProject("schema: 1\n");
    process.kill(transport.pid as number, "SIGHUP");
    await waitFor(async () => {
      const result = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } }).catch(() => null);
      return result !== null && !result.isError;
    }, "the reload");
    expect((await client.callTool({ name: "get-env", arguments: {} })).isError).toBeFalsy();
    expect((await callError(client, "echo", { message: "x" })).data).toMatchObject({ rule_id: "user-no-echo" });
  });
});
