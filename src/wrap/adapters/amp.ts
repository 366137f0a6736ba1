import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { projectDirs } from "../../core/project.ts";
import { customPath, xdgConfigHome } from "./config-dirs.ts";
import { applyPrecedence, readMapFile, type Adapter } from "./shared.ts";
import type { AgentContext, ConfigScope } from "./types.ts";

/**
 * Amp (`amp`): `amp.mcpServers` (one key, with the dot) in its settings file, JSON with comments.
 *
 * Confirmed with the Amp CLI from npm (@sourcegraph/amp, `amp mcp add`, `amp mcp list --json`,
 * a temporary HOME): the user file is `~/.config/amp/settings.json`, moved by XDG_CONFIG_HOME and
 * replaced by `$AMP_SETTINGS_FILE` (or `--settings-file`); `amp mcp add --workspace` writes
 * `.amp/settings.json`, found from the working directory up to the repository root (outside a
 * repository only in the working directory), whose servers Amp starts once approved
 * (`amp mcp approve`); comments and trailing commas are accepted; stdio entries have `command`,
 * `args`, `env`, `includeTools`, remote ones `url` and `headers`.
 * From the documentation (https://ampcode.com/manual): `settings.jsonc` is read in place of
 * `settings.json`; workspace settings win over the user's. Assumed: values are taken literally,
 * and `disabled` in an entry is not an off switch (`amp mcp list` still lists such a server).
 * Not seen by wrap: servers stored in the Amp account (ampcode.com), the managed settings file
 * (`/etc/ampcode/managed-settings.json`), and `amp.mcpServers` in an editor's settings when Amp
 * runs as an editor extension.
 */
export const amp: Adapter = {
  agent: "amp",
  label: "Amp",
  discover(ctx, options) {
    const read = (path: string, scope: ConfigScope) => readMapFile("amp", path, scope, "amp.mcpServers", "none", ctx);
    const custom = customPath(ctx, options);
    if (custom) return [read(custom, "custom")];
    const workspace = projectDirs(ctx.cwd, "cwd").flatMap((dir, i) =>
      [join(dir, ".amp", "settings.json"), join(dir, ".amp", "settings.jsonc")].filter((path, j) => (i === 0 && j === 0) || existsSync(path)).map((path) => read(path, "project")),
    );
    const files = [...workspace, ...userFiles(ctx).map((path) => read(path, "user"))];
    applyPrecedence(files.flatMap((file) => file.entries));
    return files;
  },
};

function userFiles(ctx: AgentContext): string[] {
  if (ctx.env.AMP_SETTINGS_FILE) return [resolve(ctx.cwd, ctx.env.AMP_SETTINGS_FILE)];
  const dir = join(xdgConfigHome(ctx), "amp");
  const jsonc = join(dir, "settings.jsonc");
  return [join(dir, "settings.json"), ...(existsSync(jsonc) ? [jsonc] : [])];
}
