import { join } from "node:path";
import { isPlainObject } from "./jsonc.ts";
import { customPath, xdgConfigHome } from "./config-dirs.ts";
import { enabledFalse, invalid, remote, stdioFields, type EntryFields } from "./entry-fields.ts";
import { readMapFile, type Adapter } from "./shared.ts";
import type { AgentContext } from "./types.ts";

/**
 * Zed: `context_servers` in `settings.json` (JSONC: comments and trailing commas are normal there),
 * `~/.config/zed/` on macOS and `$XDG_CONFIG_HOME/zed/` on Linux, plus a project's
 * `.zed/settings.json`. Three kinds of entry:
 * - custom, current form: `{ "source": "custom", "command": "npx", "args": [...], "env": {...}, "enabled": true }`
 *   (`source` optional);
 * - custom, the older nested form: `{ "command": { "path": "npx", "args": [...], "env": {...} } }`;
 * - extension servers: `{ "source": "extension", "settings": {...} }`, no command: the extension
 *   decides what runs, so wrap cannot put a shim in front of it;
 * and remote ones with `url`. `enabled: false` turns a server off (rewritten all the same, the flag
 * kept). Values are taken literally.
 */
export const zed: Adapter = {
  agent: "zed",
  label: "Zed",
  discover(ctx, options) {
    const custom = customPath(ctx, options);
    if (custom) return [readMapFile("zed", custom, "custom", "context_servers", "none", ctx, zedEntry)];
    return [
      readMapFile("zed", join(ctx.cwd, ".zed", "settings.json"), "project", "context_servers", "none", ctx, zedEntry),
      readMapFile("zed", zedSettingsPath(ctx), "user", "context_servers", "none", ctx, zedEntry),
    ];
  },
};

function zedSettingsPath(ctx: AgentContext): string {
  // Zed uses ~/.config/zed on macOS too, not Application Support.
  return ctx.platform === "darwin" ? join(ctx.home, ".config", "zed", "settings.json") : join(xdgConfigHome(ctx), "zed", "settings.json");
}

function zedEntry(value: unknown): EntryFields {
  if (!isPlainObject(value)) return invalid("is not an object");
  const fields = readForm(value);
  const disabled = enabledFalse(value);
  return disabled ? { ...fields, disabled } : fields;
}

/** The older form keeps the command line in `command: {path, args, env}`. */
const NESTED_LAYOUT = { at: ["command"], command: "path", args: "args", env: "env" };

function readForm(value: Record<string, unknown>): EntryFields {
  if (typeof value.url === "string") return remote("url");
  const command = value.command;
  if (typeof command === "string") return { ...stdioFields(command, value.args, value.env), form: "flat" };
  if (isPlainObject(command)) return { ...stdioFields(command.path, command.args, command.env), form: "nested", layout: NESTED_LAYOUT };
  if (command === undefined) {
    return {
      transport: "stdio",
      status: "extension",
      reason: "provided by a Zed extension, which decides its command: wrap cannot put a shim in front of it",
    };
  }
  return invalid("has a command that is neither a string nor {path, args, env}");
}
