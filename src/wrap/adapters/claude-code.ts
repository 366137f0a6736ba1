import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { selfAndParents } from "../../core/project.ts";
import { customPath } from "./config-dirs.ts";
import { pluginServers } from "./claude-plugins.ts";
import { standardEntry } from "./entry-fields.ts";
import { propertiesOf } from "./jsonc.ts";
import { applyPrecedence, disable, entriesOfMap, openConfigFile, readMapFile, stringList, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigFile } from "./types.ts";

/**
 * Claude Code (the `claude` CLI) reads servers from three scopes (docs "MCP installation scopes"):
 * - user: `mcpServers` at the top of `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when set);
 * - local: `projects["<abs dir>"].mcpServers` in the same file, private to one directory;
 * - project: `mcpServers` in `.mcp.json`, shared through the repository; servers listed in
 *   `disabledMcpjsonServers` (the project's entry in `~/.claude.json`, or a settings file) are
 *   not started (they are rewritten all the same, so one approved mid-session is governed);
 *   a server of any scope turned off with `/mcp` is listed in the project entry's
 *   `disabledMcpServers`, and is rewritten all the same too.
 * Precedence is local > project > user. Claude Code versions differ on whether a session in a
 * subdirectory also picks up `.mcp.json` and `projects[...]` of the parent directories, so those
 * are read (and governed) too: an entry the agent never starts costs nothing, one it starts
 * without the shim would be a hole. `${VAR}` and `${VAR:-default}` are expanded in every scope.
 * Plugins enabled in a settings file start the MCP servers they declare, which wrap does not
 * rewrite: they are listed as refused (claude-plugins.ts).
 */
export const claudeCode: Adapter = {
  agent: "claude-code",
  label: "Claude Code",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readMapFile("claude-code", custom, "custom", "mcpServers", "claude-code", ctx)];
    // Claude Code keys projects by the absolute directory, without a trailing slash.
    const cwd = resolve(ctx.cwd);
    const dirs = selfAndParents(cwd);
    const userPath = join(claudeConfigDir(ctx) ?? ctx.home, ".claude.json");
    const paths: JSONPath[] = [
      ["mcpServers"],
      ["projects", cwd, "disabledMcpjsonServers"],
      ["projects", cwd, "disabledMcpServers"],
      ...dirs.map((dir) => ["projects", dir, "mcpServers"]),
      ...(options.everyProject ? [["projects"]] : []),
    ];
    const { file: userFile, values } = openConfigFile("claude-code", userPath, "user", paths);
    const spec = { agent: "claude-code", file: userPath, syntax: "claude-code", ctx } as const;
    const userEntries = entriesOfMap(userFile, values[0], { ...spec, scope: "user", mapPath: ["mcpServers"] }, standardEntry);
    const localEntries = dirs.flatMap((dir, i) =>
      entriesOfMap(userFile, values[i + 3], { ...spec, scope: "local", mapPath: ["projects", dir, "mcpServers"] }, standardEntry),
    );
    const projects = options.everyProject ? values[dirs.length + 3] : undefined;
    for (const [dir, project] of projects?.node.type === "object" ? propertiesOf(projects.node).props : []) {
      const servers = dirs.includes(dir) || project.type !== "object" ? undefined : propertiesOf(project).props.get("mcpServers");
      if (servers) localEntries.push(...entriesOfMap(userFile, { base: projects?.base ?? 0, node: servers }, { ...spec, scope: "local", mapPath: ["projects", dir, "mcpServers"] }, standardEntry));
    }
    userFile.entries = [...userEntries, ...localEntries];

    const projectFiles = dirs
      .map((dir) => join(dir, ".mcp.json"))
      .filter((path, i) => i === 0 || existsSync(path))
      .map((path) => readMapFile("claude-code", path, "project", "mcpServers", "claude-code", ctx));
    const projectEntries = projectFiles.flatMap((file) => file.entries);
    const [nearest] = projectFiles;
    if (nearest) {
      const disabled = disabledMcpjsonServers(ctx, values[1] === undefined ? undefined : stringList(values[1]), nearest);
      for (const entry of projectEntries) if (disabled.has(entry.name)) disable(entry, "disabledMcpjsonServers");
    }
    // `/mcp` → disable, for a server of any scope, in this directory only.
    const toggledOff = new Set(values[2] === undefined ? [] : (stringList(values[2]) ?? []));
    for (const entry of [...userFile.entries, ...projectEntries]) if (toggledOff.has(entry.name)) disable(entry, "disabledMcpServers");
    applyPrecedence([...localEntries, ...projectEntries, ...userEntries]);
    return [userFile, ...projectFiles, ...pluginServers(ctx, claudeHome(ctx))];
  },
};

/** `$CLAUDE_CONFIG_DIR` (relative to the working directory), when set. */
function claudeConfigDir(ctx: AgentContext): string | undefined {
  const dir = ctx.env.CLAUDE_CONFIG_DIR;
  return dir ? resolve(ctx.cwd, dir) : undefined;
}

/** Claude Code's own directory, where its user `settings.json` is: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeHome(ctx: AgentContext): string {
  return claudeConfigDir(ctx) ?? join(ctx.home, ".claude");
}

/**
 * Names of `.mcp.json` servers the user turned off: the project's list in `~/.claude.json`
 * (`fromProject`), and the `disabledMcpjsonServers` setting in the project's and the user's
 * settings files. A settings file that cannot be read is a warning on `target`.
 */
function disabledMcpjsonServers(ctx: AgentContext, fromProject: string[] | undefined, target: ConfigFile): Set<string> {
  const names = new Set(fromProject ?? []);
  const settings = [
    join(ctx.cwd, ".claude", "settings.local.json"),
    join(ctx.cwd, ".claude", "settings.json"),
    join(claudeHome(ctx), "settings.json"),
  ];
  for (const path of settings) {
    const { file, values } = openConfigFile("claude-code", path, "user", [["disabledMcpjsonServers"]]);
    for (const problem of file.problems) target.warnings.push(`${path} ${problem}: its disabledMcpjsonServers were not read`);
    for (const name of stringList(values[0]) ?? []) names.add(name);
  }
  return names;
}
