import { join } from "node:path";
import { appDataDir, customPath } from "./config-dirs.ts";
import { readMapFile, type Adapter } from "./shared.ts";

/**
 * VS Code: `servers` (not `mcpServers`) in the workspace `.vscode/mcp.json` and the user
 * profile's `mcp.json` (`~/.config/Code/User/`, macOS `~/Library/Application Support/Code/User/`;
 * `Code - Insiders` for Insiders). VS Code keeps a server from each file as its own, so the same
 * name in both files is two servers: no precedence. An entry with `command` is stdio whether or
 * not it says `type: "stdio"`. `${input:…}` is asked for when the server starts: left as written.
 * A server stopped or disabled in VS Code's UI is not marked in the file: it is governed like the others.
 */
export const vscode: Adapter = {
  agent: "vscode",
  label: "VS Code",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readMapFile("vscode", custom, "custom", "servers", "vscode", ctx)];
    const product = options.insiders ? "Code - Insiders" : "Code";
    return [
      readMapFile("vscode", join(ctx.cwd, ".vscode", "mcp.json"), "project", "servers", "vscode", ctx),
      readMapFile("vscode", join(appDataDir(ctx), product, "User", "mcp.json"), "user", "servers", "vscode", ctx),
    ];
  },
};
