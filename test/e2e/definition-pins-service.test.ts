/**
 * Pinned definitions under a governance service (what `thoughtgate wrap` runs), through the
 * compiled binary: a changed definition becomes a task on the service, shown with its diff and
 * findings on the approvals page's API and in `thoughtgate tasks`, and accepted there
 * (`thoughtgate approve`) or in Slack (a loopback fake that speaks Slack's wire formats); the
 * waiting call then runs.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson, sha256Hex } from "../../src/core/canonical-json.ts";
import { blocksText, FakeSlack, findButton } from "../support/fake-slack.ts";
import { fixture, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { runBinary, ServeProcess } from "../support/serve.ts";
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";

setDefaultTimeout(60_000);
requireBinary();

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("a changed definition under a governance service", () => {
  test("becomes a task with its diff on the page's API and in thoughtgate tasks; thoughtgate approve accepts it and the call runs", async () => {
    using dir = tempDir();
    const state = { XDG_STATE_HOME: join(dir.path, "state") };
    writeFileSync(join(dir.path, "thoughtgate.yaml"), "schema: 1\n");
    const serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")], { env: state });
    cleanup.push(() => serve.stop());
    const events = join(dir.path, "events.jsonl");
    const agent = new RawAgent(
      ["--server-id", "scripted", "--events", events, "--governance-endpoint", serve.endpoint, "--", ...fixture("scripted-server-fixture.ts", "--drift-after", "1")],
      { ...process.env, ...state, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    );
    cleanup.push(() => agent.close());
    await agent.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "pins-e2e", version: "1" } });
    await agent.request(1, "tools/list", {});
    await agent.request(2, "tools/call", { name: "echo", arguments: {} });
    const listed = await agent.request(3, "tools/list", {});
    expect(listed.result.tools.map((t: { name: string }) => t.name)).not.toContain("echo");

    agent.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { n: 4 } } });
    const cli = { ...state, ...serve.cliEnv };
    const task = await waitFor(async () => {
      const tasks = JSON.parse((await tasksAtTerminal(["--json"], { env: cli })).stdout) as Array<Record<string, any>>;
      return tasks.find((t) => t.method === "definitions/accept");
    }, "the definition task");
    expect(task).toMatchObject({ server_id: "scripted", name: "echo", definition: { kind: "tool", status: "changed", changed: ["description"] } });
    expect(task.definition.diff).toContain('+  "description": "Echo the arguments back as text. <IMPORTANT>');
    expect(task.definition.findings.map((f: { rule: string }) => f.rule)).toContain("conceal-from-user");
    const table = await tasksAtTerminal([], { env: cli });
    expect(table.stdout).toContain("accept the changed definition of scripted.echo");

    // The approvals page reads the same task, diff included.
    const page = await fetch(`${serve.endpoint}/approvals/api/tasks`, { headers: { authorization: `Bearer ${serve.pageKey}` } });
    const onPage = ((await page.json()) as { tasks: Array<Record<string, any>> }).tasks.find((t) => t.task_id === task.task_id);
    expect(onPage?.definition?.diff).toBe(task.definition.diff);
    // A definition is accepted as shown: "always" (a policy rule) is refused for it.
    const always = await fetch(`${serve.endpoint}/approvals/api/tasks/${task.task_id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${serve.pageKey}`, "content-type": "application/json", origin: serve.endpoint },
      body: JSON.stringify({ decision: "approve", digest: task.digest, scope: "always" }),
    });
    expect(always.status).toBe(409);

    const approved = await decideAtTerminal(["approve", task.task_id], { env: cli });
    expect(approved.exitCode).toBe(0);
    const { match, before } = await agent.until(4);
    expect(match.result.content[0].text).toBe('{"n":4}');
    expect(before).toContainEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect(await waitFor(() => readEvents(events).find((e) => e.type === "definition_accepted"), "definition_accepted")).toMatchObject({ name: "echo", by: "cli" });
    const shown = await runBinary(["pins", "show", "scripted", "echo"], { env: state });
    expect(shown.stdout).toContain("PINNED tool echo");
    expect(shown.stdout).toContain("accepted by cli");
  });
});

describe("a changed definition accepted in Slack", () => {
  test("the approver's click accepts it: the waiting call runs, the tool is listed and callable again, and the pin holds the new definition", async () => {
    using dir = tempDir();
    const slack = new FakeSlack();
    cleanup.push(() => slack.stop());
    const state = { XDG_STATE_HOME: join(dir.path, "state") };
    const tokens = { SLACK_BOT_TOKEN: "xoxb-fake-bot-token", SLACK_APP_TOKEN: "xapp-fake-app-token" };
    const destination = `{ type: slack, channel: approvals, token: "\${SLACK_BOT_TOKEN}", app_token: "\${SLACK_APP_TOKEN}", approvers: [U0LEAD], base_url: "${slack.baseUrl}" }`;
    writeFileSync(join(dir.path, "thoughtgate.yaml"), `schema: 1\napproval:\n  lead: { destination: ${destination}, timeout: 30s }\npins: { approval: lead }\n`);
    const serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")], { env: { ...state, ...tokens } });
    cleanup.push(() => serve.stop());
    const events = join(dir.path, "events.jsonl");
    const agent = new RawAgent(
      ["--server-id", "scripted", "--events", events, "--governance-endpoint", serve.endpoint, "--", ...fixture("scripted-server-fixture.ts", "--drift-after", "1")],
      { ...process.env, ...state, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    );
    cleanup.push(() => agent.close());
    await agent.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "pins-e2e", version: "1" } });
    const names = async (id: number) => ((await agent.request(id, "tools/list", {})).result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(await names(1)).toContain("echo");
    await agent.request(2, "tools/call", { name: "echo", arguments: {} });
    expect(await names(3)).not.toContain("echo");

    agent.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { n: 4 } } });
    const message = await slack.message(0);
    const shown = blocksText(message.blocks);
    expect(shown).toContain("The tool scripted.echo changed its definition since it was pinned (description)");
    expect(shown).toContain("high conceal-from-user");
    const [taskId] = findButton(message.blocks, "thoughtgate_approve").split(":");
    expect(await serve.task(String(taskId))).toMatchObject({ method: "definitions/accept", name: "echo", status: "pending" });

    await slack.click(message, "thoughtgate_approve", "U0LEAD");
    const { match, before } = await agent.until(4);
    expect(match.result.content[0].text).toBe('{"n":4}');
    expect(before).toContainEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect(await serve.task(String(taskId))).toMatchObject({ status: "approved", decided_by: "slack" });
    expect(blocksText((await waitFor(() => message.updates.at(-1), "the message's update")).blocks)).toContain("Approved by <@U0LEAD> in Slack.");

    // Listed and callable again, with no new question.
    expect(await names(5)).toContain("echo");
    expect((await agent.request(6, "tools/call", { name: "echo", arguments: { n: 6 } })).result.content[0].text).toBe('{"n":6}');
    expect(slack.messages).toHaveLength(1);
    expect(await waitFor(() => readEvents(events).find((e) => e.type === "definition_accepted"), "definition_accepted")).toMatchObject({ name: "echo", by: "slack" });

    // The pin is the definition the server serves now, accepted in Slack.
    const served = (await agent.request(7, "tools/list", {})).result.tools.find((t: { name: string }) => t.name === "echo");
    expect(served.description).toContain("<IMPORTANT>");
    const pins = JSON.parse((await runBinary(["pins", "show", "scripted", "echo", "--json"], { env: state })).stdout) as Array<{ definitions: Array<Record<string, unknown>> }>;
    expect(pins[0]?.definitions).toEqual([
      expect.objectContaining({ name: "echo", status: "pinned", accepted_by: "slack", definition: served, digest: sha256Hex(canonicalJson(served)), served: null, diff: "" }),
    ]);
  });
});

describe("thoughtgate wrap and the pins", () => {
  test("the start banner says what the pin store holds for the governed servers; the end summary what this session pinned", async () => {
    using dir = tempDir();
    const env = { HOME: dir.path, XDG_STATE_HOME: join(dir.path, "state"), XDG_CONFIG_HOME: join(dir.path, "config") };
    const first = await runBinary(["demo"], { env });
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain("thoughtgate: definitions: 0 pinned for 0 of 1 servers, 0 changed since, 0 flagged; new, pinned when first listed: notes");
    expect(first.stderr).toContain("  definitions  3 newly pinned, 0 changed, 0 flagged, 0 accepted by a person");
    const second = await runBinary(["demo"], { env });
    expect(second.stderr).toContain("thoughtgate: definitions: 3 pinned for 1 of 1 servers, 0 changed since, 0 flagged; new, pinned when first listed: none");
    expect(second.stderr).not.toContain("newly pinned");
  });
});
