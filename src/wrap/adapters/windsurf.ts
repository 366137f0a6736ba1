import { join } from "node:path";
import { customPath } from "./config-dirs.ts";
import { entryWithSwitch } from "./entry-fields.ts";
import { readMapFile, type Adapter } from "./shared.ts";

/**
 * Windsurf: `mcpServers` in `~/.codeium/windsurf/mcp_config.json` on every platform; remote
 * servers use `serverUrl` (or `url`), `${env:VAR}` is expanded, and a server toggled off in the
 * Cascade panel is kept with `disabled: true` (rewritten all the same, the flag kept, so turning it
 * back on mid-session starts it through the shim).
 */
export const windsurf: Adapter = {
  agent: "windsurf",
  label: "Windsurf",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    const path = custom ?? join(ctx.home, ".codeium", "windsurf", "mcp_config.json");
    return [readMapFile("windsurf", path, custom ? "custom" : "user", "mcpServers", "windsurf", ctx, entryWithSwitch())];
  },
};
