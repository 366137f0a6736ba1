import { join } from "node:path";
import { customPath } from "./config-dirs.ts";
import { applyPrecedence, readMapFile, type Adapter } from "./shared.ts";

/**
 * Cursor (the editor, and its CLI `cursor-agent`, also installed as `agent`): `mcpServers` in `~/.cursor/mcp.json` (global) and
 * `<project>/.cursor/mcp.json`; a project server overrides a global one of the same name.
 * `${env:NAME}`, `${userHome}`, `${workspaceFolder}` are expanded.
 * A server switched off in Cursor's settings is not marked in the file: it is governed like the others.
 */
export const cursor: Adapter = {
  agent: "cursor",
  label: "Cursor",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readMapFile("cursor", custom, "custom", "mcpServers", "cursor", ctx)];
    const project = readMapFile("cursor", join(ctx.cwd, ".cursor", "mcp.json"), "project", "mcpServers", "cursor", ctx);
    const user = readMapFile("cursor", join(ctx.home, ".cursor", "mcp.json"), "user", "mcpServers", "cursor", ctx);
    applyPrecedence([...project.entries, ...user.entries]);
    return [project, user];
  },
};
