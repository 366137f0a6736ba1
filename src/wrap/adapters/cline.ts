import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { isPlainObject } from "./jsonc.ts";
import { appDataDir, customPath } from "./config-dirs.ts";
import { disabledFlag, invalid, remote, standardEntry, stdioFields, type EntryFields } from "./entry-fields.ts";
import { readMapFile, type Adapter } from "./shared.ts";
import type { AgentContext, EntryLayout } from "./types.ts";

/**
 * Cline: `mcpServers` in `cline_mcp_settings.json`, one file per installation, no project scope.
 *
 * Confirmed with the Cline CLI 3.0.65 from npm (`cline mcp add --yes`, its bundled settings
 * loader, a temporary HOME): the CLI's file is `$CLINE_MCP_SETTINGS_PATH`, else
 * `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, `$CLINE_DATA_DIR` defaulting to
 * `$CLINE_DIR/data` and `$CLINE_DIR` to `~/.cline`; the CLI writes entries as
 * `{"transport": {"type": "stdio", "command", "args", "cwd", "env"}}` (remote: `type` `sse` or
 * `streamableHttp` with `url`, `headers`) and also reads the flat form; `disabled: true` (beside
 * `transport`) turns one off.
 * From the documentation (https://docs.cline.bot/mcp/configuring-mcp-servers,
 * https://docs.cline.bot/cli/configuration): the VS Code extension (`saoudrizwan.claude-dev`)
 * keeps its file in the editor's global storage, `<user data>/User/globalStorage/
 * saoudrizwan.claude-dev/settings/cline_mcp_settings.json`, in the flat form `{command, args, env,
 * disabled, autoApprove, timeout}` / `{url, type: "sse" | "streamableHttp"}`. Assumed: the same
 * folder under VS Code Insiders, VSCodium, Cursor and Windsurf, read when it exists; values taken
 * literally.
 */
export const cline: Adapter = {
  agent: "cline",
  label: "Cline",
  discover(ctx, options) {
    const read = (path: string, scope: "user" | "custom") => readMapFile("cline", path, scope, "mcpServers", "none", ctx, clineEntry);
    const custom = customPath(ctx, options);
    if (custom) return [read(custom, "custom")];
    const editors = EDITORS.map((product) => join(appDataDir(ctx), product, "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"));
    // The CLI's file and VS Code's are listed even when missing; other editors' when they exist.
    return [cliSettings(ctx), ...editors.filter((path, i) => i === 0 || existsSync(path))].map((path) => read(path, "user"));
  },
};

const EDITORS = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

function cliSettings(ctx: AgentContext): string {
  const at = (name: string) => (ctx.env[name] ? resolve(ctx.cwd, ctx.env[name]) : undefined);
  const clineDir = at("CLINE_DIR") ?? join(ctx.home, ".cline");
  const dataDir = at("CLINE_DATA_DIR") ?? join(clineDir, "data");
  return at("CLINE_MCP_SETTINGS_PATH") ?? join(dataDir, "settings", "cline_mcp_settings.json");
}

/** The CLI's nested form keeps the command line in `transport`. */
const TRANSPORT_LAYOUT: EntryLayout = { at: ["transport"], command: "command", args: "args", env: "env" };

function clineEntry(value: unknown): EntryFields {
  const fields = readTransport(value);
  const disabled = disabledFlag(value);
  return disabled ? { ...fields, disabled } : fields;
}

function readTransport(value: unknown): EntryFields {
  if (!isPlainObject(value) || value.transport === undefined) return standardEntry(value);
  const transport = value.transport;
  if (!isPlainObject(transport)) return invalid("has a transport that is not an object");
  if (transport.type === "stdio") return { ...stdioFields(transport.command, transport.args, transport.env), layout: TRANSPORT_LAYOUT };
  if (typeof transport.url === "string") return remote(typeof transport.type === "string" ? transport.type : "url");
  return invalid(`has an unknown transport type "${String(transport.type)}"`);
}
