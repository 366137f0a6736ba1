/**
 * Copilot CLI 1.0.102, Gemini CLI 0.61.0 and Qwen Code 0.15.10 (pinned devDependencies) through
 * `thoughtgate wrap`, with their own MCP listing: Gemini and Qwen connect to each server to list it
 * and report it connected through the shim; Copilot's `mcp list|get` only read the config (a
 * session needs a GitHub sign-in, which a test cannot have), so it shows the shim as the command.
 * Each user config is byte-identical afterwards. Gemini CLI starts no server in a folder the user
 * has not trusted (`~/.gemini/trustedFolders.json`), so the project is trusted here.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentBinary, agentSandbox, everythingServer, runAgent, type AgentLaunch, type AgentName, type AgentSandbox } from "../../support/agents.ts";
import { bytes, shimCommandPattern, throughWrap, withRecord } from "../../support/wrapped-agents.ts";

setDefaultTimeout(60_000);

function writeJson(path: string, value: unknown): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
  return path;
}

/** Run `argv` through wrap in the sandbox; the config's bytes before and after. */
async function listThroughWrap(sandbox: AgentSandbox, config: string, agent: AgentName, args: string[]) {
  const original = bytes(config);
  const launch: AgentLaunch = { agent, argv: [agentBinary(agent), ...args], cwd: sandbox.project, env: { ...sandbox.env } };
  const run = withRecord(await runAgent(throughWrap(launch), sandbox));
  return { run, output: (run.stdout + run.stderr).replace(/\x1b\[[0-9;]*m/g, ""), same: bytes(config).equals(original) };
}

describe("each agent's own MCP listing through thoughtgate wrap", () => {
  test("Gemini CLI: `gemini mcp list` reports the server connected through the shim", async () => {
    await using sandbox = agentSandbox();
    writeJson(join(sandbox.home, ".gemini", "trustedFolders.json"), { [sandbox.project]: "TRUST_FOLDER" });
    const config = writeJson(join(sandbox.home, ".gemini", "settings.json"), { mcpServers: { everything: everythingServer(sandbox) } });
    const { run, output, same } = await listThroughWrap(sandbox, config, "gemini", ["mcp", "list"]);
    expect({ exitCode: run.exitCode, leftovers: run.leftovers, network: sandbox.trap.attempts }, output).toEqual({ exitCode: 0, leftovers: [], network: [] });
    expect(output).toMatch(new RegExp(`✓ everything: ${shimCommandPattern(sandbox, "everything")}.* - Connected`));
    expect(run.events("run_start")).toHaveLength(1);
    expect(same).toBe(true);
  });

  test("Qwen Code: `qwen mcp list` reports the server connected through the shim", async () => {
    await using sandbox = agentSandbox();
    // Qwen Code migrates a settings file on its first run (adding `"$version": 4`) and leaves it alone after that.
    const config = writeJson(join(sandbox.home, ".qwen", "settings.json"), { mcpServers: { everything: everythingServer(sandbox) }, $version: 4 });
    const { run, output, same } = await listThroughWrap(sandbox, config, "qwen", ["mcp", "list"]);
    expect({ exitCode: run.exitCode, leftovers: run.leftovers, network: sandbox.trap.attempts }, output).toEqual({ exitCode: 0, leftovers: [], network: [] });
    expect(output).toMatch(new RegExp(`✓ everything: ${shimCommandPattern(sandbox, "everything")}.* - Connected`));
    expect(run.events("run_start")).toHaveLength(1);
    expect(same).toBe(true);
  });

  test("Copilot CLI: `copilot mcp get` shows the shim as the server's command (Copilot's mcp commands never connect)", async () => {
    await using sandbox = agentSandbox();
    const server = everythingServer(sandbox);
    const config = writeJson(join(sandbox.home, ".copilot", "mcp-config.json"), { mcpServers: { everything: { type: "local", ...server, tools: ["*"] } } });
    const { run, output, same } = await listThroughWrap(sandbox, config, "copilot", ["mcp", "get", "everything"]);
    expect({ exitCode: run.exitCode, leftovers: run.leftovers, network: sandbox.trap.attempts }, output).toEqual({ exitCode: 0, leftovers: [], network: [] });
    expect(output).toMatch(new RegExp(`Command: ${shimCommandPattern(sandbox, "everything")}`));
    expect(output).toContain(`-- ${server.command} ${server.args.join(" ")}\n`);
    expect(same).toBe(true);
  });
});
