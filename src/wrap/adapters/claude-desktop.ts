import { join } from "node:path";
import { appDataDir, customPath } from "./config-dirs.ts";
import { invalid, standardEntry, type EntryFields } from "./entry-fields.ts";
import { readMapFile, type Adapter } from "./shared.ts";

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
    return [readMapFile("claude-desktop", path, custom ? "custom" : "user", "mcpServers", "none", ctx, desktopEntry)];
  },
};

/** The app starts only command entries from this file; it reaches remote servers as connectors. */
function desktopEntry(value: unknown): EntryFields {
  const fields = standardEntry(value);
  return fields.transport === "remote" ? invalid("is a url entry, which Claude Desktop does not start from this file (remote servers are its connectors)") : fields;
}
