/**
 * Slack approvals through the compiled binaries: `thoughtgate serve` with a workflow whose
 * destination is Slack (`base_url` at a loopback fake Slack), a `thoughtgate shim` asking it, the
 * real MCP SDK client as the agent and server-everything as the server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksText, FakeSlack, findButton, type Message } from "../support/fake-slack.ts";
import { EVERYTHING_SERVER, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(60_000);

const TOKENS = { SLACK_BOT_TOKEN: "xoxb-fake-bot-token", SLACK_APP_TOKEN: "xapp-fake-app-token" };

/** A policy asking in Slack: echo waits `leadTimeout`, get-sum 1.5 s; `extra` goes into each destination. */
function policy(baseUrl: string, extra: string, leadTimeout = "30s"): string {
  const destination = `{ type: slack, channel: approvals, token: "\${SLACK_BOT_TOKEN}", approvers: [U0LEAD], base_url: "${baseUrl}"${extra} }`;
  return `schema: 1
governance:
  rules:
    - { id: ask-echo, match: echo, action: approve, approval: lead }
    - { id: ask-sum, match: get-sum, action: approve, approval: quick }
approval:
  lead: { destination: ${destination}, timeout: ${leadTimeout} }
  quick: { destination: ${destination}, timeout: 1500ms }
`;
}

const dir = tempDir();
const agents: Client[] = [];
afterEach(async () => {
  for (const client of agents.splice(0)) await client.close();
});
afterAll(() => dir[Symbol.dispose]());

async function serveWith(name: string, yaml: string, env: Record<string, string> = TOKENS): Promise<ServeProcess> {
  const file = join(dir.path, `${name}.yaml`);
  writeFileSync(file, yaml);
  return ServeProcess.start(["--thoughtgate-config", file], { env });
}

/** `elicit`: the agent declares MCP elicitation and its user answers this way. */
async function agent(service: ServeProcess, elicit?: "approve"): Promise<Client> {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "everything", "--governance-endpoint", service.endpoint, "--", ...EVERYTHING_SERVER],
    env: { ...(process.env as Record<string, string>), THOUGHTGATE_GOVERNANCE_SECRET: service.secret },
    stderr: "ignore",
  });
  const client = new Client({ name: "slack-e2e", version: "1" }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async () => (await personReads(), { action: "accept", content: { decision: "once" } }));
  await client.connect(transport);
  agents.push(client);
  return client;
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

const lastUpdate = async (message: Message) => blocksText((await waitFor(() => message.updates.at(-1), "the message's update")).blocks);

describe("Socket Mode: Approve / Deny buttons", () => {
  const slack = new FakeSlack();
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await serveWith("buttons", policy(slack.baseUrl, ', app_token: "${SLACK_APP_TOKEN}"'));
  });
  afterAll(async () => {
    await serve.stop();
    await slack.stop();
  });

  test("the approver's click lets the call the agent made through, and the message says who approved", async () => {
    const client = await agent(serve);
    const call = client.callTool({ name: "echo", arguments: { message: "deploy with password=hunter2-secret" } });
    const message = await slack.message(0);
    const shown = blocksText(message.blocks);
    expect(shown).toContain("Approval needed: everything.echo");
    expect(shown).toContain("ask-echo");
    expect(shown).toContain("thoughtgate serve on");
    expect(JSON.stringify(message)).not.toContain("hunter2");
    expect(findButton(message.blocks, "thoughtgate_approve")).toMatch(/^[0-9a-f]{12}:[0-9a-f]{64}$/);
    await slack.click(message, "thoughtgate_approve", "U0LEAD");
    // The call ran (the server echoed it); the password in its result is redacted on the way back.
    expect((await call).content).toEqual([{ type: "text", text: "Echo: deploy with password=[REDACTED:secret_field]" }]);
    expect(await lastUpdate(message)).toContain("Approved by <@U0LEAD> in Slack.");
    expect(findButton(message.updates.at(-1)?.blocks ?? [], "thoughtgate_approve")).toBe("");
    const taskId = findButton(message.blocks, "thoughtgate_approve").slice(0, 12);
    expect(await serve.task(taskId)).toMatchObject({ status: "approved", decided_by: "slack", reason: "approved in Slack by U0LEAD" });
  });

  test("a user the workflow does not list is ignored and told so; the approver's Deny then refuses the call", async () => {
    const client = await agent(serve);
    const before = slack.messages.length;
    const call = rejection(client.callTool({ name: "echo", arguments: { message: "stranger" } }));
    const message = await slack.message(before);
    await slack.click(message, "thoughtgate_approve", "U0STRANGER");
    await waitFor(() => slack.ephemerals.find((e) => e.user === "U0STRANGER"), "the stranger to be told");
    expect(slack.ephemerals.find((e) => e.user === "U0STRANGER")?.text).toContain("Only the approvers this workflow lists may decide");
    const taskId = findButton(message.blocks, "thoughtgate_deny").slice(0, 12);
    expect((await serve.task(taskId)).status).toBe("pending");
    await slack.click(message, "thoughtgate_deny", "U0LEAD");
    const error = await call;
    expect(error.code).toBe(-32007);
    expect(await lastUpdate(message)).toContain("Denied by <@U0LEAD> in Slack.");
  });

  test("decided on the approvals page first: the Slack message says so, and a late click is told it changed nothing", async () => {
    const client = await agent(serve);
    const before = slack.messages.length;
    const call = client.callTool({ name: "echo", arguments: { message: "page first" } });
    const message = await slack.message(before);
    const [taskId, digest] = findButton(message.blocks, "thoughtgate_approve").split(":");
    const decided = await fetch(`${serve.endpoint}/approvals/api/tasks/${taskId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${serve.pageKey}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve", digest }),
    });
    expect(decided.status).toBe(200);
    expect((await call).content).toEqual([{ type: "text", text: "Echo: page first" }]);
    expect(await lastUpdate(message)).toContain("Approved on the approvals page.");
    await slack.click(message, "thoughtgate_deny", "U0LEAD");
    const told = await waitFor(() => slack.ephemerals.find((e) => e.user === "U0LEAD" && e.text.includes("already")), "the late click to be told");
    expect(told.text).toBe("This request was already approved on the approvals page; your answer changed nothing.");
  });

  test("the agent's user answers first through MCP elicitation: the call goes through and the Slack message says who decided", async () => {
    const client = await agent(serve, "approve");
    const before = slack.messages.length;
    const result = await client.callTool({ name: "echo", arguments: { message: "asked in the agent too" } });
    expect(result.content).toEqual([{ type: "text", text: "Echo: asked in the agent too" }]);
    expect(await lastUpdate(await slack.message(before))).toContain("Approved by the agent's user, asked through the agent.");
  });

  test("nobody answers: the call is denied after the workflow's timeout and the message says it expired", async () => {
    const client = await agent(serve);
    const before = slack.messages.length;
    const error = await rejection(client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } }));
    expect(error.code).toBe(-32008);
    const message = await slack.message(before);
    expect(await lastUpdate(message)).toContain("No decision within 1500ms: the call was denied (on_timeout: deny).");
  });

  test("Slack refreshes the connection: a click on the new connection still decides", async () => {
    const opened = slack.callsOf("apps.connections.open").length;
    slack.disconnect("refresh_requested");
    await waitFor(() => slack.callsOf("apps.connections.open").length === opened + 1 && slack.open.length === 1, "the new connection, alone");
    const client = await agent(serve);
    const before = slack.messages.length;
    const call = client.callTool({ name: "echo", arguments: { message: "after refresh" } });
    await slack.click(await slack.message(before), "thoughtgate_approve", "U0LEAD");
    expect((await call).content).toEqual([{ type: "text", text: "Echo: after refresh" }]);
  });

  test("rate limited (429, Retry-After): the message is posted once Slack allows, and the click still decides", async () => {
    slack.fail("chat.postMessage", { status: 429, retryAfter: "1" });
    const client = await agent(serve);
    const before = slack.messages.length;
    const call = client.callTool({ name: "echo", arguments: { message: "after the limit" } });
    const message = await slack.message(before);
    await slack.click(message, "thoughtgate_approve", "U0LEAD");
    expect((await call).content).toEqual([{ type: "text", text: "Echo: after the limit" }]);
    expect(serve.stderr.match(/rate limited by Slack/g)).toHaveLength(1);
  });
});

describe("without Socket Mode: reactions", () => {
  test("the approver's 👎 denies the call; a stranger's 👍 counted for nothing", async () => {
    await using slack = new FakeSlack();
    await using serve = await serveWith("reactions", policy(slack.baseUrl, ""));
    const client = await agent(serve);
    const call = rejection(client.callTool({ name: "echo", arguments: { message: "react" } }));
    const message = await slack.message(0);
    expect(blocksText(message.blocks)).toContain("React with :+1: to approve or :-1: to deny");
    slack.react(message, "+1", "U0STRANGER");
    await waitFor(() => slack.callsOf("reactions.get").length >= 2, "two reads of the reactions");
    expect(message.updates).toEqual([]);
    slack.react(message, "-1::skin-tone-3", "U0LEAD");
    expect((await call).code).toBe(-32007);
    expect(await lastUpdate(message)).toContain("Denied by <@U0LEAD> in Slack.");
    expect(slack.callsOf("reactions.get")[0]?.contentType).toBe("application/x-www-form-urlencoded");
    expect(slack.callsOf("apps.connections.open")).toEqual([]);
  });
});

describe("when Slack fails, the workflow's timeout and on_timeout apply", () => {
  test("Slack unreachable: calls wait for their timeout (deny, or approve when on_timeout says so); logged once, counted", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const deadUrl = `http://127.0.0.1:${closed.port}/api/`;
    await closed.stop(true);
    const yaml = policy(deadUrl, "", "2s").replace("quick: { destination: ", "quick: { on_timeout: approve, destination: ");
    await using serve = await serveWith("down", yaml);
    const client = await agent(serve);
    const started = performance.now();
    const denied = rejection(client.callTool({ name: "echo", arguments: { message: "x" } }));
    const approved = await client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(approved.content).toEqual([{ type: "text", text: "The sum of 1 and 2 is 3." }]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
    expect((await denied).code).toBe(-32008);
    const metrics = await (await fetch(`${serve.endpoint}/metrics`, { headers: { authorization: `Bearer ${serve.secret}` } })).text();
    expect(metrics).toMatch(/thoughtgate_slack_errors_total\{method="chat\.postMessage",error="unreachable"\} [2-9]/);
    expect(serve.stderr.match(/cannot reach/g)).toHaveLength(1);
  }, 60_000);

  test("a revoked token and a deleted channel: logged once each, the calls time out", async () => {
    await using slack = new FakeSlack();
    slack.revoked.add("xoxb-fake-bot-token");
    await using serve = await serveWith("revoked", policy(slack.baseUrl, ""));
    const client = await agent(serve);
    for (let i = 0; i < 2; i++) expect((await rejection(client.callTool({ name: "get-sum", arguments: { a: i, b: 1 } }))).code).toBe(-32008);
    expect(serve.stderr.match(/token_revoked/g)).toHaveLength(1);
    expect(serve.stderr).toContain("off until the token is replaced");
    // Off: the second call did not even try.
    expect(slack.callsOf("chat.postMessage")).toHaveLength(1);

    await using gone = await serveWith("gone", policy(slack.baseUrl, "").replaceAll("channel: approvals", "channel: C0DELETED"), { SLACK_BOT_TOKEN: "xoxb-other-token" });
    slack.botTokens.add("xoxb-other-token");
    const other = await agent(gone);
    for (let i = 0; i < 2; i++) expect((await rejection(other.callTool({ name: "get-sum", arguments: { a: i, b: 2 } }))).code).toBe(-32008);
    expect(gone.stderr.match(/channel_not_found/g)).toHaveLength(1);
  });
});
