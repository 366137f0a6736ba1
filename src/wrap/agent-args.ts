import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
      const value = arg === "-c" || arg === "--config" ? args[i + 1] : arg.startsWith("--config=") ? arg.slice("--config=".length) : undefined;
      if (value?.trimStart().startsWith("mcp_servers")) refuse(`codex ${arg} ${value}`, "put the server in ~/.codex/config.toml or the project's .codex/config.toml");
    }
  }
  if (agent === "copilot" && args.some((arg) => arg === "--additional-mcp-config" || arg.startsWith("--additional-mcp-config="))) {
    refuse("copilot --additional-mcp-config", "put the servers in ~/.copilot/mcp-config.json or the project's .mcp.json");
  }
  if (agent === "opencode" && /"mcp"\s*:/.test(ctx.env.OPENCODE_CONFIG_CONTENT ?? "")) {
    refuse("OPENCODE_CONFIG_CONTENT with an mcp section", "put the servers in opencode.json (or a file named by OPENCODE_CONFIG)");
  }
}
