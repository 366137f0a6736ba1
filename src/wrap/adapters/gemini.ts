import { existsSync, readdirSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ExpansionSyntax } from "./expand.ts";
import { isPlainObject, readConfigText } from "./jsonc.ts";
import { customPath, ifReadable } from "./config-dirs.ts";
import { getNodeValue } from "jsonc-parser";
import { splitCommandLine } from "./command-line.ts";
import { buildEntry, invalid, standardEntry, type EntryFields, type MapSpec } from "./entry-fields.ts";
import { expandString } from "./expand.ts";
import { applyPrecedence, disable, entriesOfMap, openConfigFile, readMapFile, stringList, type Adapter } from "./shared.ts";
import type { AgentContext, AgentType, ConfigFile, ConfigScope, EntryLayout } from "./types.ts";

/** What sets Gemini CLI and its fork Qwen Code apart. */
type GeminiFamily = {
  agent: Extract<AgentType, "gemini" | "qwen">;
  label: string;
  /** The user directory (`~/.gemini`, `~/.qwen`), moved by the agent's environment variable. */
  userDir(ctx: AgentContext): string;
  /** The home directory as the agent sees it: in it, the project file is not read. */
  homeDir(ctx: AgentContext): string;
  /** The project directory's name (`.gemini`, `.qwen`). */
  projectDir: string;
  syntax: ExpansionSyntax;
  /** Manifest names of the agent's extensions in `<user dir>/extensions/<name>/`. */
  manifests: readonly string[];
};

/**
 * Gemini CLI (`gemini`) and Qwen Code (`qwen`): `mcpServers` in `settings.json` (JSON with comments).
 *
 * Confirmed with Gemini CLI 0.61.0 and Qwen Code 0.15.10 (`mcp add`, `mcp list`, their bundled
 * settings loader, a temporary HOME):
 * - the user file is `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/` when set) or
 *   `~/.qwen/settings.json` (`$QWEN_HOME/` when set); `mcp add` writes the project file by default
 *   for Gemini, the user file for Qwen;
 * - the project file is `.gemini/settings.json` / `.qwen/settings.json` in the working directory
 *   only (not its parents), not read when the working directory is the home directory; its servers
 *   win over the user file's; Gemini reads it (and starts any server) only in a trusted folder;
 * - stdio entries have `command`, `args`, `env`, `cwd`, `includeTools` / `excludeTools`, `trust`,
 *   `timeout`; remote ones `url` (SSE, or `type: "http"`), `httpUrl`, or `tcp`;
 * - servers are turned off by name, not in the entry: `mcp.excluded` in a settings file (and with
 *   `mcp.allowed` set, every server not in it), compared case-insensitively; Gemini also keeps
 *   `gemini mcp disable` in `~/.gemini/mcp-server-enablement.json` (`{"name": {"enabled": false}}`);
 * - `$VAR`, `${VAR}` (and for Gemini `${VAR:-default}`) are replaced in every settings value;
 * - a settings file must be JSON with comments: trailing commas make both refuse it (Qwen renames
 *   such a file aside), so the rewrite never writes one.
 * Extension servers (`<user dir>/extensions/*\/gemini-extension.json`, Qwen also
 * `qwen-extension.json`) are listed as not governed: the extension owns that file and replaces it
 * on update. Not seen by wrap: the system files (`/etc/gemini-cli/settings.json`,
 * `/etc/qwen-code/settings.json` and their `system-defaults.json`). The Antigravity file
 * `~/.gemini/config/mcp_config.json` is not read: its format could not be confirmed.
 * Docs: https://geminicli.com/docs/tools/mcp-server/, https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/.
 */
export function geminiFamily(spec: GeminiFamily): Adapter {
  return {
    agent: spec.agent,
    label: spec.label,
    discover(ctx, options) {
      const read = (path: string, scope: ConfigScope) => withServerCommand(readMapFile(spec.agent, path, scope, "mcpServers", spec.syntax, ctx, geminiEntry), spec, ctx);
      const custom = customPath(ctx, options);
      if (custom) return [read(custom, "custom")];
      const userDir = spec.userDir(ctx);
      const files = [...(isHome(ctx.cwd, spec.homeDir(ctx)) ? [] : [read(join(ctx.cwd, spec.projectDir, "settings.json"), "project")]), read(join(userDir, "settings.json"), "user")];
      const off = turnedOff(spec, ctx, files);
      for (const entry of files.flatMap((file) => file.entries)) {
        const why = entry.line === undefined ? off(entry.name) : undefined;
        if (why) disable(entry, why);
      }
      // The server of `mcp.serverCommand` replaces any `mcpServers` entry named "mcp", whatever the scope.
      const entries = files.flatMap((file) => file.entries);
      applyPrecedence([...entries.filter((entry) => entry.line !== undefined), ...entries.filter((entry) => entry.line === undefined)]);
      return [...files, ...extensionFiles(spec, ctx, userDir)];
    },
  };
}

export const gemini = geminiFamily({
  agent: "gemini",
  label: "Gemini CLI",
  userDir: (ctx) => join(geminiHome(ctx), ".gemini"),
  homeDir: geminiHome,
  projectDir: ".gemini",
  syntax: "gemini",
  manifests: ["gemini-extension.json"],
});

/** `$GEMINI_CLI_HOME` stands in for the home directory everywhere Gemini CLI looks at it. */
export function geminiHome(ctx: AgentContext): string {
  return ctx.env.GEMINI_CLI_HOME || ctx.home;
}

/** The server `mcp.serverCommand` starts: Gemini CLI and Qwen Code name it "mcp". */
const SERVER_COMMAND_NAME = "mcp";
const SERVER_COMMAND_LAYOUT: EntryLayout = { at: [], command: "serverCommand", env: "env", line: true };

/**
 * `mcp.serverCommand`: one more server, started from a command line the agent splits itself
 * (command-line.ts) and names "mcp" (`populateMcpServerCommand` in their bundled core). It is an
 * entry like any other, rewritten by putting the shim's words in front of the string. Qwen Code
 * also still reads a first-version file's top-level `mcpServerCommand`, and moves it into
 * `mcp.serverCommand` on its own start, rewriting the file: wrap cannot own a key the agent moves,
 * so such a file is a problem (its servers would run ungoverned) until Qwen Code has moved it.
 */
function withServerCommand(file: ConfigFile, spec: GeminiFamily, ctx: AgentContext): ConfigFile {
  if (!file.exists || file.problems.length > 0) return file;
  const { values } = openConfigFile(spec.agent, file.path, file.scope, [["mcp", "serverCommand"], ["mcpServerCommand"]]);
  if (spec.agent === "qwen" && values[1] !== undefined) {
    file.problems.push("has a top-level mcpServerCommand, which Qwen Code moves into mcp.serverCommand when it starts (run qwen once without wrap to let it)");
    for (const entry of file.entries) {
      entry.status = "file-problem";
      entry.governed = false;
    }
    return file;
  }
  const node = values[0];
  if (node === undefined) return file;
  const value: unknown = getNodeValue(node.node);
  const map: MapSpec = { agent: spec.agent, scope: file.scope, file: file.path, mapPath: [], syntax: "none", ctx };
  if (typeof value !== "string" || value.trim() === "") {
    file.entries.unshift(buildEntry(SERVER_COMMAND_NAME, map, invalid("mcp.serverCommand is not a command line")));
    return file;
  }
  const warnings = new Set<string>();
  const words = splitCommandLine(expandString(value, spec.syntax, ctx, warnings), ctx.env);
  const entry = buildEntry(SERVER_COMMAND_NAME, map, {
    transport: "stdio",
    command: words?.[0] ?? value,
    args: words?.slice(1) ?? [],
    layout: SERVER_COMMAND_LAYOUT,
  });
  entry.line = value;
  entry.effective = words ? { command: words[0] ?? "", args: words.slice(1), env: {} } : undefined;
  entry.warnings.push(...warnings);
  if (!words) entry.warnings.push(`mcp.serverCommand ${JSON.stringify(value)} has shell syntax ${spec.label} refuses to start; rewritten all the same`);
  file.entries.unshift(entry);
  return file;
}

/** Gemini CLI reads a bare `url` as SSE (`httpUrl`, or `url` with `type: "http"`, is Streamable HTTP). */
const GEMINI_REMOTE = { bareUrl: "sse" } as const;

function geminiEntry(value: unknown): EntryFields {
  if (isPlainObject(value) && typeof value.tcp === "string") return standardEntry({ ...value, type: "tcp", url: value.tcp }, [], GEMINI_REMOTE);
  return standardEntry(value, [], GEMINI_REMOTE);
}

/** Which servers the settings turn off by name: `mcp.excluded`, `mcp.allowed`, the enablement file. */
function turnedOff(spec: GeminiFamily, ctx: AgentContext, files: ConfigFile[]): (name: string) => string | undefined {
  const excluded = new Set<string>();
  let allowed: Set<string> | undefined;
  for (const file of files) {
    const { file: settings, values } = openConfigFile(spec.agent, file.path, file.scope, [["mcp", "excluded"], ["mcp", "allowed"]]);
    if (!settings.exists || settings.problems.length > 0) continue;
    for (const name of stringList(values[0]) ?? []) excluded.add(normalise(name));
    const allow = stringList(values[1]);
    if (allow) allowed = new Set([...(allowed ?? []), ...allow.map(normalise)]);
  }
  const states = spec.agent === "gemini" ? readJson(readConfigText(join(spec.userDir(ctx), "mcp-server-enablement.json")).text) : {};
  return (name) => {
    const id = normalise(name);
    if (excluded.has(id)) return "mcp.excluded";
    if (allowed && !allowed.has(id)) return "mcp.allowed (not listed)";
    const state = states[id];
    if (isPlainObject(state) && state.enabled === false) return "`gemini mcp disable`";
    return undefined;
  };
}

const normalise = (name: string) => name.toLowerCase().trim();

/** The agent ignores an enablement file it cannot read; so does the coverage table. */
function readJson(text: string): Record<string, unknown> {
  const value: unknown = ifReadable(() => JSON.parse(text) as unknown);
  return isPlainObject(value) ? value : {};
}

/** The MCP servers of installed extensions, listed so the coverage table shows them; never rewritten. */
function extensionFiles(spec: GeminiFamily, ctx: AgentContext, userDir: string): ConfigFile[] {
  const root = join(userDir, "extensions");
  const names = (ifReadable(() => readdirSync(root, { withFileTypes: true })) ?? [])
    .filter((dirent) => dirent.isDirectory())
    .map((dirent) => dirent.name)
    .sort();
  return names.flatMap((name) => {
    const manifest = spec.manifests.map((file) => join(root, name, file)).find((path) => existsSync(path));
    if (!manifest) return [];
    const { file, values } = openConfigFile(spec.agent, manifest, "user", [["mcpServers"]]);
    const extension = (value: unknown): EntryFields => ({
      transport: standardEntry(value, [], GEMINI_REMOTE).transport,
      status: "extension",
      reason: `provided by the ${spec.label} extension "${name}", which replaces its manifest on update: not rewritten`,
    });
    file.entries = entriesOfMap(file, values[0], { agent: spec.agent, scope: "user", file: manifest, mapPath: ["mcpServers"], syntax: "none", ctx }, extension);
    return file.entries.length > 0 ? [file] : [];
  });
}

/** Whether `cwd` is the home directory (the agents compare real paths). */
function isHome(cwd: string, home: string): boolean {
  const real = (path: string) => ifReadable(() => realpathSync(resolve(path))) ?? resolve(path);
  return real(cwd) === real(home);
}
