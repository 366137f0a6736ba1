/**
 * Claude Code 2.1.330 is a dual-era client: it probes every stdio server with `server/discover`
 * (protocol 2026-07-28 in `_meta`) and falls back to `initialize` 2025-11-25 when the server does
 * not answer as a modern one. Its recorded bytes (test/fixtures/recorded/) are replayed through the
 * compiled shim against a server of each era, and the real `claude` lists a 2026-07-28-only server
 * as connected through `thoughtgate wrap`.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox } from "../support/agents.ts";
import { BINARY, FIXTURES, fixture, requireBinary, tempDir } from "../support/harness.ts";
import { RawAgent, type Received } from "../support/raw-agent.ts";

requireBinary();

const FORWARD_ALL = "schema: 1\ngovernance: { defaults: { action: forward } }\n";

/** Send each recorded line; for a request, wait for the answer with its id. */
async function replay(agent: RawAgent, file: string): Promise<Map<unknown, Received>> {
  const answers = new Map<unknown, Received>();
  for (const line of readFileSync(join(FIXTURES, "recorded", file), "utf8").split("\n").filter(Boolean)) {
    const message = JSON.parse(line) as { id?: unknown; method?: string };
    agent.write(`${line}\n`);
    if (message.id !== undefined && message.method !== undefined) answers.set(message.id, (await agent.until(message.id)).match);
  }
  return answers;
}

function shimTo(dir: string, server: string[]): RawAgent {
  Bun.write(join(dir, "thoughtgate.yaml"), FORWARD_ALL);
  return new RawAgent(["--server-id", "notes", "--events", "none", "--thoughtgate-config", join(dir, "thoughtgate.yaml"), "--", ...server]);
}

describe("Claude Code's handshake, replayed as recorded", () => {
  test("against a 2025-11-25 server: the probe gets the server's own -32601, and the fallback to initialize works", async () => {
    using dir = tempDir();
    const agent = shimTo(dir.path, fixture("sdk-server-fixture.ts"));
    try {
      const answers = await replay(agent, "claude-code-2.1.330-probe-then-initialize.ndjson");
      expect(answers.get("server-discover-probe-1")?.error).toMatchObject({ code: -32601 });
      expect(answers.get(0)?.result).toMatchObject({ protocolVersion: "2025-11-25", serverInfo: { name: "sdk-server-fixture" } });
      expect(answers.get(1)?.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(["confirm_action", "delete_note", "read_note"]);
    } finally {
      await agent.close();
    }
  });

  test("against a 2026-07-28 server: discover answers as a modern server, and the lists and calls carry _meta", async () => {
    using dir = tempDir();
    const agent = shimTo(dir.path, fixture("tmcp-server-fixture.ts", "--era", "modern"));
    try {
      const answers = await replay(agent, "claude-code-2.1.330-modern.ndjson");
      expect(answers.get("server-discover-probe-1")?.result).toMatchObject({ supportedVersions: ["2026-07-28"], resultType: "complete" });
      expect(answers.get(0)?.result).toMatchObject({ resultType: "complete", cacheScope: "public" });
      // The recorded call was for a tool this server lacks: it reached the server and got its answer.
      expect(answers.get(1)?.result ?? answers.get(1)?.error).toBeDefined();
    } finally {
      await agent.close();
    }
  });
});

describe("the real claude", () => {
  test("thoughtgate wrap -- claude mcp list: a 2026-07-28-only server is connected through the shim; its entry is restored exactly", async () => {
    await using sandbox = agentSandbox();
    const config = join(sandbox.home, ".claude.json");
    const server = { command: process.execPath, args: [join(FIXTURES, "tmcp-server-fixture.ts"), "--era", "modern", sandbox.marker] };
    const original = `${JSON.stringify({ mcpServers: { notes: server } }, null, 2)}\n`;
    await Bun.write(config, original);
    const proc = Bun.spawn([BINARY, "wrap", "--", agentBinary("claude-code"), "mcp", "list"], {
      cwd: sandbox.project,
      env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stdout }).toMatchObject({ code: 0, stdout: expect.stringMatching(/notes: .*thoughtgate.* shim .*- ✔ Connected/) });
    // Claude Code writes ~/.claude.json on every run (first-start time, ids): wrap keeps those and
    // puts back exactly the entries it rewrote.
    expect(stderr).toContain(`restored ${config} (kept the agent's own changes)`);
    expect(JSON.parse(readFileSync(config, "utf8")).mcpServers).toEqual({ notes: server });
  }, 60_000);
});
