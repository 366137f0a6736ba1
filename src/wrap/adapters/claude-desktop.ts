import { join } from "node:path";
import { appDataDir, customPath, readMapFile, type Adapter } from "./shared.ts";

/**
 * Claude Desktop: `mcpServers` in `claude_desktop_config.json`, under Application Support on macOS
 * and `~/.config/Claude` on Linux (the community builds). Values are taken literally: the app
 * expands no variables.
 */
export const claudeDesktop: Adapter = {
  agent: "claude-desktop",
  label: "Claude Desktop",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    const path = custom ?? join(appDataDir(ctx), "Claude", "claude_desktop_config.json");
    return [readMapFile("claude-desktop", path, custom ? "custom" : "user", "mcpServers", "none", ctx)];
  },
};
