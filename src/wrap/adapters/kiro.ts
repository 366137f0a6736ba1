import { readdirSync } from "node:fs";
import { join } from "node:path";
import { customPath, ifReadable } from "./config-dirs.ts";
import { entryWithSwitch } from "./entry-fields.ts";
import { applyPrecedence, readMapFile, type Adapter } from "./shared.ts";

/**
 * Kiro (the `kiro` IDE and `kiro-cli`): `mcpServers` in `mcp.json`. From the documentation only
 * (https://kiro.dev/docs/mcp/configuration/, https://kiro.dev/docs/cli/mcp/configuration/,
 * https://kiro.dev/docs/cli/chat/configuration/); no Kiro binary was run.
 * Confirmed by the docs: the user file `~/.kiro/settings/mcp.json` and the workspace file
 * `.kiro/settings/mcp.json`, merged with the workspace winning; stdio entries `command`, `args`,
 * `env` (`${VAR}` expanded), `disabled`, `autoApprove`, `disabledTools`; remote entries `url`
 * with `headers` (or `type: "http"`); `disabled: true` turns one off.
 * Assumed: the workspace file is the one in the working directory (the CLI) or the folder the IDE
 * opens, not in its parents. Custom agents (`.kiro/agents/*.json` in the workspace, `~/.kiro/agents/*.json`)
 * carry `mcpServers` of the same shape, which the CLI starts for the agent it runs (preferring them
 * over the two files, and adding those unless `includeMcpJson: false`): each agent file is read
 * and rewritten the same way (https://kiro.dev/docs/cli/custom-agents/configuration-reference/).
 */
export const kiro: Adapter = {
  agent: "kiro",
  label: "Kiro",
  discover(ctx, options) {
    const read = (path: string, scope: "user" | "project" | "custom") => readMapFile("kiro", path, scope, "mcpServers", "kiro", ctx, entryWithSwitch());
    const custom = customPath(ctx, options);
    if (custom) return [read(custom, "custom")];
    const files = [read(join(ctx.cwd, ".kiro", "settings", "mcp.json"), "project"), read(join(ctx.home, ".kiro", "settings", "mcp.json"), "user")];
    applyPrecedence(files.flatMap((file) => file.entries));
    // Which agent the CLI runs is its own choice: every agent file is governed, none shadows another.
    const agents = [...agentFiles(join(ctx.cwd, ".kiro", "agents"), "project"), ...agentFiles(join(ctx.home, ".kiro", "agents"), "user")].map(({ path, scope }) => read(path, scope));
    return [...files, ...agents.filter((file) => file.entries.length > 0 || file.problems.length > 0)];
  },
};

/** The custom agent files of one directory, in name order. */
function agentFiles(dir: string, scope: "user" | "project"): Array<{ path: string; scope: "user" | "project" }> {
  const names = ifReadable(() => readdirSync(dir, { withFileTypes: true })) ?? [];
  return names
    .filter((entry) => entry.isFile() && entry.name.endsWith(".json"))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ path: join(dir, name), scope }));
}
