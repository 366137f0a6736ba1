import { join } from "node:path";
import { customPath } from "./config-dirs.ts";
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
 * opens, not in its parents. Not seen by wrap: `mcpServers` in custom agent files
 * (`~/.kiro/agents/*.json`, `.kiro/agents/*.json`), which the CLI prefers over both files.
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
    return files;
  },
};
