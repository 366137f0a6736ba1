import { isAbsolute, join, resolve } from "node:path";
import { messageOf } from "../../core/errors.ts";
import { parseYamlText, usesAliases, yamlValue } from "../formats/yaml.ts";
import { isPlainObject, readConfigText } from "./jsonc.ts";
import { customPath } from "./config-dirs.ts";
import { enabledFalse, invalid, remote, stdioFields, type EntryFields } from "./entry-fields.ts";
import { applyPrecedence, entriesOfPlainMap, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigFile, ConfigScope, EntryLayout } from "./types.ts";

/**
 * goose (`goose`): the `extensions` map of `config.yaml`. From the documentation and source only
 * (https://block.github.io/goose/docs/guides/config-files, and goose's source:
 * https://github.com/aaif-goose/goose/blob/main/crates/goose/src/config/base.rs and
 * `extensions.rs` beside it); no goose binary was run.
 * Confirmed there: the user file `~/.config/goose/config.yaml` on Linux and macOS; earlier layers
 * `/etc/goose/config.yaml` and the files listed in `$GOOSE_ADDITIONAL_CONFIG_FILES` (a path list),
 * merged field by field per extension with the user file last; an extension is `{type: stdio,
 * name, enabled, cmd, args, envs, env_keys, cwd, timeout, available_tools, ...}`;
 * `streamable_http` (`uri`) and the old `sse` are remote; `builtin` and `platform` extensions run
 * inside goose; `enabled: false` turns one off; goose writes the whole file back (serde_yaml) when
 * an extension is toggled or added, so such a session ends with the owned-keys restore.
 * Assumed: `$GOOSE_PATH_ROOT` moves the file to `$GOOSE_PATH_ROOT/config/config.yaml`, an absolute
 * XDG_CONFIG_HOME to `$XDG_CONFIG_HOME/goose/`; values are taken literally (`env_keys` name
 * secrets goose reads from its keyring: they are not in the file).
 * A file whose `extensions` use YAML anchors or aliases is left alone: an edit there would change
 * every alias too. Not seen by wrap: `/etc/goose/config.yaml`, extensions given on the command
 * line (`--with-extension`) or by a recipe.
 */
export const goose: Adapter = {
  agent: "goose",
  label: "goose",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readGooseFile(custom, "custom", ctx)];
    const additional = (ctx.env.GOOSE_ADDITIONAL_CONFIG_FILES ?? "")
      .split(":")
      .filter((path) => path !== "")
      .map((path) => resolve(ctx.cwd, path));
    const files = [readGooseFile(userConfig(ctx), "user", ctx), ...additional.reverse().map((path) => readGooseFile(path, "user", ctx)).filter((file) => file.exists)];
    applyPrecedence(files.flatMap((file) => file.entries));
    return files;
  },
};

function userConfig(ctx: AgentContext): string {
  if (ctx.env.GOOSE_PATH_ROOT) return join(resolve(ctx.cwd, ctx.env.GOOSE_PATH_ROOT), "config", "config.yaml");
  const xdg = ctx.env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(ctx.home, ".config"), "goose", "config.yaml");
}

function readGooseFile(path: string, scope: ConfigScope, ctx: AgentContext): ConfigFile {
  const read = readConfigText(path);
  const file: ConfigFile = { agent: "goose", path, scope, exists: read.exists, text: read.text, entries: [], problems: [], warnings: [] };
  if (read.problem) file.problems.push(read.problem);
  if (!read.exists || read.problem) return file;
  let extensions: unknown;
  try {
    const document = parseYamlText(read.text);
    if (usesAliases(document, ["extensions"])) {
      file.problems.push("uses YAML anchors, aliases or merge keys under extensions: an edit there would change what the aliases say too, so wrap leaves the file alone");
      return file;
    }
    const value = yamlValue(document);
    extensions = isPlainObject(value) ? value.extensions : undefined;
    if (value !== null && !isPlainObject(value)) file.problems.push("does not hold a YAML mapping at the top level");
  } catch (error) {
    file.problems.push(messageOf(error));
    return file;
  }
  file.entries = entriesOfPlainMap(file, extensions, { agent: "goose", scope, file: path, mapPath: ["extensions"], syntax: "none", ctx }, gooseEntry);
  return file;
}

const GOOSE_LAYOUT: EntryLayout = { at: [], command: "cmd", args: "args", env: "envs" };

/** Extension types that are not a command goose starts. */
const IN_GOOSE = new Set(["builtin", "platform", "frontend", "inline_python"]);

function gooseEntry(value: unknown): EntryFields {
  if (!isPlainObject(value)) return invalid("is not a mapping");
  const fields = readType(value);
  const disabled = enabledFalse(value);
  return disabled ? { ...fields, disabled } : fields;
}

function readType(value: Record<string, unknown>): EntryFields {
  const type = value.type;
  if (type === "stdio") return { ...stdioFields(value.cmd, value.args, value.envs), layout: GOOSE_LAYOUT };
  if (type === "streamable_http" || type === "sse") return remote(type);
  if (typeof type === "string" && IN_GOOSE.has(type)) {
    return { transport: "stdio", status: "extension", reason: `a goose ${type} extension: goose runs it itself, so there is no command to put a shim in front of` };
  }
  return invalid(type === undefined ? "has no type" : `has an unknown type "${String(type)}"`);
}
