/**
 * The real MCP servers in devDependencies, each through a compiled shim in production, all sharing
 * one state directory (so each is checked against every other's pinned tools for shadowing): none
 * of their tools, prompts or resource templates is ever flagged or hidden, in a first session
 * (pinned on first use) or a second one; and `thoughtgate inspect` finds nothing in them either.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BENIGN_SERVERS, PLACEHOLDER_ENV } from "../fixtures/definitions/record-benign.ts";
import { readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { runBinary } from "../support/serve.ts";

setDefaultTimeout(120_000);
requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

async function listEverything(dir: string, serverId: string, command: string[], round: number): Promise<Array<Record<string, unknown>>> {
  const events = join(dir, `${serverId}-${round}.jsonl`);
  const agent = new RawAgent(["--server-id", serverId, "--events", events, "--", ...command], { ...process.env, ...PLACEHOLDER_ENV, XDG_STATE_HOME: join(dir, "state") });
  agents.push(agent);
  await agent.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "benign-e2e", version: "1" } });
  const tools = await agent.request("t", "tools/list", {});
  expect(tools.result.tools.length).toBeGreaterThan(0);
  await agent.request("p", "prompts/list", {});
  await agent.request("r", "resources/templates/list", {});
  await agent.close();
  return readEvents(events);
}

describe("benign servers are never flagged", () => {
  test("every tool, prompt and resource template of the real servers reaches the agent, session after session", async () => {
    using dir = tempDir();
    for (const round of [1, 2]) {
      for (const [serverId, command] of Object.entries(BENIGN_SERVERS)) {
        const events = await listEverything(dir.path, serverId, command, round);
        const flagged = events.filter((e) => e.type === "definition_flagged" || e.type === "definition_changed");
        expect({ serverId, round, flagged }).toEqual({ serverId, round, flagged: [] });
        for (const list of events.filter((e) => e.type === "list_result")) expect(list.returned_count).toBe(list.upstream_count);
        if (round === 1) expect(events.filter((e) => e.type === "definition_pinned").length).toBeGreaterThan(0);
        else expect(events.filter((e) => e.type === "definition_pinned")).toEqual([]);
      }
    }
    const listed = await runBinary(["pins", "list"], { env: { XDG_STATE_HOME: join(dir.path, "state") } });
    for (const serverId of Object.keys(BENIGN_SERVERS)) expect(listed.stdout).toMatch(new RegExp(`^${serverId}  \\d+ pinned, 0 changed, 0 flagged`, "m"));
  });

  test("thoughtgate inspect finds nothing in them", async () => {
    // A state directory of its own: other tests of the run pin tools this check would compare with.
    using dir = tempDir();
    for (const command of Object.values(BENIGN_SERVERS)) {
      const run = await runBinary(["inspect", "--json", "--", ...command], { env: { ...PLACEHOLDER_ENV, XDG_STATE_HOME: join(dir.path, "state") } });
      expect(run.exitCode).toBe(0);
      const report = JSON.parse(run.stdout) as { tools: Array<{ name: string; findings: unknown[] }> };
      expect(report.tools.filter((tool) => tool.findings.length > 0)).toEqual([]);
    }
  });
});
