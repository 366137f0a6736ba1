import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { checkAgentConfigs, type AgentConfigReport } from "../../src/doctor/agent-configs.ts";
import { agentConfigFixture } from "../support/agent-configs.ts";
import { tempDir } from "../support/harness.ts";

const reports = (data: Record<string, unknown>) => data.agents as AgentConfigReport[];
const existing = (data: Record<string, unknown>) =>
  reports(data).flatMap((agent) => agent.files.filter((file) => file.exists).map((file) => ({ agent: agent.agent, ...file })));

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

test("every agent wrap knows but custom is reported, with the files its adapter would read", () => {
  using home = tempDir();
  const ctx = { home: home.path, cwd: join(home.path, "proj"), env: { HOME: home.path }, platform: "linux" as const };
  const check = checkAgentConfigs(ctx);
  expect(check.status).toBe("info");
  expect(check.summary).toBe("no agent MCP config file found");
  expect(reports(check.data).map((agent) => `${agent.label}: ${agent.files.map((file) => `${file.scope} ${file.path.replace(home.path, "~")}`).join(", ")}`)).toEqual([
    "Claude Desktop: user ~/.config/Claude/claude_desktop_config.json",
    "Claude Code: user ~/.claude.json, project ~/proj/.mcp.json",
    "Cursor: project ~/proj/.cursor/mcp.json, user ~/.cursor/mcp.json",
    // VS Code and VS Code Insiders keep separate user profiles; doctor has no command to tell which.
    "VS Code: project ~/proj/.vscode/mcp.json, user ~/.config/Code/User/mcp.json, user ~/.config/Code - Insiders/User/mcp.json",
    "Windsurf: user ~/.codeium/windsurf/mcp_config.json",
    "Zed: project ~/proj/.zed/settings.json, user ~/.config/zed/settings.json",
    "Codex: project ~/proj/.codex/config.toml, user ~/.codex/config.toml",
    "Copilot CLI: project ~/proj/.mcp.json, project ~/proj/.github/mcp.json, user ~/.copilot/mcp-config.json",
    "opencode: project ~/proj/opencode.json, user ~/.config/opencode/opencode.jsonc",
    "Gemini CLI: project ~/proj/.gemini/settings.json, user ~/.gemini/settings.json",
    "Qwen Code: project ~/proj/.qwen/settings.json, user ~/.qwen/settings.json",
    "Kiro: project ~/proj/.kiro/settings/mcp.json, user ~/.kiro/settings/mcp.json",
    "goose: user ~/.config/goose/config.yaml",
    "Cline: user ~/.cline/data/settings/cline_mcp_settings.json, user ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    "Amp: project ~/proj/.amp/settings.json, user ~/.config/amp/settings.json",
    "Junie: project ~/proj/.junie/mcp/mcp.json, user ~/.junie/mcp/mcp.json",
  ]);
});

test("Claude Code: the servers wrap would govern and those it leaves alone, per file and per agent", () => {
  using fixture = agentConfigFixture("claude-code");
  const check = checkAgentConfigs(fixture.ctx);
  const claudeCode = reports(check.data).find((agent) => agent.agent === "claude-code");
  // The user file holds user and local entries; the project's disabledMcpjsonServers are read
  // from ~/.claude.json and .claude/settings.local.json, as wrap reads them.
  // Servers turned off in disabledMcpjsonServers are governed too (rewritten with the flag kept).
  expect(claudeCode).toEqual({
    agent: "claude-code",
    label: "Claude Code",
    governed: 10,
    disabled: 2,
    leftAlone: { remote: 1 },
    files: [
      { path: join(fixture.home, ".claude.json"), scope: "user", exists: true, governed: 6, disabled: 0, leftAlone: {}, problems: [], warnings: [] },
      { path: join(fixture.project, ".mcp.json"), scope: "project", exists: true, governed: 4, disabled: 2, leftAlone: { remote: 1 }, problems: [], warnings: [] },
    ],
  });
  expect(check.status).toBe("info");
  // Copilot CLI reads the project's .mcp.json too (without Claude Code's disabledMcpjsonServers).
  expect(check.summary).toBe("3 config files of 2 agents: 14 servers wrap would govern, 2 left alone");
  expect(check.details).toEqual([
    "Claude Code: 10 servers to govern (2 disabled), 1 left alone (1 remote)",
    `  ${join(fixture.home, ".claude.json")} (user): 6 servers to govern`,
    `  ${join(fixture.project, ".mcp.json")} (project): 4 servers to govern (2 disabled), 1 left alone (1 remote)`,
    "Copilot CLI: 4 servers to govern, 1 left alone (1 remote)",
    `  ${join(fixture.project, ".mcp.json")} (project): 4 servers to govern, 1 left alone (1 remote)`,
    "no config file: Claude Desktop, Cursor, VS Code, Windsurf, Zed, Codex, opencode, Gemini CLI, Qwen Code, Kiro, goose, Cline, Amp, Junie",
  ]);
});

test("Zed: extension servers and remote ones are left alone; a disabled one is governed", () => {
  using fixture = agentConfigFixture("zed");
  const check = checkAgentConfigs(fixture.ctx);
  expect(existing(check.data)).toEqual([
    {
      agent: "zed",
      path: join(fixture.home, ".config", "zed", "settings.json"),
      scope: "user",
      exists: true,
      governed: 4,
      disabled: 1,
      leftAlone: { extension: 1, remote: 1 },
      problems: [],
      warnings: [],
    },
  ]);
  expect(check.details[0]).toBe("Zed: 4 servers to govern (1 disabled), 2 left alone (1 remote, 1 run by an extension)");
});

test("a config that does not parse is a warning, not a crash; the other agents are still reported", () => {
  using home = tempDir();
  const cwd = join(home.path, "proj");
  const cursor = join(home.path, ".cursor", "mcp.json");
  write(cursor, '{ "mcpServers": { "github": ');
  write(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } } }));
  // Looks like a shim, but /usr/local/bin/thoughtgate is not this thoughtgate: wrap would govern it like any server.
  const windsurf = join(home.path, ".codeium", "windsurf", "mcp_config.json");
  write(windsurf, JSON.stringify({ mcpServers: { fs: { command: "/usr/local/bin/thoughtgate", args: ["shim", "--", "npx", "server-filesystem"] } } }));
  const check = checkAgentConfigs({ home: home.path, cwd, env: { HOME: home.path }, platform: "linux" });

  expect(check.status).toBe("warn");
  // The project's .mcp.json is Claude Code's and Copilot CLI's.
  expect(check.summary).toBe("4 config files of 4 agents: 3 servers wrap would govern, 0 left alone; 1 warning");
  expect(existing(check.data).map(({ agent, governed, leftAlone, problems }) => ({ agent, governed, leftAlone, problems }))).toEqual([
    { agent: "claude-code", governed: 1, leftAlone: {}, problems: [] },
    { agent: "cursor", governed: 0, leftAlone: {}, problems: [expect.stringMatching(/^does not parse \(line 1, column \d+: /)] },
    { agent: "windsurf", governed: 1, leftAlone: {}, problems: [] },
    { agent: "copilot", governed: 1, leftAlone: {}, problems: [] },
  ]);
  expect(check.details).toContain(`  warning: ${cursor} ${(existing(check.data)[1]?.problems ?? [])[0]}; wrap leaves it untouched`);
  expect(check.details).toContain(`  ${windsurf} (user): 1 server to govern`);
});

test("a config path that is a directory is a warning about that file", () => {
  using home = tempDir();
  mkdirSync(join(home.path, ".config", "Claude", "claude_desktop_config.json"), { recursive: true });
  const check = checkAgentConfigs({ home: home.path, cwd: home.path, env: { HOME: home.path }, platform: "linux" });
  expect(check.status).toBe("warn");
  expect(existing(check.data)).toEqual([
    expect.objectContaining({ agent: "claude-desktop", governed: 0, problems: ["is a directory, not a regular file"] }),
  ]);
});
