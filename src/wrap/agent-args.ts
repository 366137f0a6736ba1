import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseTree, type ParseError } from "jsonc-parser";
import { ThoughtGateError } from "../core/errors.ts";
import { readMapFile, rewrite, type AgentContext, type AgentType, type ConfigFile, type ServerEntry, type ShimCommand } from "./adapters/index.ts";

/**
 * MCP servers an agent is given on its own command line, which no config file wrap edits would
 * show. Claude Code's `--mcp-config FILE|JSON …` is governed: wrap reads each value (a file, or
 * inline JSON), and the agent is started with a rewritten copy in their place (the user's file is
 * never touched). Forms wrap cannot rewrite safely are refused with the reason, so they never run
 * ungoverned unseen.
 */
export type CommandLineConfigs = {
  /** One `ConfigFile` per value, read like a Claude Code `.mcp.json`, scope `flag`. */
  files: ConfigFile[];
  /** The agent's command with each value replaced by the path of its rewritten copy. */
  rewrittenCommand(shimFor: (entry: ServerEntry) => ShimCommand, dir: string): string[];
  /** Remove the temp copies of inline JSON made for reading. */
  dispose(): void;
};

type Value = { index: number; text: string; inline: boolean; path: string };

export function commandLineConfigs(agent: AgentType, command: readonly string[], ctx: AgentContext): CommandLineConfigs {
  refuseUnseen(agent, command, ctx);
  const values = agent === "claude-code" ? mcpConfigValues(command) : [];
  let scratch: string | null = null;
  const found: Value[] = values.map(({ index, text }) => {
    const inline = text.trimStart().startsWith("{");
    if (!inline) return { index, text, inline, path: resolve(ctx.cwd, text) };
    scratch ??= mkdtempSync(join(tmpdir(), "thoughtgate-mcp-config-"));
    const path = join(scratch, `inline-${index}.json`);
    writeFileSync(path, text, { mode: 0o600 });
    return { index, text, inline, path };
  });
  const files = found.map((value) => readMapFile("claude-code", value.path, "flag", "mcpServers", "claude-code", ctx));
  for (const [i, file] of files.entries()) {
    const value = found[i] as Value;
    if (!file.exists) throw new ThoughtGateError("CONFIG", `--mcp-config ${value.text}: no such file (given to the agent)`);
    if (file.problems.length > 0) throw new ThoughtGateError("CONFIG", `--mcp-config ${value.inline ? "JSON" : value.text}: ${file.problems[0]} (given to the agent; wrap cannot govern its servers)`);
  }
  return {
    files,
    rewrittenCommand(shimFor, dir) {
      const out = [...command];
      for (const [i, file] of files.entries()) {
        const value = found[i] as Value;
        const copy = join(dir, `mcp-config-${i + 1}.json`);
        writeFileSync(copy, rewrite(file.text, file.entries, shimFor).text, { mode: 0o600 });
        out[value.index] = value.inline ? replaceInline(out[value.index] as string, value.text, copy) : copy;
      }
      return out;
    },
    dispose() {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** `--mcp-config a.json '{"mcpServers":…}'` and `--mcp-config=a.json`: every value, with its argv index. */
function mcpConfigValues(command: readonly string[]): Array<{ index: number; text: string }> {
  const values: Array<{ index: number; text: string }> = [];
  for (let i = 1; i < command.length; i++) {
    const arg = command[i] as string;
    if (arg === "--") break;
    if (arg.startsWith("--mcp-config=")) {
      values.push({ index: i, text: arg.slice("--mcp-config=".length) });
      continue;
    }
    if (arg !== "--mcp-config") continue;
    // The option takes several values, up to the next option (Claude Code: `--mcp-config <configs...>`).
    for (let j = i + 1; j < command.length && !(command[j] as string).startsWith("-"); j++) values.push({ index: j, text: command[j] as string });
  }
  return values;
}

/** `--mcp-config=<json>` keeps its `--mcp-config=` prefix; a value on its own is the copy's path. */
function replaceInline(arg: string, text: string, copy: string): string {
  return arg === text ? copy : arg.slice(0, arg.length - text.length) + copy;
}

/** Servers given in forms wrap cannot rewrite: refused, with what to do instead. */
function refuseUnseen(agent: AgentType, command: readonly string[], ctx: AgentContext): void {
  const args = command.slice(1);
  const refuse = (what: string, instead: string) => {
    throw new ThoughtGateError("CONFIG", `${what}: wrap cannot govern MCP servers given this way; ${instead}`);
  };
  if (agent === "codex") {
    for (const [i, arg] of args.entries()) {
      const override = codexOverride(arg, args[i + 1]);
      if (override && setsMcpServers(override.value)) refuse(`codex ${override.shown}`, "put the server in ~/.codex/config.toml or the project's .codex/config.toml");
    }
  }
  if (agent === "copilot" && args.some((arg) => arg === "--additional-mcp-config" || arg.startsWith("--additional-mcp-config="))) {
    refuse("copilot --additional-mcp-config", "put the servers in ~/.copilot/mcp-config.json or the project's .mcp.json");
  }
  const content = agent === "opencode" ? ctx.env.OPENCODE_CONFIG_CONTENT : undefined;
  const unseen = content === undefined ? null : opencodeContentServers(content, ctx.env);
  if (unseen) refuse(`OPENCODE_CONFIG_CONTENT ${unseen}`, "put the servers in opencode.json (or a file named by OPENCODE_CONFIG)");
}

/**
 * A codex config override in any spelling its option parser (clap) takes: `-c V`, `-cV`, `-c=V`,
 * `--config V`, `--config=V`. `shown` is how it appeared on the command line.
 */
function codexOverride(arg: string, next: string | undefined): { value: string; shown: string } | null {
  if ((arg === "-c" || arg === "--config") && next !== undefined) return { value: next, shown: `${arg} ${next}` };
  if (arg.startsWith("--config=")) return { value: arg.slice("--config=".length), shown: arg };
  if (arg.startsWith("-c") && !arg.startsWith("--")) return { value: arg.slice(2).replace(/^=/, ""), shown: arg };
  return null;
}

/** `mcp_servers.x.command=…`, `mcp_servers={…}`: the key's first dotted part, spaces and quotes aside. */
function setsMcpServers(override: string): boolean {
  const key = override.split("=", 1)[0] ?? "";
  return key.split(".", 1)[0]?.trim().replace(/^["']|["']$/g, "") === "mcp_servers";
}

/**
 * Why opencode would load MCP servers from `$OPENCODE_CONFIG_CONTENT` that wrap cannot see, or null.
 * Read as opencode reads it: `{env:VAR}` is replaced as raw text first (so a variable can carry a
 * whole section), then the text is JSONC. A `{file:…}` wrap does not follow, and text that does not
 * parse, are refused too: wrap cannot tell what they hold.
 */
function opencodeContentServers(content: string, env: NodeJS.ProcessEnv): string | null {
  const text = content.replace(/\{env:([^}]+)\}/g, (_, name: string) => env[name] ?? "");
  if (/\{file:[^}]+\}/.test(text)) return "reads a file ({file:…}) wrap does not follow";
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || tree?.type !== "object") return "does not parse as a JSON object, so wrap cannot tell which MCP servers it holds";
  return (tree.children ?? []).some((property) => property.children?.[0]?.value === "mcp") ? "with an mcp section" : null;
}
