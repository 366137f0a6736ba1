import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentContext } from "../wrap/adapters/index.ts";
import { CLAUDE_HOOK_PATH, claudeHookEntry, hasHookFirst } from "../wrap/agent-hooks.ts";
import { realConfigPath } from "../wrap/config-path.ts";
import { enrolledFiles } from "../wrap/enroll.ts";
import { enrolledPluginPath, enrolledPluginState } from "../wrap/opencode-plugin.ts";
import { copilotSettingsPath, hooksTurnedOff } from "../wrap/copilot-hook.ts";
import { stableShim } from "../wrap/shim-path.ts";
import type { CheckBody } from "./report.ts";

/**
 * `doctor`'s view of the agents' own tools (docs/governance.md, "Built-in tools"): which agents'
 * shells, edits and writes ThoughtGate governs, how, and what would switch that off unseen. Claude
 * Code's hook is given on its command line by each wrap (nothing installed to check); a managed
 * setting that allows only managed hooks, or turns every hook off, defeats it and cannot be
 * overridden from the command line. Codex's hook is given on its command line by each wrap too,
 * with its trust, and wrap asks Codex whether it took it (wrap/codex-trust.ts). Gemini CLI's is
 * added to its user settings by each wrap, through the config guard; one found there is shown.
 */
export function checkAgentHooks(ctx: AgentContext): CheckBody {
  const details = ["Claude Code: its own tools governed under `thoughtgate wrap` (PreToolUse hook on its command line, for the session); not in plain runs"];
  const managed = claudeManagedSettings(ctx);
  const blocking = managed.filter((found) => found.key !== null);
  const enrolledHook = claudeEnrolledHook(ctx);
  if (enrolledHook !== null) details.push(enrolledHook.ok ? `  enrolled: its PreToolUse hook in ${enrolledHook.path} governs plain runs too` : `  enrolled, but ThoughtGate's PreToolUse hook is missing or changed in ${enrolledHook.path}: plain runs are not governed; run \`thoughtgate enroll claude-code\` again`);
  for (const found of blocking) details.push(`  ${found.path} sets ${found.key}: Claude Code will not run ThoughtGate's hook, so its own tools are not governed`);
  const gemini = hookIn(join(ctx.home, ".gemini", "settings.json"), "hook gemini");
  details.push(`Gemini CLI: its own tools governed under \`thoughtgate wrap\` (BeforeTool hook added to ${join(ctx.home, ".gemini", "settings.json")} for the session, put back after)${gemini ? "; `thoughtgate hook gemini` in that file now (a wrap running, or put there by hand)" : "; not in plain runs"}`);
  const codex = hookIn(join(ctx.home, ".codex", "hooks.json"), "hook codex") || hookIn(join(ctx.home, ".codex", "config.toml"), "hook codex");
  details.push(`Codex: its own tools governed under \`thoughtgate wrap\` (PreToolUse hook and its trust on its command line, for the session; wrap's banner says if Codex did not take it); not in plain runs${codex ? "; `thoughtgate hook codex` also found in ~/.codex (Codex runs it only if it trusts it: `codex` asks once)" : ""}`);
  const plugin = enrolledPluginState(ctx, stableShim({ create: false }).path);
  details.push(`opencode: its own tools governed under \`thoughtgate wrap\` (ThoughtGate's plugin, named in its environment for the session)${plugin === "ok" ? `; enrolled: the plugin in ${enrolledPluginPath(ctx)} governs plain runs too` : plugin === "changed" ? `; ${enrolledPluginPath(ctx)} is not the plugin ThoughtGate writes (changed, or another thoughtgate's): run \`thoughtgate enroll opencode\` again` : "; not in plain runs (`thoughtgate enroll opencode` installs its plugin)"}`);
  const copilot = copilotSettingsPath(ctx);
  const copilotOff = hooksTurnedOff(ctx);
  details.push(`Copilot CLI: its own tools governed under \`thoughtgate wrap\` (preToolUse hook added to ${copilot} for the session, put back after)${hookIn(copilot, "hook copilot") ? "; `thoughtgate hook copilot` in that file now (enrolled, or a wrap running)" : "; not in plain runs (`thoughtgate enroll copilot` keeps it)"}`);
  for (const path of copilotOff) details.push(`  ${path} sets disableAllHooks: Copilot CLI runs no hook, so its own tools are not governed (wrap refuses to start it)`);
  details.push("the other agents: no hook system; their MCP servers only");
  return {
    status: blocking.length > 0 || enrolledHook?.ok === false || plugin === "changed" || copilotOff.length > 0 ? "warn" : "pass",
    summary: blocking.length > 0 ? "a managed Claude Code setting turns ThoughtGate's hook off" : enrolledHook?.ok === false ? "Claude Code's enrolled hook is missing or changed" : "Claude Code under wrap",
    details,
    data: { claudeCodeManaged: blocking.map((found) => ({ path: found.path, key: found.key })), gemini, codex },
  };
}

/** When Claude Code is enrolled with its hook in ~/.claude/settings.json: whether the hook is still there as enroll wrote it. */
function claudeEnrolledHook(ctx: AgentContext): { path: string; ok: boolean } | null {
  const path = join(ctx.home, ".claude", "settings.json");
  let real: string;
  try {
    real = realConfigPath(path);
  } catch {
    return null;
  }
  if (!enrolledFiles("claude-code").includes(real)) return null;
  let text = "";
  try {
    text = readFileSync(real, "utf8");
  } catch {
    // Missing: reported as such below.
  }
  return { path, ok: hasHookFirst(text, CLAUDE_HOOK_PATH, claudeHookEntry(stableShim({ create: false }).path)) };
}

/** Claude Code's managed settings files (they take precedence over the command line) and the key in each that stops our hook. */
function claudeManagedSettings(ctx: AgentContext): Array<{ path: string; key: string | null }> {
  const paths = ctx.platform === "darwin" ? ["/Library/Application Support/ClaudeCode/managed-settings.json"] : ["/etc/claude-code/managed-settings.json"];
  const found: Array<{ path: string; key: string | null }> = [];
  for (const path of paths) {
    const json = readJson(path);
    if (json === null) continue;
    const key = json.disableAllHooks === true ? "disableAllHooks" : json.allowManagedHooksOnly === true ? "allowManagedHooksOnly" : null;
    found.push({ path, key });
  }
  return found;
}

function readJson(path: string): Record<string, unknown> | null {
  try {
    const json: unknown = JSON.parse(readFileSync(path, "utf8"));
    return json !== null && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function hookIn(path: string, words: string): boolean {
  try {
    return readFileSync(path, "utf8").includes(words);
  } catch {
    return false;
  }
}
