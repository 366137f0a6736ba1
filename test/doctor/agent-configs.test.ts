import { expect, test } from "bun:test";
import { agentConfigLocations } from "../../src/doctor/agent-configs.ts";

const paths = (platform: NodeJS.Platform, env: NodeJS.ProcessEnv) =>
  agentConfigLocations({ env, cwd: "/work/proj", platform }).map(({ agent, scope, path }) => `${agent} (${scope}): ${path}`);

test("Linux: XDG config dirs, project files in the current directory", () => {
  expect(paths("linux", { HOME: "/home/u", XDG_CONFIG_HOME: "/home/u/.cfg" })).toEqual([
    "Claude Desktop (user): /home/u/.cfg/Claude/claude_desktop_config.json",
    "Claude Code (user): /home/u/.claude.json",
    "Claude Code (project): /work/proj/.mcp.json",
    "Cursor (user): /home/u/.cursor/mcp.json",
    "Cursor (project): /work/proj/.cursor/mcp.json",
    "VS Code (user): /home/u/.cfg/Code/User/mcp.json",
    "VS Code (project): /work/proj/.vscode/mcp.json",
    "Windsurf (user): /home/u/.codeium/windsurf/mcp_config.json",
    "Zed (user): /home/u/.cfg/zed/settings.json",
  ]);
});

test("macOS: desktop apps under Application Support, Zed under ~/.config", () => {
  expect(paths("darwin", { HOME: "/Users/u", XDG_CONFIG_HOME: "/ignored" })).toEqual([
    "Claude Desktop (user): /Users/u/Library/Application Support/Claude/claude_desktop_config.json",
    "Claude Code (user): /Users/u/.claude.json",
    "Claude Code (project): /work/proj/.mcp.json",
    "Cursor (user): /Users/u/.cursor/mcp.json",
    "Cursor (project): /work/proj/.cursor/mcp.json",
    "VS Code (user): /Users/u/Library/Application Support/Code/User/mcp.json",
    "VS Code (project): /work/proj/.vscode/mcp.json",
    "Windsurf (user): /Users/u/.codeium/windsurf/mcp_config.json",
    "Zed (user): /Users/u/.config/zed/settings.json",
  ]);
});
