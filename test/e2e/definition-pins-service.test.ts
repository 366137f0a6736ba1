/**
 * Pinned definitions under a governance service (what `thoughtgate wrap` runs), through the
 * compiled binary: a changed definition becomes a task on the service, shown with its diff and
 * findings on the approvals page's API and in `thoughtgate tasks`, and accepted there
 * (`thoughtgate approve`); the waiting call then runs.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { runBinary, ServeProcess } from "../support/serve.ts";

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
      const tasks = JSON.parse((await runBinary(["tasks", "--json"], { env: cli })).stdout) as Array<Record<string, any>>;
      return tasks.find((t) => t.method === "definitions/accept");
    }, "the definition task");
    expect(task).toMatchObject({ server_id: "scripted", name: "echo", definition: { kind: "tool", status: "changed", changed: ["description"] } });
    expect(task.definition.diff).toContain('+  "description": "Echo the arguments back as text. <IMPORTANT>');
    expect(task.definition.findings.map((f: { rule: string }) => f.rule)).toContain("conceal-from-user");
    const table = await runBinary(["tasks"], { env: cli });
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

    const approved = await runBinary(["approve", task.task_id], { env: cli });
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
