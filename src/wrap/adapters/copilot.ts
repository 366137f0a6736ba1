import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { projectDirs } from "../../core/project.ts";
import { customPath } from "./config-dirs.ts";
import { entryWithSwitch } from "./entry-fields.ts";
import { applyPrecedence, disable, openConfigFile, readMapFile, stringList, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigFile } from "./types.ts";

/**
 * GitHub Copilot CLI (`copilot`): `mcpServers` in JSON.
 *
 * Confirmed with Copilot CLI 1.0.102 (`copilot mcp add/list/disable`, a temporary HOME):
 * - the user file is `$COPILOT_HOME/mcp-config.json`, `~/.copilot/mcp-config.json` when
 *   COPILOT_HOME is unset. XDG_CONFIG_HOME does not move it (versions up to 0.0.421 read
 *   `$XDG_CONFIG_HOME/.copilot/`; such a file is read too when it exists);
 * - workspace files are `.mcp.json` and `.github/mcp.json` in the working directory and each
 *   parent up to the repository root, nearest first and winning over the user file; outside a
 *   repository only the working directory's. Copilot reads them only in a trusted folder and takes
 *   `.github/mcp.json` only where there is no `.mcp.json`; wrap governs every one it finds;
 * - stdio entries say `type: "local"` (what `copilot mcp add` writes) or `"stdio"`, with
 *   `command`, `args`, `env`, `tools`; `http` and `sse` entries are remote;
 * - `copilot mcp disable NAME` lists the name in `disabledMcpServers` of `settings.json` beside
 *   the user file; the entry itself does not change;
 * - values are taken literally.
 * Not seen by wrap: servers of installed plugins, and the built-in GitHub MCP server (remote).
 * Docs: https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference.
 */
export const copilot: Adapter = {
  agent: "copilot",
  label: "Copilot CLI",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readCopilotFile(custom, "custom", ctx)];
    const workspace = projectDirs(ctx.cwd, "cwd").flatMap((dir, i) =>
      [join(dir, ".mcp.json"), join(dir, ".github", "mcp.json")].filter((path) => i === 0 || existsSync(path)).map((path) => readCopilotFile(path, "project", ctx)),
    );
    const user = [readCopilotFile(join(copilotHome(ctx), "mcp-config.json"), "user", ctx)];
    const legacy = ctx.env.XDG_CONFIG_HOME ? join(ctx.env.XDG_CONFIG_HOME, ".copilot", "mcp-config.json") : undefined;
    if (legacy && legacy !== user[0]?.path && existsSync(legacy)) user.push(readCopilotFile(legacy, "user", ctx));
    const files = [...workspace, ...user];
    const disabled = disabledMcpServers(ctx, user[0]);
    for (const entry of files.flatMap((file) => file.entries)) if (disabled.has(entry.name)) disable(entry, "disabledMcpServers");
    applyPrecedence(files.flatMap((file) => file.entries));
    return files;
  },
};

function copilotHome(ctx: AgentContext): string {
  const dir = ctx.env.COPILOT_HOME;
  return dir ? resolve(ctx.cwd, dir) : join(ctx.home, ".copilot");
}

function readCopilotFile(path: string, scope: ConfigFile["scope"], ctx: AgentContext): ConfigFile {
  return readMapFile("copilot", path, scope, "mcpServers", "none", ctx, entryWithSwitch(() => undefined, ["local"]));
}

/** The names `copilot mcp disable` listed; a settings file that cannot be read is a warning on `target`. */
function disabledMcpServers(ctx: AgentContext, target: ConfigFile | undefined): Set<string> {
  const path = join(copilotHome(ctx), "settings.json");
  const { file, values } = openConfigFile("copilot", path, "user", [["disabledMcpServers"]]);
  for (const problem of file.problems) target?.warnings.push(`${path} ${problem}: its disabledMcpServers were not read`);
  return new Set(stringList(values[0]) ?? []);
}
