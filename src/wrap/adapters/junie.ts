import { join } from "node:path";
import { customPath } from "./config-dirs.ts";
import { applyPrecedence, readMapFile, type Adapter } from "./shared.ts";

/**
 * JetBrains Junie (the `junie` CLI and the IDE plugin): `mcpServers` in `mcp.json`. From the
 * documentation only (https://www.jetbrains.com/help/junie/model-context-protocol-mcp.html,
 * https://junie.jetbrains.com/docs/junie-cli-mcp-configuration.html); no Junie binary was run.
 * Confirmed by the docs: a JSON config of `command` and `args` per server, stdio servers.
 * Assumed (the pages name the files; the formats of other tools that write them agree): the user
 * file `~/.junie/mcp/mcp.json` and the project file `.junie/mcp/mcp.json` in the working directory,
 * the project's servers winning; `env` beside `command`; remote entries with `url` left alone;
 * no off switch in the entry; values taken literally.
 */
export const junie: Adapter = {
  agent: "junie",
  label: "Junie",
  discover(ctx, options) {
    const read = (path: string, scope: "user" | "project" | "custom") => readMapFile("junie", path, scope, "mcpServers", "none", ctx);
    const custom = customPath(ctx, options);
    if (custom) return [read(custom, "custom")];
    const files = [read(join(ctx.cwd, ".junie", "mcp", "mcp.json"), "project"), read(join(ctx.home, ".junie", "mcp", "mcp.json"), "user")];
    applyPrecedence(files.flatMap((file) => file.entries));
    return files;
  },
};
