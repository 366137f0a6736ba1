/**
 * ThoughtGate's annotation catalog in the shim, through the compiled binary and the embedded
 * default policy: server-github's definitions (served offline as the real server lists them)
 * declare nothing, so its reads go through by the catalog's hint and the record says so; its
 * writes are asked; and the same tools with a changed definition lose the hint and are asked like
 * any tool that declares nothing.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir } from "../support/harness.ts";

async function session(dir: string, ...serverArgs: string[]) {
  const events = join(dir, "events.jsonl");
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state") };
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["shim", "--server-id", "github", "--events", events, "--", ...fixture("github-recorded-server-fixture.ts", ...serverArgs)],
    env,
    cwd: dir,
    stderr: "pipe",
  });
  // No elicitation: what is asked is refused for want of anyone to ask, which is what shows it was asked.
  const client = new Client({ name: "catalog-e2e", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) => {
    try {
      await client.callTool({ name, arguments: args });
      return "forwarded";
    } catch (error) {
      return error instanceof McpError ? `refused ${error.code}` : String(error);
    }
  };
  const decisions = () =>
    readEvents(events)
      .filter((e) => e.type === "tool_call_decision" && e.decision !== "pending")
      .map((e) => ({ tool: e.tool, decision: e.decision, rule_id: e.rule_id, reason: e.reason }));
  return { call, decisions, close: () => client.close() };
}

test("server-github's reads go through by the catalog's hint, named in the record; its writes are asked", async () => {
  using dir = tempDir();
  const s = await session(dir.path);
  expect(await s.call("search_repositories", { query: "mcp" })).toBe("forwarded");
  expect(await s.call("create_issue", { owner: "ada", repo: "app", title: "x" })).toBe("refused -32007");
  await s.close();
  expect(s.decisions()).toEqual([
    {
      tool: "search_repositories",
      decision: "forward",
      rule_id: "default-read-only",
      reason: "rule default-read-only: forward; annotations from ThoughtGate's annotation catalog (@modelcontextprotocol/server-github 2025.4.8)",
    },
    expect.objectContaining({ tool: "create_issue", decision: "deny", rule_id: "default-open-world", reason: expect.stringContaining("annotations from ThoughtGate's annotation catalog") }),
  ]);
}, 60_000);

test("a changed definition loses the hint: the same read is asked as a tool that declares nothing", async () => {
  using dir = tempDir();
  const s = await session(dir.path, "--alter");
  expect(await s.call("search_repositories", { query: "mcp" })).toBe("refused -32007");
  await s.close();
  expect(s.decisions()).toEqual([
    expect.objectContaining({
      tool: "search_repositories",
      decision: "deny",
      rule_id: "default-destructive",
      reason: expect.stringContaining("rule default-destructive: approval required; the tool declares no annotations, so MCP's defaults apply: not read-only, destructive"),
    }),
  ]);
}, 60_000);
