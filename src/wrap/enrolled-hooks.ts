/**
 * The agents' own-tools hooks kept for good by `enroll` (docs/governance.md, "Built-in tools"), and
 * what `doctor` finds of them. Each goes in through the config guard with the enrollment as its
 * holder, like the MCP entries (config-guard.ts: backup, journal with what was written, crash
 * repair, `unenroll` putting back only what still holds what enroll wrote):
 *
 * - Claude Code: `hooks.PreToolUse` in `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`
 *   when set; agent-hooks.ts, withClaudeHook).
 * - Gemini CLI: `hooks.BeforeTool` in `~/.gemini/settings.json`, shared with its MCP entries
 *   (agent-hooks.ts, withGeminiHook). User-level hooks run without a trusted folder; a project's
 *   would need one.
 * - Codex 0.169: the hook in `$CODEX_HOME/hooks.json` (JSON: its owned key put back like any
 *   other; Codex reads it beside config.toml), and its trust in config.toml as Codex documents it,
 *   `[hooks.state."<hooks.json>:pre_tool_use:<group>:0"] trusted_hash = "sha256:…"`. The key names
 *   the hook's place in the list, so ours goes last: the user's own hooks keep their places, and
 *   with them their trust. Codex skips a hook it does not trust without a word, so an untrusted one
 *   is reported (here for doctor; enroll also asks Codex itself: codex-trust.ts).
 *
 * A settings file that does not exist yet is created, and removed again when put back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { messageOf } from "../core/errors.ts";
import { codexHome } from "./adapters/codex.ts";
import { claudeHome } from "./adapters/claude-code.ts";
import { geminiHome } from "./adapters/gemini.ts";
import type { AgentContext, AgentType } from "./adapters/index.ts";
import { CLAUDE_HOOK_PATH, claudeHookEntry, codexHookEntry, codexHookHash, GEMINI_HOOK_PATH, geminiHookEntry, hookList, withHookLast } from "./agent-hooks.ts";
import { ConfigGuard, type ShareOutcome } from "./config-guard.ts";
import { realConfigPath } from "./config-path.ts";
import { parseTomlText, toml } from "./formats/toml.ts";
import { enrollHolder } from "./holders.ts";
import { readJournal } from "./journal.ts";

export type HookAgent = Extract<AgentType, "claude-code" | "codex" | "gemini">;

const HOOK_AGENTS: readonly HookAgent[] = ["claude-code", "codex", "gemini"];

/** Where each agent's hook is written, and what is written there. */
export function hookFile(agent: HookAgent, ctx: AgentContext): { path: string; list: JSONPath } {
  if (agent === "claude-code") return { path: join(claudeHome(ctx), "settings.json"), list: CLAUDE_HOOK_PATH };
  if (agent === "gemini") return { path: join(geminiHome(ctx), ".gemini", "settings.json"), list: GEMINI_HOOK_PATH };
  return { path: join(codexHome(ctx), "hooks.json"), list: CODEX_HOOKS_PATH };
}

/** Codex's hooks file: `{"hooks": {"PreToolUse": [...]}}`. */
const CODEX_HOOKS_PATH: JSONPath = ["hooks", "PreToolUse"];

function hookEntry(agent: HookAgent, binary: string): Record<string, unknown> {
  if (agent === "claude-code") return claudeHookEntry(binary);
  if (agent === "gemini") return geminiHookEntry(binary);
  return codexHookEntry(binary);
}

/** The key Codex trusts the hook at place `group` of `hooksPath` by. */
function codexTrustKey(hooksPath: string, group: number): string {
  return `${hooksPath}:pre_tool_use:${group}:0`;
}

export type HookShare = { path: string; outcome: ShareOutcome } | { path: string; problem: string };

/**
 * Codex's hooks file with ThoughtGate's hook last, kept for the enrollment; its place (for the
 * trust's key) when it could be written.
 */
export function enrollCodexHooksFile(ctx: AgentContext, binary: string): HookShare & { group?: number } {
  const { path } = hookFile("codex", ctx);
  const read = readText(path);
  if ("problem" in read) return { path, problem: read.problem };
  const hooked = withHookLast(read.text ?? "{}\n", CODEX_HOOKS_PATH, codexHookEntry(binary));
  if (hooked === null) return { path, problem: "is not a JSON object; the hook was not added" };
  return { ...share(path, "codex", read.text ?? "", hooked), group: hooked.index };
}

/** Claude Code's settings with ThoughtGate's hook first, kept for the enrollment. */
export function enrollClaudeSettings(ctx: AgentContext, rewritten: (text: string | null) => { text: string; owned: JSONPath[] } | null): HookShare {
  const { path } = hookFile("claude-code", ctx);
  const read = readText(path);
  if ("problem" in read) return { path, problem: read.problem };
  const hooked = rewritten(read.text);
  if (hooked === null) return { path, problem: "is not a JSON object; its hook was not added" };
  return share(path, "claude-code", read.text ?? "", hooked);
}

function share(path: string, agent: HookAgent, expected: string, rewritten: { text: string; owned: JSONPath[] }): HookShare {
  try {
    const guard = new ConfigGuard({ configPath: path, agentType: agent, holder: enrollHolder(agent) });
    const outcome = guard.share(expected, rewritten);
    // The enrollment keeps it: nothing of this process lets go of it when it exits.
    guard.release();
    return { path, outcome };
  } catch (error) {
    return { path, problem: `${messageOf(error)}; the hook was not added` };
  }
}

/** The file's text, null when it does not exist yet. */
function readText(path: string): { text: string | null } | { problem: string } {
  try {
    return { text: readFileSync(path, "utf8") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { text: null };
    return { problem: `cannot be read (${messageOf(error)})` };
  }
}

/**
 * Codex's config.toml `text` (empty when it does not exist) trusting ThoughtGate's hook under `key`:
 * a `[hooks.state."<key>"]` table added at the end, or the value put right where the user's file
 * has the key already. Null when the file's own layout leaves no place for it (`hooks` written as
 * an inline table).
 */
function withCodexTrust(text: string, key: string, hash: string): { text: string; owned: JSONPath[] } | null {
  const path: JSONPath = ["hooks", "state", key];
  const owned = [path];
  if (codexTrusted(text, key, hash)) return { text, owned };
  let next: string;
  try {
    const document = toml.edit(text);
    const [table] = document.objects([path]);
    if (table !== undefined) {
      if (table.has("trusted_hash")) table.replace("trusted_hash", hash);
      else table.insert([["trusted_hash", hash]]);
      next = document.apply();
    } else {
      const eol = text.includes("\r\n") ? "\r\n" : "\n";
      const before = text === "" ? "" : text.endsWith(eol) ? eol : `${eol}${eol}`;
      next = `${text}${before}[hooks.state.${JSON.stringify(key)}]${eol}trusted_hash = ${JSON.stringify(hash)}${eol}`;
    }
  } catch {
    return null;
  }
  return codexTrusted(next, key, hash) ? { text: next, owned } : null;
}

/** Whether Codex's config.toml `text` trusts the hook under `key` with `hash`. */
function codexTrusted(text: string, key: string, hash: string): boolean {
  try {
    const hooks = parseTomlText(text).value.hooks as { state?: Record<string, { trusted_hash?: unknown }> } | undefined;
    return hooks?.state?.[key]?.trusted_hash === hash;
  } catch {
    return false;
  }
}

/** The trust edit `enroll codex` shares with Codex's user config.toml (its MCP entries' file). */
export function codexTrustEdit(ctx: AgentContext, binary: string, group: number): (text: string) => { text: string; owned: JSONPath[] } | null {
  const key = codexTrustKey(hookFile("codex", ctx).path, group);
  return (text) => withCodexTrust(text, key, codexHookHash(binary));
}

type HookState =
  /** Where enroll (or the user) put it, as ThoughtGate writes it (for Codex, trusted too). */
  | { state: "installed" }
  /** Not there: for an enrolled agent, gone since. */
  | { state: "missing" }
  /** A `thoughtgate hook <agent>` entry that is not ThoughtGate's as written: how it differs. */
  | { state: "changed"; how: string }
  /** Codex: the hook is there, its trust is not (Codex skips it silently). */
  | { state: "untrusted"; key: string };

export type HookInstallation = { agent: HookAgent; path: string; enrolled: boolean } & HookState;

/** For `doctor`: each agent's hook file, whether the enrollment holds it, and what is in it. */
export function hookInstallations(ctx: AgentContext, binary: string): HookInstallation[] {
  const journal = readJournal();
  return HOOK_AGENTS.map((agent) => {
    const { path, list } = hookFile(agent, ctx);
    const real = realConfigPath(path);
    const enrolled = journal.some((record) => record.configPath === real && record.holders.some((holder) => holder.kind === "enroll" && holder.agent === agent));
    const read = readText(path);
    const text = "text" in read ? (read.text ?? "") : "";
    return { agent, path, enrolled, ...stateOf(agent, ctx, text, list, binary) };
  });
}

function stateOf(agent: HookAgent, ctx: AgentContext, text: string, list: JSONPath, binary: string): HookState {
  const entries = hookList(text, list);
  const ours = hookEntry(agent, binary);
  const at = entries.findIndex((entry) => JSON.stringify(entry) === JSON.stringify(ours));
  if (at < 0) {
    const theirs = entries.find((entry) => handlersOf(entry).some((handler) => typeof handler.command === "string" && handler.command.endsWith(` hook ${agent}`)));
    return theirs === undefined ? { state: "missing" } : { state: "changed", how: differences(theirs, ours) };
  }
  if (agent !== "codex") return { state: "installed" };
  const key = codexTrustKey(hookFile("codex", ctx).path, at);
  const config = readText(join(codexHome(ctx), "config.toml"));
  const trusted = "text" in config && codexTrusted(config.text ?? "", key, codexHookHash(binary));
  return trusted ? { state: "installed" } : { state: "untrusted", key };
}

/**
 * The key of ThoughtGate's hook in Codex's hooks file when it is there and trusted in config.toml
 * (enrolled), else null. A wrap then gives Codex no second hook on its command line: Codex would run
 * both, and a call would be decided, recorded and asked about twice.
 */
export function enrolledCodexHookKey(ctx: AgentContext, binary: string): string | null {
  const { path, list } = hookFile("codex", ctx);
  const read = readText(path);
  if (!("text" in read) || read.text === null) return null;
  const state = stateOf("codex", ctx, read.text, list, binary);
  if (state.state !== "installed") return null;
  const at = hookList(read.text, list).findIndex((entry) => JSON.stringify(entry) === JSON.stringify(codexHookEntry(binary)));
  return codexTrustKey(path, at);
}

function handlersOf(entry: unknown): Array<Record<string, unknown>> {
  const hooks = (entry as { hooks?: unknown } | null)?.hooks;
  return Array.isArray(hooks) ? hooks.filter((hook): hook is Record<string, unknown> => hook !== null && typeof hook === "object") : [];
}

/** How a hook entry differs from ThoughtGate's: its command, timeout, matcher. */
function differences(theirs: unknown, ours: Record<string, unknown>): string {
  const [found] = handlersOf(theirs);
  const [wanted] = handlersOf(ours);
  const out: string[] = [];
  if (found?.command !== wanted?.command) out.push(`runs ${String(found?.command)} instead of ${String(wanted?.command)}`);
  if (found?.timeout !== wanted?.timeout) out.push(`timeout ${found?.timeout === undefined ? "the agent's default" : String(found.timeout)} instead of ${String(wanted?.timeout)}`);
  const matcher = (theirs as { matcher?: unknown }).matcher;
  if (matcher !== ours.matcher) out.push(`matcher ${matcher === undefined ? "none" : JSON.stringify(matcher)} instead of ${ours.matcher === undefined ? "none (every tool)" : JSON.stringify(ours.matcher)}`);
  if (handlersOf(theirs).length !== 1) out.push("other handlers beside it");
  return out.length > 0 ? out.join(", ") : "written differently";
}
