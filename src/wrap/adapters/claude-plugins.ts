/**
 * Claude Code plugins and their MCP servers. A plugin enabled in a settings file (`enabledPlugins:
 * {"<plugin>@<marketplace>": true}`) brings the MCP servers it declares (its `.mcp.json`, or
 * `mcpServers` in its `.claude-plugin/plugin.json` or in its marketplace's entry), and Claude Code
 * starts them as `plugin:<plugin>:<server>`. Measured with Claude Code 2.1.330: a project's own
 * `.claude/settings.json` that declares a marketplace in a folder of the repository
 * (`extraKnownMarketplaces: {m: {source: {source: "directory", path}}}`) and enables a plugin from it
 * gets that plugin's server started by `claude mcp list` in a trusted folder, with nothing installed.
 *
 * wrap does not rewrite plugins (their files belong to the plugin and come back on update), so an
 * enabled plugin that declares MCP servers, or one whose files wrap cannot find, is listed as
 * `refused`: wrap stops before the agent starts unless `--allow-ungoverned`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ifReadable } from "./config-dirs.ts";
import { buildEntry } from "./entry-fields.ts";
import { isPlainObject } from "./jsonc.ts";
import type { AgentContext, ConfigFile } from "./types.ts";

/** The settings files that enable plugins, most preferred first: the project's (local, shared), then the user's. */
function pluginSettingsFiles(ctx: AgentContext, userDir: string): Array<{ path: string; scope: "project" | "user" }> {
  return [
    { path: join(ctx.cwd, ".claude", "settings.local.json"), scope: "project" },
    { path: join(ctx.cwd, ".claude", "settings.json"), scope: "project" },
    { path: join(userDir, "settings.json"), scope: "user" },
  ];
}

/**
 * One listing per settings file that enables a plugin declaring MCP servers (or one wrap cannot
 * find): its entries are `refused`, named `plugin:<plugin>`. `userDir` is `~/.claude` (or
 * `$CLAUDE_CONFIG_DIR`).
 */
export function pluginServers(ctx: AgentContext, userDir: string): ConfigFile[] {
  const settings = pluginSettingsFiles(ctx, userDir).map((file) => ({ ...file, json: readJson(file.path) }));
  const marketplaces = new Map<string, unknown>();
  for (const { json } of settings.toReversed()) {
    const declared = json?.extraKnownMarketplaces;
    if (isPlainObject(declared)) for (const [name, value] of Object.entries(declared)) marketplaces.set(name, value);
  }
  const files: ConfigFile[] = [];
  const seen = new Set<string>();
  for (const { path, scope, json } of settings) {
    const enabled = json?.enabledPlugins;
    if (!isPlainObject(enabled)) continue;
    const file: ConfigFile = { agent: "claude-code", path, scope, exists: true, text: "", entries: [], problems: [], warnings: [] };
    for (const [id, on] of Object.entries(enabled)) {
      if (on !== true || seen.has(id)) continue;
      seen.add(id);
      const why = pluginMcp(id, marketplaces, userDir, ctx);
      if (why === null) continue;
      const entry = buildEntry(`plugin:${id}`, { agent: "claude-code", scope, file: path, mapPath: ["enabledPlugins"], syntax: "none", ctx }, { transport: "stdio", status: "refused", reason: why });
      file.entries.push(entry);
    }
    if (file.entries.length > 0) files.push(file);
  }
  return files;
}

/** Why the plugin `<name>@<marketplace>` would start MCP servers wrap does not govern, or null when it declares none. */
function pluginMcp(id: string, marketplaces: Map<string, unknown>, userDir: string, ctx: AgentContext): string | null {
  const at = id.lastIndexOf("@");
  const name = at > 0 ? id.slice(0, at) : id;
  const market = at > 0 ? id.slice(at + 1) : "";
  const found = pluginDir(name, market, marketplaces, userDir, ctx);
  if (found === null) return `a Claude Code plugin wrap cannot find the files of: it may start MCP servers wrap does not rewrite`;
  const { dir, entry } = found;
  const manifest = readJson(join(dir, ".claude-plugin", "plugin.json"));
  const declares = existsSync(join(dir, ".mcp.json")) || (manifest !== null && "mcpServers" in manifest) || (entry !== null && "mcpServers" in entry);
  return declares ? `a Claude Code plugin that starts MCP servers (from ${dir}), which wrap does not rewrite` : null;
}

/**
 * The plugin's directory, and its entry in the marketplace's `marketplace.json` (which may itself
 * declare servers): from the marketplace's folder (declared in settings as a directory, or added
 * and so listed in `plugins/known_marketplaces.json`), else from `plugins/installed_plugins.json`.
 */
function pluginDir(name: string, market: string, declared: Map<string, unknown>, userDir: string, ctx: AgentContext): { dir: string; entry: Record<string, unknown> | null } | null {
  const roots: string[] = [];
  const source = declared.get(market);
  const spec = isPlainObject(source) && isPlainObject(source.source) ? source.source : undefined;
  if (spec && spec.source === "directory" && typeof spec.path === "string") roots.push(resolve(ctx.cwd, spec.path));
  const known = readJson(join(userDir, "plugins", "known_marketplaces.json"))?.[market];
  if (isPlainObject(known) && typeof known.installLocation === "string") roots.push(known.installLocation);
  for (const root of roots) {
    const listing = readJson(join(root, ".claude-plugin", "marketplace.json"));
    const plugins = Array.isArray(listing?.plugins) ? listing.plugins.filter(isPlainObject) : [];
    const entry = plugins.find((plugin) => plugin.name === name);
    if (entry && typeof entry.source === "string") return { dir: resolve(root, entry.source), entry };
  }
  const installed = readJson(join(userDir, "plugins", "installed_plugins.json"))?.plugins;
  const records = isPlainObject(installed) ? installed[`${name}@${market}`] : undefined;
  const record = Array.isArray(records) ? records.find(isPlainObject) : isPlainObject(records) ? records : undefined;
  if (isPlainObject(record) && typeof record.installPath === "string") return { dir: record.installPath, entry: null };
  return null;
}

function readJson(path: string): Record<string, unknown> | null {
  const value: unknown = ifReadable(() => JSON.parse(readFileSync(path, "utf8")) as unknown);
  return isPlainObject(value) ? value : null;
}
