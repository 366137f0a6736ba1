import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where each supported agent keeps its MCP server list. `doctor` reports which exist; the wrap
 * adapters (not built yet) should become the one source of these paths when they land.
 */
export type AgentConfigLocation = {
  agent: string;
  /** `user`: the agent's global config; `project`: a file in the current directory. */
  scope: "user" | "project";
  path: string;
};

export type LocationContext = { env: NodeJS.ProcessEnv; cwd: string; platform: NodeJS.Platform };

export function agentConfigLocations({ env, cwd, platform }: LocationContext): AgentConfigLocation[] {
  const home = env.HOME || homedir();
  // Desktop apps on macOS keep their files under Application Support; on Linux they follow XDG.
  const appData = platform === "darwin" ? join(home, "Library", "Application Support") : env.XDG_CONFIG_HOME || join(home, ".config");
  // Zed uses ~/.config/zed on macOS too, and XDG_CONFIG_HOME on Linux.
  const zedDir = platform === "darwin" ? join(home, ".config", "zed") : join(env.XDG_CONFIG_HOME || join(home, ".config"), "zed");
  return [
    { agent: "Claude Desktop", scope: "user", path: join(appData, "Claude", "claude_desktop_config.json") },
    { agent: "Claude Code", scope: "user", path: join(home, ".claude.json") },
    { agent: "Claude Code", scope: "project", path: join(cwd, ".mcp.json") },
    { agent: "Cursor", scope: "user", path: join(home, ".cursor", "mcp.json") },
    { agent: "Cursor", scope: "project", path: join(cwd, ".cursor", "mcp.json") },
    { agent: "VS Code", scope: "user", path: join(appData, "Code", "User", "mcp.json") },
    { agent: "VS Code", scope: "project", path: join(cwd, ".vscode", "mcp.json") },
    { agent: "Windsurf", scope: "user", path: join(home, ".codeium", "windsurf", "mcp_config.json") },
    { agent: "Zed", scope: "user", path: join(zedDir, "settings.json") },
  ];
}
