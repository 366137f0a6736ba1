import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { applyEdits, modify, parseTree, findNodeAtLocation, getNodeValue, type JSONPath } from "jsonc-parser";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { detectAgent } from "./adapters/detect.ts";
import type { AgentType, ConfigFile } from "./adapters/types.ts";
import { opencodePluginsOff } from "./opencode-plugin.ts";

/**
 * The hook that governs an agent's own tools (its shell, reads, edits, writes, fetches) during a
 * wrap session (docs/governance.md, "Built-in tools"): `thoughtgate hook <agent>` before every tool
 * call.
 *
 * Claude Code takes the hook on its command line, `--settings FILE` (settings it loads beside the
 * user's, project's and local files), so wrap writes nothing of the user's: the file lives in the
 * session directory and ends with it, and a crash leaves nothing to repair. The agent cannot edit
 * it away through its own tools either (the session directory is ThoughtGate's state, which the
 * default policy protects), and a `disableAllHooks` written into a settings file is refused the same
 * way; one already in a settings file is overridden for the session (`disableAllHooks: false` on
 * the command line). The user's own `--settings` is kept: its hooks and ours are merged into the
 * session's file.
 *
 * Codex takes hooks from `-c key=value` overrides on its command line (its session-flags layer), so
 * wrap writes nothing of the user's for Codex either. Codex runs only hooks it trusts, trust being
 * `hooks.state."<key>".trusted_hash` in its config: wrap gives that trust for its own hook only,
 * by hash, in the same session-flags layer (codexHookArgs), and asks Codex itself whether it took
 * it (codex-trust.ts) before saying so.
 *
 * Claude Code runs a hook's command through a shell, and waits `timeout` seconds for it; past that
 * it goes ahead, so the hook blocks the call itself before (commands/hook.ts, HOOK_DEADLINE_MS).
 * Codex's default is 600 s too, with no ceiling (a larger `timeout` is taken as given); 600 is set.
 */
const HOOK_TIMEOUT_S = 600;
/** Recording that a call ran takes no person: a short timeout. */
const RAN_TIMEOUT_S = 30;
/** Claude Code's tools whose calls the embedded default may ask about (a PostToolUse matcher: a regular expression). */
const ASKED_TOOLS = "Bash|Edit|MultiEdit|NotebookEdit|Write|WebFetch";

/**
 * Whether wrap governs the agent's own tools through its hooks: Claude Code, when the program is
 * Claude Code itself (`--agent-type claude-code` over another program, a script or a test's stand-in,
 * would not know the flag).
 */
export function hooksGovern(agent: AgentType, command: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (agent === "codex" || agent === "gemini" || agent === "copilot") return detectAgent(command) === agent;
  // opencode's hook is a plugin (opencode-plugin.ts), which --pure turns off.
  if (agent === "opencode") return detectAgent(command) === agent && opencodePluginsOff(command, env) === null;
  return agent === "claude-code" && detectAgent(command) === "claude-code" && hooklessMode(command) === null;
}

/** A Claude Code flag that turns hooks off (`--bare`, `--safe-mode`), or null. */
export function hooklessMode(command: readonly string[]): string | null {
  return command.find((word) => word === "--bare" || word === "--safe-mode") ?? null;
}

/** Claude Code's name for an MCP server in its tools' names, `mcp__<name>__<tool>` (Claude Code 2.1: every character but letters, digits, `_` and `-` becomes `_`). */
function claudeServerName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/**
 * The servers whose tools the hook lets through for their shim to decide (docs/governance.md,
 * "Built-in tools"), by Claude Code's names for them: a name every entry of which runs through
 * a shim. A name that some ungoverned entry shares, or that one of its tools' names could be read
 * as (`a` and `a__b` both make `mcp__a__b__x`), is left out: the hook then says nothing about it,
 * and Claude Code asks as it would.
 */
export function governedServerNames(entries: ReadonlyArray<{ name: string; governed: boolean; status: string }>, separator = "__"): string[] {
  const runsThroughShim = (entry: { governed: boolean; status: string }) => entry.governed || entry.status === "wrapped";
  const ungoverned = entries.filter((entry) => !runsThroughShim(entry)).map((entry) => claudeServerName(entry.name));
  const governed = new Set(entries.filter(runsThroughShim).map((entry) => claudeServerName(entry.name)));
  // opencode names a server's tools `<server>_<tool>`: its separator is one `_`.
  const clash = (a: string, b: string) => a === b || a.startsWith(`${b}${separator}`) || b.startsWith(`${a}${separator}`);
  return [...governed].filter((name) => !ungoverned.some((other) => clash(name, other))).sort();
}

/** The shell command a hook entry runs: this binary (its stable path) and the agent's name. */
function hookCommand(binary: string, agent: "claude-code" | "codex" | "gemini" | "copilot"): string {
  return `${shellQuote(binary)} hook ${agent}`;
}

/**
 * The agent's command line with the hook added for this session, or the command unchanged when the
 * agent's hooks are not wrap's to set.
 */
export function withAgentHooks(agent: AgentType, command: readonly string[], binary: string, sessionDir: string, cwd: string): string[] {
  if (!hooksGovern(agent, command)) return [...command];
  const [program, ...rest] = command;
  if (program === undefined) return [...command];
  if (agent === "codex") return [program, ...codexHookArgs(binary), ...rest];
  // Gemini CLI's hook is in its settings file, shared through the config guard (withGeminiHook).
  if (agent !== "claude-code") return [...command];
  const entry = claudeHookEntry(binary);
  const given = settingsValue(rest);
  const settings = given === null ? {} : readGivenSettings(given.text, cwd);
  const hooks = (settings.hooks ?? {}) as Record<string, unknown>;
  const pre = Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : [];
  // Command-line settings take precedence over the user's, project's and local files: a
  // `disableAllHooks: true` in any of them would otherwise switch the hook off unseen.
  // After a call of the tools that may be asked, the hook records that it ran (hook-decision.ts,
  // recordRan): a yes in Claude Code's own prompt is otherwise not seen. Not after every tool: each
  // hook is a process.
  const ran = { matcher: ASKED_TOOLS, hooks: [{ type: "command", command: hookCommand(binary, "claude-code"), timeout: RAN_TIMEOUT_S }] };
  const post = Array.isArray(hooks.PostToolUse) ? hooks.PostToolUse : [];
  const merged = { ...settings, disableAllHooks: false, hooks: { ...hooks, PreToolUse: [entry, ...pre], PostToolUse: [ran, ...post] } };
  const file = join(sessionDir, "claude-settings.json");
  writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`, { mode: 0o600 });
  if (given === null) return [program, "--settings", file, ...rest];
  const out = [program, ...rest];
  // `--settings VALUE` or `--settings=VALUE`: the value becomes the session's file.
  out[given.index + 1] = given.inline ? `--settings=${file}` : file;
  return out;
}

/**
 * The key Codex gives the first PreToolUse hook of its session-flags layer (`<source>:<event>:<group>:<handler>`),
 * as `codex app-server`'s hooks/list reports it.
 */
export const CODEX_HOOK_KEY = "/<session-flags>/config.toml:pre_tool_use:0:0";

/**
 * The `-c` overrides that give Codex ThoughtGate's PreToolUse hook for this run, trusted: the hook
 * (no matcher: every tool) and its trusted hash. Codex's hash is the SHA-256 of the hook's
 * identity as JSON with its keys sorted (event, handlers; a matcher when there is one), measured
 * against Codex 0.169's own `currentHash`. The trust is given for this hook and no other: the
 * user's `hooks.state` entries merge with it, untouched, and a hook of theirs not trusted stays so.
 */
export function codexHookArgs(binary: string): string[] {
  const command = hookCommand(binary, "codex");
  return [
    "-c",
    `hooks.PreToolUse=[{hooks=[{type="command",command=${JSON.stringify(command)},timeout=${HOOK_TIMEOUT_S}}]}]`,
    "-c",
    `hooks.state={${JSON.stringify(CODEX_HOOK_KEY)}={trusted_hash=${JSON.stringify(codexHookHash(binary))}}}`,
  ];
}

/** ThoughtGate's PreToolUse group as Codex reads it from a hooks file (no matcher: every tool). */
export function codexHookEntry(binary: string): Record<string, unknown> {
  return { hooks: [{ type: "command", command: hookCommand(binary, "codex"), timeout: HOOK_TIMEOUT_S }] };
}

/** The hash Codex trusts ThoughtGate's PreToolUse hook by (`trusted_hash`), wherever the hook is written. */
export function codexHookHash(binary: string): string {
  const identity = { event_name: "pre_tool_use", hooks: [{ async: false, command: hookCommand(binary, "codex"), timeout: HOOK_TIMEOUT_S, type: "command" }] };
  return `sha256:${createHash("sha256").update(JSON.stringify(identity)).digest("hex")}`;
}

/** Where the user's own `--settings` value is in `args` (the words after the program). */
function settingsValue(args: readonly string[]): { index: number; text: string; inline: boolean } | null {
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word === "--") return null;
    if (word === "--settings" && args[i + 1] !== undefined) return { index: i + 1, text: args[i + 1] as string, inline: false };
    if (word.startsWith("--settings=")) return { index: i, text: word.slice("--settings=".length), inline: true };
  }
  return null;
}

function readGivenSettings(text: string, cwd: string): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(text.trimStart().startsWith("{") ? text : readFileSync(resolve(cwd, text), "utf8"));
    if (json === null || typeof json !== "object" || Array.isArray(json)) throw new Error("not a JSON object");
    return json as Record<string, unknown>;
  } catch (error) {
    throw new ThoughtGateError("CONFIG", `--settings ${text}: ${messageOf(error)}; the agent was not started (its hook could not be added)`);
  }
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Gemini CLI takes hooks only from its settings files (a session-only system settings file brings
 * none, measured), so wrap adds ThoughtGate's `BeforeTool` hook to the user's `~/.gemini/settings.json`
 * through the config guard, as MCP entries are (backup, journal, crash repair, byte-for-byte
 * restore, sessions side by side): `hooks.BeforeTool` is the owned key, ours first and the user's
 * own entries after it. Its matcher is a regular expression (`.*`: every tool), its timeout in
 * milliseconds (Gemini's default, 60 s, is shorter than a person: the hook's own 600 s is given).
 * Null when the file is not the user's settings, cannot be read as JSON, or holds the hook already
 * (then the text is unchanged and the key still owned).
 */
export const GEMINI_HOOK_PATH: JSONPath = ["hooks", "BeforeTool"];

export function withGeminiHook(file: ConfigFile, text: string, binary: string): { text: string; owned: JSONPath[] } | null {
  if (file.agent !== "gemini" || file.scope !== "user" || file.problems.length > 0) return null;
  // A user with no settings file yet gets one holding the hook (the guard removes it again).
  return withHookFirst(file.exists ? text : "{}\n", GEMINI_HOOK_PATH, geminiHookEntry(binary));
}

export function geminiHookEntry(binary: string): Record<string, unknown> {
  return { matcher: ".*", hooks: [{ type: "command", command: hookCommand(binary, "gemini"), timeout: HOOK_TIMEOUT_S * 1000 }] };
}

/**
 * `enroll claude-code` keeps Claude Code's PreToolUse hook in `~/.claude/settings.json` (the owned
 * key `hooks.PreToolUse`, ours first), through the config guard, until `unenroll`: plain runs are
 * governed too. The entry is the one wrap gives on the command line, so under a wrap Claude Code
 * runs it once (identical handlers are run once).
 */
export const CLAUDE_HOOK_PATH: JSONPath = ["hooks", "PreToolUse"];

export function claudeHookEntry(binary: string): Record<string, unknown> {
  return { matcher: "*", hooks: [{ type: "command", command: hookCommand(binary, "claude-code"), timeout: HOOK_TIMEOUT_S }] };
}

/** `text` with Claude Code's hook first; a settings file that does not exist yet (`text` null) becomes one holding it. */
export function withClaudeHook(text: string | null, binary: string): { text: string; owned: JSONPath[] } | null {
  return withHookFirst(text ?? "{}\n", CLAUDE_HOOK_PATH, claudeHookEntry(binary));
}

/**
 * Copilot CLI takes hooks from its settings files (`hooks.preToolUse` in `$COPILOT_HOME/settings.json`,
 * the same schema as `.github/hooks/*.json`: a `bash` command line, `timeoutSec`, its default 30 s
 * shorter than a person), so wrap and enroll add ThoughtGate's first in the user's file through the
 * config guard (copilot-hook.ts), as Gemini CLI's. Copilot CLI 1.0.102 runs the call when a hook
 * times out (measured), and waits the `timeoutSec` given (35 s under 600, measured): the hook
 * answers before, as for Claude Code (commands/hook.ts, HOOK_DEADLINE_MS). A hook that exits
 * non-zero or cannot be started refuses the call (measured).
 */
const COPILOT_HOOK_PATH: JSONPath = ["hooks", "preToolUse"];

function copilotHookEntry(binary: string): Record<string, unknown> {
  return { type: "command", bash: hookCommand(binary, "copilot"), timeoutSec: HOOK_TIMEOUT_S };
}

export function withCopilotHook(text: string, binary: string): { text: string; owned: JSONPath[] } | null {
  return withHookFirst(text, COPILOT_HOOK_PATH, copilotHookEntry(binary));
}

/** Whether the settings `text` hold `entry` first under `path` (doctor: a hook missing or changed). */
function hasHookFirst(text: string, path: JSONPath, entry: unknown): boolean {
  const tree = parseTree(text);
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, path);
  const list: unknown = node === undefined ? undefined : getNodeValue(node);
  return Array.isArray(list) && JSON.stringify(list[0]) === JSON.stringify(entry);
}

/** The list at `path` in the settings `text` (empty when absent or not a list). */
export function hookList(text: string, path: JSONPath): unknown[] {
  const tree = parseTree(text);
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, path);
  const list: unknown = node === undefined ? undefined : getNodeValue(node);
  return Array.isArray(list) ? list : [];
}

/**
 * `text` with `entry` last in the list at `path` (Codex's hooks file: a hook's trust is keyed by its
 * place in the list, so the user's hooks keep theirs), or unchanged when it is there already; with
 * the place it has. Null when `text` is not a JSON object.
 */
export function withHookLast(text: string, path: JSONPath, entry: unknown): { text: string; owned: JSONPath[]; index: number } | null {
  const tree = parseTree(text);
  if (tree === undefined || tree.type !== "object") return null;
  const list = hookList(text, path);
  const at = list.findIndex((item) => JSON.stringify(item) === JSON.stringify(entry));
  if (at >= 0) return { text, owned: [path], index: at };
  const edits = modify(text, path, [...list, entry], { formattingOptions: { insertSpaces: true, tabSize: 2 } });
  return { text: applyEdits(text, edits), owned: [path], index: list.length };
}

/** `text` with `entry` first in the list at `path` (the rest kept), or unchanged when it is there already; null when `text` is not a JSON object. */
function withHookFirst(text: string, path: JSONPath, entry: unknown): { text: string; owned: JSONPath[] } | null {
  const tree = parseTree(text);
  if (tree === undefined || tree.type !== "object") return null;
  if (hasHookFirst(text, path, entry)) return { text, owned: [path] };
  const node = findNodeAtLocation(tree, path);
  const present: unknown = node === undefined ? [] : getNodeValue(node);
  const list = Array.isArray(present) ? present : [];
  const edits = modify(text, path, [entry, ...list], { formattingOptions: { insertSpaces: true, tabSize: 2 } });
  return { text: applyEdits(text, edits), owned: [path] };
}
