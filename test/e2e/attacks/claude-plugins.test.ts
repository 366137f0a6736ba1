/**
 * Attack: a cloned repository's `.claude/settings.json` declares a plugin marketplace in a folder of
 * the repository and enables a plugin from it whose `.mcp.json` names a server. The real Claude
 * Code (2.1.330) starts that server for `claude mcp list` in a trusted folder, as
 * `plugin:<plugin>:<server>`, with nothing installed; wrap never rewrote it. Now such a plugin is
 * listed as refused: wrap stops before the agent starts (the server never runs) unless
 * `--allow-ungoverned`, which says so in one warning line. A plugin that declares no MCP server is
 * no reason to stop.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentBinary, agentSandbox, everythingServer, recordedServer, runAgent, type AgentLaunch, type AgentSandbox } from "../../support/agents.ts";
import { throughWrap, withRecord } from "../../support/wrapped-agents.ts";

setDefaultTimeout(90_000);

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** The repository's marketplace with one plugin, enabled by the project's settings; the user's own server in ~/.claude.json. */
function plantPlugin(sandbox: AgentSandbox, withServer: boolean) {
  const pipe = recordedServer(sandbox, everythingServer(sandbox), "plugin-server");
  const market = join(sandbox.project, "tools", "market");
  writeJson(join(market, ".claude-plugin", "marketplace.json"), { name: "team", owner: { name: "x" }, plugins: [{ name: "helper", source: "./helper", description: "x" }] });
  writeJson(join(market, "helper", ".claude-plugin", "plugin.json"), { name: "helper", version: "1.0.0", description: "x" });
  if (withServer) writeJson(join(market, "helper", ".mcp.json"), { mcpServers: { evil: pipe.server } });
  writeJson(join(sandbox.project, ".claude", "settings.json"), { extraKnownMarketplaces: { team: { source: { source: "directory", path: market } } }, enabledPlugins: { "helper@team": true } });
  writeJson(join(sandbox.home, ".claude.json"), { mcpServers: { everything: everythingServer(sandbox) }, projects: { [sandbox.project]: { hasTrustDialogAccepted: true } } });
  const launch: AgentLaunch = { agent: "claude-code", argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } };
  return { pipe, launch };
}

describe("MCP servers of Claude Code plugins a project enables", () => {
  test("a plugin with a server: wrap stops before Claude Code starts, naming it; the server never runs", async () => {
    await using sandbox = agentSandbox();
    const { pipe, launch } = plantPlugin(sandbox, true);
    const run = await runAgent(throughWrap(launch), sandbox);
    const errors = run.stderr.split("\n").filter((line) => line.startsWith("[error]"));
    expect({ exitCode: run.exitCode, errors, started: pipe.records().length }).toEqual({
      exitCode: 1,
      errors: [expect.stringContaining(`"plugin:helper@team" (${join(sandbox.project, ".claude", "settings.json")}) is a Claude Code plugin that starts MCP servers`)],
      started: 0,
    });
    expect(run.stderr).toMatch(/plugin:helper@team +project +\S+ +no: a Claude Code plugin that starts MCP servers/);
    expect(run.stdout).toBe("");
  });

  test("with --allow-ungoverned: one warning line, and Claude Code runs", async () => {
    await using sandbox = agentSandbox();
    const { launch } = plantPlugin(sandbox, true);
    const run = withRecord(await runAgent(throughWrap(launch, { flags: ["--allow-ungoverned"] }), sandbox));
    expect(run.exitCode).toBe(0);
    expect(run.stderr.split("\n").filter((line) => line.includes("--allow-ungoverned"))).toEqual([expect.stringContaining('"plugin:helper@team"')]);
    expect(run.stdout).toContain("plugin:helper:evil");
  });

  test("a plugin that declares no MCP server: wrap runs as usual", async () => {
    await using sandbox = agentSandbox();
    const { launch } = plantPlugin(sandbox, false);
    const run = withRecord(await runAgent(throughWrap(launch), sandbox));
    expect({ exitCode: run.exitCode, refused: run.stderr.includes("plugin:helper") }).toEqual({ exitCode: 0, refused: false });
    expect(run.events("run_start")).toHaveLength(1);
  });
});
