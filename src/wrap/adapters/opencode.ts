import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { isPlainObject } from "./jsonc.ts";
import { projectDirs } from "../../core/project.ts";
import { customPath, xdgConfigHome } from "./config-dirs.ts";
import { enabledFalse, invalid, remote, stdioFields, type EntryFields } from "./entry-fields.ts";
import { applyPrecedence, readMapFile, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigFile, ConfigScope, EntryLayout } from "./types.ts";

/**
 * opencode (`opencode`): the `mcp` map of its JSON/JSONC config.
 *
 * Confirmed with opencode 1.18.33 (`opencode mcp add`, `opencode debug config`, a temporary HOME):
 * - global files `config.json`, `opencode.json` and `opencode.jsonc` in `$XDG_CONFIG_HOME/opencode`
 *   (`~/.config/opencode`; `mcp add` writes `opencode.jsonc` with a `$schema` line), then the file
 *   `$OPENCODE_CONFIG`, then `opencode.json` and `opencode.jsonc` in each directory from the
 *   repository root down to the working directory (every parent up to `/` outside a repository),
 *   then `.opencode/opencode.json(c)` in those directories and in the home directory, then
 *   `$OPENCODE_CONFIG_DIR/opencode.json(c)`. They are deep-merged, later files winning, so a later
 *   file may hold only part of a server (`{"enabled": false}`) that completes one of an earlier
 *   file; such a part is listed, not rewritten, and the complete entry it merges into is governed;
 * - a stdio entry is `{"type": "local", "command": [cmd, ...args], "environment": {...},
 *   "enabled": bool}`; `{"type": "remote", "url", "headers"}` is remote; `enabled: false` turns one off;
 * - the working directory is the real one: a `$PWD` that reaches it through a symlink does not
 *   change which parents are read; `opencode DIR` starts in DIR (`projectDir` takes it);
 * - `{env:VAR}` in a value is replaced by the variable (docs: https://opencode.ai/docs/config/#variables).
 * Not seen by wrap: `$OPENCODE_CONFIG_CONTENT` (config given in the environment, a warning says so),
 * an organisation's remote config, and servers added by plugins. Docs: https://opencode.ai/docs/mcp-servers/.
 */
export const opencode: Adapter = {
  agent: "opencode",
  label: "opencode",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readOpencodeFile(custom, "custom", ctx)];
    const dirs = projectDirs(ctx.cwd, "all");
    // In the order of preference: the file merged last first.
    const configDir = ctx.env.OPENCODE_CONFIG_DIR ? resolve(ctx.cwd, ctx.env.OPENCODE_CONFIG_DIR) : undefined;
    const userFiles = [
      ...(configDir ? jsonAndJsonc(configDir, "opencode") : []),
      ...jsonAndJsonc(join(ctx.home, ".opencode"), "opencode"),
    ];
    const projectFiles = [...dirs.flatMap((dir) => jsonAndJsonc(join(dir, ".opencode"), "opencode")), ...dirs.flatMap((dir) => jsonAndJsonc(dir, "opencode"))];
    const globalDir = join(xdgConfigHome(ctx), "opencode");
    const globalFiles = [
      ...(ctx.env.OPENCODE_CONFIG ? [resolve(ctx.cwd, ctx.env.OPENCODE_CONFIG)] : []),
      join(globalDir, "opencode.jsonc"),
      join(globalDir, "opencode.json"),
      join(globalDir, "config.json"),
    ];
    // The project file in the working directory and the global file `opencode mcp add` writes are listed even when missing.
    const listed = new Set([join(ctx.cwd, "opencode.json"), join(globalDir, "opencode.jsonc")]);
    const seen = new Set<string>();
    const files = [
      ...userFiles.map((path) => [path, "user"] as const),
      ...projectFiles.map((path) => [path, "project"] as const),
      ...globalFiles.map((path) => [path, "user"] as const),
    ]
      .filter(([path]) => !seen.has(path) && seen.add(path) && (listed.has(path) || existsSync(path)))
      .map(([path, scope]) => readOpencodeFile(path, scope, ctx));
    if (ctx.env.OPENCODE_CONFIG_CONTENT) {
      files.at(-1)?.warnings.push("OPENCODE_CONFIG_CONTENT is set: MCP servers defined in it are not seen or governed by wrap");
    }
    applyPrecedence(files.flatMap((file) => file.entries));
    return files;
  },
};

/** `name.jsonc` (merged after `name.json`, so preferred) and `name.json` in `dir`. */
function jsonAndJsonc(dir: string, name: string): string[] {
  return [join(dir, `${name}.jsonc`), join(dir, `${name}.json`)];
}

function readOpencodeFile(path: string, scope: ConfigScope, ctx: AgentContext): ConfigFile {
  return readMapFile("opencode", path, scope, "mcp", "opencode", ctx, opencodeEntry);
}

/** One list `[command, ...args]` and `environment`. */
const OPENCODE_LAYOUT: EntryLayout = { at: [], command: "command", env: "environment" };

function opencodeEntry(value: unknown): EntryFields {
  if (!isPlainObject(value)) return invalid("is not an object");
  const disabled = enabledFalse(value);
  const fields = readCommand(value);
  return disabled ? { ...fields, disabled } : fields;
}

function readCommand(value: Record<string, unknown>): EntryFields {
  if (value.type === "remote" || typeof value.url === "string") return remote("remote");
  if (value.type !== undefined && value.type !== "local") return invalid(`has an unknown type "${String(value.type)}"`);
  const argv = value.command;
  if (argv === undefined) return invalid("has no command (opencode merges such a part into the same-named server of another config file)");
  if (!Array.isArray(argv) || argv.length === 0) return invalid("has a command that is not a list [command, ...args]");
  const [command, ...args] = argv as unknown[];
  return { ...stdioFields(command, args, value.environment), layout: OPENCODE_LAYOUT };
}
