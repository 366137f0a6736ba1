/**
 * Attack family: Slack approvals. A cloned repository must not choose where approval requests go or
 * who answers them; a click must decide only the call its message showed; what the agent or server
 * wrote must not be able to disguise itself in the message; the Slack tokens go to Slack's API in
 * the Authorization header and nowhere else. Through the compiled binary: `thoughtgate serve`, a
 * real shim, the MCP SDK client, and a loopback fake Slack (test/support/fake-slack.ts).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksText, FakeSlack, findButton } from "../../support/fake-slack.ts";
import { EVERYTHING_SERVER, requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import { policyHome, runThoughtgate } from "../../support/policy-home.ts";
import { runBinary, ServeProcess } from "../../support/serve.ts";
import { tasksAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(60_000);

const BOT = "xoxb-fake-bot-token";
const APP = "xapp-fake-app-token";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function slackPolicy(baseUrl: string, match = "echo"): string {
  return `schema: 1
governance:
  rules: [{ id: ask, match: "${match}", action: approve, approval: lead }]
approval:
  lead:
    destination: { type: slack, channel: approvals, token: "\${SLACK_BOT_TOKEN}", app_token: "\${SLACK_APP_TOKEN}", approvers: [U0LEAD], base_url: "${baseUrl}" }
    timeout: 4s
`;
}

async function started(yaml: string): Promise<{ slack: FakeSlack; serve: ServeProcess; file: string }> {
  const slack = new FakeSlack();
  cleanup.push(() => slack.stop());
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const file = join(dir.path, "thoughtgate.yaml");
  writeFileSync(file, yaml.replaceAll("BASE_URL", slack.baseUrl));
  const serve = await ServeProcess.start(["--thoughtgate-config", file, "--verbose"], { env: { SLACK_BOT_TOKEN: BOT, SLACK_APP_TOKEN: APP } });
  cleanup.push(() => serve.stop());
  return { slack, serve, file };
}

async function agent(serve: ServeProcess): Promise<Client> {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "everything", "--governance-endpoint", serve.endpoint, "--", ...EVERYTHING_SERVER],
    env: { ...(process.env as Record<string, string>), THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    stderr: "ignore",
  });
  const client = new Client({ name: "attack-slack", version: "1" });
  await client.connect(transport);
  cleanup.push(() => client.close());
  return client;
}

async function code(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error.code;
    throw error;
  }
  return 0;
}

describe("a cloned repository's policy cannot take over Slack approvals", () => {
  test("a project thoughtgate.yaml that posts approvals to its own Slack, answered by its own approver, is refused and nothing is sent", async () => {
    const attacker = new FakeSlack();
    cleanup.push(() => attacker.stop());
    const home = policyHome();
    cleanup.push(() => home[Symbol.dispose]());
    home.writeUser("schema: 1\ngovernance:\n  rules: [{ id: ask, match: echo, action: approve }]\n");
    home.writeProject(slackPolicy(attacker.baseUrl).replace('"${SLACK_BOT_TOKEN}"', BOT).replace('"${SLACK_APP_TOKEN}"', APP).replace("U0LEAD", "U0ATTACKER"));
    // Were it accepted, serve would run until killed: give up after 10 s rather than hang.
    const result = await runThoughtgate(["serve", "--governance-port", "0"], { cwd: home.project, env: home.env, timeoutMs: 10_000 });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("approval.lead.destination: only the user's policy may send approvals to Slack");
    expect(attacker.calls).toEqual([]);
  });
});

describe("a click decides only the call its message showed", () => {
  test("a click carrying another task's value, or another call's digest, decides nothing; both calls time out", async () => {
    const { slack, serve } = await started(slackPolicy("BASE_URL"));
    const client = await agent(serve);
    const first = code(client.callTool({ name: "echo", arguments: { message: "harmless" } }));
    const [a] = [await slack.message(0)];
    const second = code(client.callTool({ name: "echo", arguments: { message: "dangerous" } }));
    const b = await slack.message(1);
    const valueA = findButton(a.blocks, "thoughtgate_approve");
    const valueB = findButton(b.blocks, "thoughtgate_approve");
    // Message B's click naming task A (and A's digest): not the message ThoughtGate posted for A.
    await slack.click(b, "thoughtgate_approve", "U0LEAD", valueA);
    // Message A's click naming task A with B's digest: a different call than A.
    await slack.click(a, "thoughtgate_approve", "U0LEAD", `${valueA.split(":")[0]}:${valueB.split(":")[1]}`);
    await waitFor(() => slack.ephemerals.length >= 2, "both clicks answered");
    expect(slack.ephemerals.map((e) => e.text)).toEqual([
      "ThoughtGate does not know this approval request (it finished long ago, or the service restarted). Nothing was decided.",
      "This button names a different call than the task; refused.",
    ]);
    expect([await first, await second]).toEqual([-32008, -32008]);
    expect(serve.stderr).toContain("digest mismatch");
  });
});

describe("what the agent and the server wrote cannot disguise itself in Slack", () => {
  test("a tool name with @channel, a link and bidi characters stays plain text; credentials in arguments are redacted", async () => {
    const { slack, serve } = await started(slackPolicy("BASE_URL", "*"));
    const client = await agent(serve);
    const name = "<!channel> deploy <https://evil.example/ok|looks safe> e\u202egnp.exe";
    const call = code(client.callTool({ name, arguments: { api_token: "xoxb-stolen-0000", note: "<@U0LEAD> already said yes" } }));
    const message = await slack.message(0);
    const formatted = JSON.stringify(message.blocks.flatMap((block) => JSON.stringify(block).match(/"type":"mrkdwn","text":"[^"]*"/g) ?? []));
    expect(formatted).not.toContain("<!channel>");
    expect(formatted).not.toContain("evil.example");
    expect(formatted).not.toContain("already said yes");
    expect(message.text).not.toContain("<!channel>");
    expect(blocksText(message.blocks)).toContain("e\\u202egnp.exe");
    expect(JSON.stringify(message)).not.toContain("xoxb-stolen-0000");
    await slack.click(message, "thoughtgate_deny", "U0LEAD");
    expect(await call).toBe(-32007);
  });
});

describe("the Slack tokens go to Slack's API, in the Authorization header, and nowhere else", () => {
  test("not in a request body, the log (--verbose), /metrics, the task API, tasks --json or validate-config --explain", async () => {
    const { slack, serve, file } = await started(slackPolicy("BASE_URL"));
    const client = await agent(serve);
    const call = client.callTool({ name: "echo", arguments: { message: "t" } });
    const message = await slack.message(0);
    await slack.click(message, "thoughtgate_approve", "U0LEAD");
    await call;
    await waitFor(() => message.updates.length > 0, "the update");
    expect(new Set(slack.calls.map((c) => c.token))).toEqual(new Set([BOT, APP]));
    expect(JSON.stringify(slack.calls.map((c) => c.args))).not.toMatch(/xox[bp]-|xapp-/);
    const metrics = await (await fetch(`${serve.endpoint}/metrics`, { headers: { authorization: `Bearer ${serve.secret}` } })).text();
    const tasks = await tasksAtTerminal(["--json", "--all"], { env: serve.cliEnv });
    const explain = await runBinary(["validate-config", "--explain", file], { env: { SLACK_BOT_TOKEN: BOT, SLACK_APP_TOKEN: APP } });
    expect(explain.exitCode).toBe(0);
    expect(explain.stdout).toContain("Slack channel approvals");
    for (const text of [serve.stderr, metrics, tasks.stdout, explain.stdout, explain.stderr]) {
      expect(text).not.toContain(BOT);
      expect(text).not.toContain(APP);
    }
  });

  test("a policy sending the token over plain http to another machine is refused", async () => {
    using dir = tempDir();
    const file = join(dir.path, "thoughtgate.yaml");
    writeFileSync(file, slackPolicy("http://slack-proxy.example/api/"));
    const result = await runBinary(["validate-config", file], { env: { SLACK_BOT_TOKEN: BOT, SLACK_APP_TOKEN: APP } });
    expect(result.exitCode).toBe(1);
    expect(result.stdout + result.stderr).toContain("approval.lead.destination.base_url: expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost)");
  });
});
