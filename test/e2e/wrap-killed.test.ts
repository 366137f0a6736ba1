/**
 * `kill -9` of wrap, through the compiled binary: the config stays rewritten, and its entries keep
 * working. A plain spawn of the configured entry (what the next run of the agent does) answers
 * `initialize` at once and governs on its own (the user's policy); a spawn by the orphaned agent,
 * which still carries the dead session, refuses every governed call at once with the fix, never
 * waiting for a service that is gone. `thoughtgate unwrap` then restores the config.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { fixture, isAlive, requireBinary, tempDir, waitFor } from "../support/harness.ts";

setDefaultTimeout(60_000);

/** A server that starts in milliseconds (Bun, the MCP SDK): what is timed is the shim, not the server. */
const SERVER = fixture("sdk-server-fixture.ts");
const ORIGINAL = `{ "mcpServers": { "notes": { "command": ${JSON.stringify(SERVER[0])}, "args": ${JSON.stringify(SERVER.slice(1))} } } }\n`;
/** No answer within this long is the hang a dead session must never cause. */
const AT_ONCE_MS = 2_000;

const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
});

/** Spawn the entry as the config has it, as an agent would, and connect; requests time out after AT_ONCE_MS. */
async function spawnEntry(config: string, env: Record<string, string>): Promise<Client> {
  const entry = (parse(readFileSync(config, "utf8")) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers.notes;
  if (!entry) throw new Error("no entry");
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env, stderr: "ignore" });
  const client = new Client({ name: "agent", version: "1" }, { capabilities: {} });
  await client.connect(transport, { timeout: AT_ONCE_MS });
  return client;
}

async function callError(client: Client, tool: string): Promise<{ code: number; message: string } | "forwarded"> {
  try {
    await client.callTool({ name: tool, arguments: { id: "a" } }, undefined, { timeout: AT_ONCE_MS });
    return "forwarded";
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
}

test("kill -9 of wrap: a plain start of the entry governs on its own, the orphaned agent's start refuses at once, unwrap restores", async () => {
  using dir = tempDir();
  const config = join(dir.path, "mcp.json");
  const report = join(dir.path, "report.json");
  writeFileSync(config, ORIGINAL);
  // The user's own config directory, as their environment says when they run wrap: a shim started
  // from the entry later finds the user's policy there, whatever environment its agent gives it.
  const xdgConfig = join(dir.path, "config");
  const wrap = Bun.spawn([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("wrap-agent-fixture.ts", config, report, "--wait", "--call-on-usr1", 'read_note:{"id":"a"}')], {
    env: { ...process.env, XDG_CONFIG_HOME: xdgConfig },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const agent = await waitFor(() => {
    try {
      const seen = JSON.parse(readFileSync(report, "utf8")) as { state: string; pid: number };
      return seen.state === "ready" ? seen : null;
    } catch {
      return null;
    }
  }, "the agent to be ready");
  strays.push(agent.pid);
  // wrap said its session before it started the agent (the agent keeps the pipe open: read what came).
  let said = "";
  void (async () => {
    for await (const chunk of wrap.stderr) said += new TextDecoder().decode(chunk);
  })();
  const runId = (await waitFor(() => /session record \S+\/sessions\/([0-9a-f-]{36})\/events\.jsonl/.exec(said), "wrap's session record line"))[1];
  wrap.kill("SIGKILL");
  await wrap.exited;
  expect(readFileSync(config, "utf8")).toContain('"shim"');
  const fix = `the thoughtgate wrap of session ${runId} (pid ${wrap.pid}) has ended: restart the agent (alone, or under thoughtgate wrap) to govern its servers again; \`thoughtgate unwrap\` restores its config`;

  // The orphaned agent goes on with the server it started under wrap: its shim stays, and refuses
  // each governed call at once with the fix (docs/architecture.md, decision 10), never exits.
  for (let round = 0; round < 2; round += 1) {
    process.kill(agent.pid, "SIGUSR1");
    const called = await waitFor(() => {
      try {
        const seen = JSON.parse(readFileSync(report, "utf8")) as { state: string; after?: unknown };
        return seen.state === "called" ? seen : null;
      } catch {
        return null;
      }
    }, "the orphaned agent's call");
    expect(called.after).toEqual({ code: -32013, message: `MCP error -32013: ThoughtGate blocked tools/call read_note: ${fix}` });
    writeFileSync(report, JSON.stringify({ state: "ready" }));
    // Its next heartbeat finds the session over (the shim's log reaches the agent's stderr): it stays, and the second round is answered after it.
    if (round === 0) await waitFor(() => said.includes(`${fix}; every governed call is refused from now on`), "the shim's heartbeat finding the session over");
  }

  // The user's own policy, for a shim that governs on its own.
  mkdirSync(join(xdgConfig, "thoughtgate"), { recursive: true });
  writeFileSync(join(xdgConfig, "thoughtgate", "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules: [{ id: no-deleting, match: delete_note, action: deny }]\n");
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? dir.path, XDG_CONFIG_HOME: xdgConfig };

  const plain = await spawnEntry(config, base);
  expect(await callError(plain, "delete_note")).toMatchObject({ code: -32014, message: expect.stringContaining("rule no-deleting") });
  expect((await plain.callTool({ name: "read_note", arguments: { id: "a" } }, undefined, { timeout: AT_ONCE_MS })).content).toEqual([{ type: "text", text: "first note" }]);
  await plain.close();

  const orphaned = await spawnEntry(config, { ...base, THOUGHTGATE_SESSION: runId ?? "" });
  const refused = await callError(orphaned, "read_note");
  expect(refused).toEqual({
    code: -32013,
    message: `MCP error -32013: ThoughtGate blocked tools/call read_note: ${fix}`,
  });
  await orphaned.close();

  const unwrap = Bun.spawnSync([requireBinary(), "unwrap", "--config-path", config]);
  expect({ code: unwrap.exitCode, out: unwrap.stdout.toString() }).toMatchObject({ code: 0, out: expect.stringContaining("byte for byte") });
  expect(readFileSync(config, "utf8")).toBe(ORIGINAL);
});
