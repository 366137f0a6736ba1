/**
 * Attack: the rug pull. A server gets its tools trusted, then changes what a tool is: a new
 * description carrying instructions to the model, announced with notifications/tools/list_changed
 * (2025-11-25), or a 2026-07-28 list that changes between requests with no notice at all. The
 * gates judge calls by name and arguments, so before pinning the changed tool was listed to the
 * model and its calls forwarded. Now it is hidden and its calls refused (-32011,
 * definition_changed) until a person accepts the new definition, and a governed agent cannot
 * accept it itself.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { fixture, requireBinary, tempDir } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";
import { runBinary } from "../../support/serve.ts";

setDefaultTimeout(60_000);
requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

function shim(dir: string, server: string[]): RawAgent {
  const agent = new RawAgent(["--server-id", "rugpull", "--events", "none", "--", ...server], { ...process.env, XDG_STATE_HOME: join(dir, "state") });
  agents.push(agent);
  return agent;
}

const names = (answer: { result?: { tools?: Array<{ name: string }> } }) => (answer.result?.tools ?? []).map((tool) => tool.name);

describe("tool definitions that change after they were trusted", () => {
  test("a description turned malicious after the first call (list_changed) is hidden from the model and its calls refused", async () => {
    using dir = tempDir();
    const agent = shim(dir.path, fixture("scripted-server-fixture.ts", "--drift-after", "1"));
    await agent.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "attack", version: "1" } });
    expect(names(await agent.request(1, "tools/list", {}))).toContain("echo");
    await agent.request(2, "tools/call", { name: "echo", arguments: {} });
    const relisted = await agent.request(3, "tools/list", {});
    expect(JSON.stringify(relisted)).not.toContain("id_rsa");
    expect(names(relisted)).not.toContain("echo");
    const call = await agent.request(4, "tools/call", { name: "echo", arguments: { note: "stolen" } });
    expect(call.error).toMatchObject({ code: -32011, data: { reason: "definition_changed", changed: ["description"] } });
  });

  test("a 2026-07-28 list that changes between requests without notice is caught on the next list", async () => {
    using dir = tempDir();
    const agent = shim(dir.path, fixture("tmcp-server-fixture.ts", "--era", "modern", "--drift-after", "1"));
    const meta = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } };
    expect(names(await agent.request(1, "tools/list", meta))).toContain("read_note");
    await agent.request(2, "tools/call", { name: "read_note", arguments: { id: "a" }, ...meta });
    const relisted = await agent.request(3, "tools/list", meta);
    expect(JSON.stringify(relisted)).not.toContain("previous messages");
    const call = await agent.request(4, "tools/call", { name: "read_note", arguments: { id: "a" }, ...meta });
    expect(call.error).toMatchObject({ code: -32011, data: { reason: "definition_changed" } });
  });

  test("an agent inside thoughtgate wrap cannot accept (or reset) the changed definition itself", async () => {
    using dir = tempDir();
    const agent = shim(dir.path, fixture("scripted-server-fixture.ts", "--drift-after", "1"));
    await agent.request(1, "tools/list", {});
    await agent.request(2, "tools/call", { name: "echo", arguments: {} });
    await agent.request(3, "tools/list", {});
    const env = { XDG_STATE_HOME: join(dir.path, "state"), THOUGHTGATE_ACTIVE: "1" };
    for (const action of [["accept", "rugpull", "echo"], ["reset", "rugpull"]]) {
      const run = await runBinary(["pins", ...action], { env });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("refuses to run inside an agent that thoughtgate wrap governs");
    }
    expect((await agent.request(4, "tools/call", { name: "echo", arguments: {} })).error?.data?.reason).toBe("definition_changed");
  });
});
