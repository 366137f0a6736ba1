import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { messageOf } from "../../core/errors.ts";
import { parseTomlText } from "../formats/toml.ts";
import { isPlainObject, readConfigText } from "./jsonc.ts";
import { projectDirs } from "../../core/project.ts";
import { customPath } from "./config-dirs.ts";
import { enabledFalse, invalid, remote, stdioFields, type EntryFields } from "./entry-fields.ts";
import { applyPrecedence, entriesOfPlainMap, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigFile, ConfigScope } from "./types.ts";

/**
 * OpenAI Codex CLI (`codex`): `[mcp_servers.NAME]` tables in TOML.
 *
 * Confirmed with codex-cli 0.169.0 (`codex mcp add`, `codex mcp list --json`, a temporary HOME):
 * - the user file is `$CODEX_HOME/config.toml`, `~/.codex/config.toml` when CODEX_HOME is unset;
 * - project files are `.codex/config.toml` in the working directory and each parent up to the
 *   repository root (the directory holding `.git`), the nearest one winning over farther ones and
 *   over the user file; outside a repository, only the working directory's. Codex reads them only
 *   for a trusted project (`[projects."<dir>"] trust_level = "trusted"`); wrap governs them either
 *   way, since an untrusted project's servers never start and a trusted one's must not start bare;
 * - stdio entries have `command` and optional `args`, `env` (a table or an inline table),
 *   `env_vars`, `cwd`, `enabled`, `enabled_tools` / `disabled_tools`, timeouts; remote ones `url`
 *   (streamable HTTP) with `bearer_token_env_var`, `http_headers`; `enabled = false` turns one off;
 * - every TOML form works: `[mcp_servers.x]`, `x = { ... }` under `[mcp_servers]`, dotted keys;
 * - values are taken literally (no `${VAR}` expansion);
 * - `codex mcp add` rewrites the whole `[mcp_servers]` table in its own layout (inline tables
 *   become `[mcp_servers.x.env]` tables), so a session that adds a server ends with the
 *   owned-keys restore, not the byte-for-byte one.
 * Not seen by wrap: the system file `/etc/codex/config.toml` and `-c mcp_servers...` overrides on
 * the command line. Docs: https://developers.openai.com/codex/mcp,
 * https://developers.openai.com/codex/config-basic.
 */
export const codex: Adapter = {
  agent: "codex",
  label: "Codex",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readCodexFile(custom, "custom", ctx)];
    const userPath = join(codexHome(ctx), "config.toml");
    const projects = projectDirs(ctx.cwd, "cwd")
      .map((dir) => join(dir, ".codex", "config.toml"))
      // With the working directory at home, `.codex/config.toml` is the user file itself.
      .filter((path, i) => path !== userPath && (i === 0 || existsSync(path)))
      .map((path) => readCodexFile(path, "project", ctx));
    const user = readCodexFile(userPath, "user", ctx);
    applyPrecedence([...projects, user].flatMap((file) => file.entries));
    return [...projects, user];
  },
};

export function codexHome(ctx: AgentContext): string {
  const dir = ctx.env.CODEX_HOME;
  return dir ? resolve(ctx.cwd, dir) : join(ctx.home, ".codex");
}

function readCodexFile(path: string, scope: ConfigScope, ctx: AgentContext): ConfigFile {
  const read = readConfigText(path);
  const file: ConfigFile = { agent: "codex", path, scope, exists: read.exists, text: read.text, entries: [], problems: [], warnings: [] };
  if (read.problem) file.problems.push(read.problem);
  if (!read.exists || read.problem) return file;
  let servers: unknown;
  try {
    servers = parseTomlText(read.text).value.mcp_servers;
  } catch (error) {
    file.problems.push(messageOf(error));
    return file;
  }
  file.entries = entriesOfPlainMap(file, servers, { agent: "codex", scope, file: path, mapPath: ["mcp_servers"], syntax: "none", ctx }, codexEntry);
  return file;
}

function codexEntry(value: unknown): EntryFields {
  if (!isPlainObject(value)) return invalid("is not a table");
  const fields = typeof value.url === "string" ? remote("url") : stdioFields(value.command, value.args, value.env);
  const disabled = enabledFalse(value, "`enabled = false`");
  return disabled ? { ...fields, disabled } : fields;
}
