import { join } from "node:path";
import { isPlainObject } from "./jsonc.ts";
import { customPath, invalid, readMapFile, standardEntry, type Adapter } from "./shared.ts";

/**
 * Windsurf: `mcpServers` in `~/.codeium/windsurf/mcp_config.json` on every platform; remote
 * servers use `serverUrl` (or `url`), `${env:VAR}` is expanded, and a server toggled off in the
 * Cascade panel is kept with `disabled: true`.
 */
export const windsurf: Adapter = {
  agent: "windsurf",
  label: "Windsurf",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    const path = custom ?? join(ctx.home, ".codeium", "windsurf", "mcp_config.json");
    return [readMapFile("windsurf", path, custom ? "custom" : "user", "mcpServers", "windsurf", ctx, windsurfEntry)];
  },
};

function windsurfEntry(value: unknown) {
  if (!isPlainObject(value)) return invalid("is not an object");
  const fields = standardEntry(value);
  if (value.disabled === true && fields.status !== "remote") {
    return { ...fields, status: "disabled" as const, reason: "disabled: true: Windsurf does not start it, left untouched" };
  }
  return fields;
}
