import { readFileSync } from "node:fs";
import { answeringHooks } from "../governance/verdict/agent-prompt-hooks.ts";
import type { AgentContext } from "../wrap/adapters/index.ts";
import { hookInstallations, type HookAgent, type HookInstallation } from "../wrap/enrolled-hooks.ts";
import { enrolledPluginPath, enrolledPluginState } from "../wrap/opencode-plugin.ts";
import { copilotSettingsPath, hooksTurnedOff } from "../wrap/copilot-hook.ts";
import { stableShim } from "../wrap/shim-path.ts";
import type { CheckBody } from "./report.ts";

/**
 * `doctor`'s view of the agents' own tools (docs/governance.md, "Built-in tools"): for Claude Code,
 * Codex and Gemini CLI, whether ThoughtGate's hook is installed for good (`enroll`) or given by
 * each wrap only, and one line with the fix for a hook that is missing (enrolled, then taken out),
 * changed (another command or binary, another timeout, a narrower matcher) or, for Codex, not
 * trusted (Codex skips it without a word: wrap/enrolled-hooks.ts). A managed Claude Code setting
 * that allows only managed hooks, or turns every hook off, defeats the hook and cannot be
 * overridden from the command line.
 */
export function checkAgentHooks(ctx: AgentContext): CheckBody {
  const installations = hookInstallations(ctx, stableShim({ create: false }).path);
  const details = installations.map((found) => hookLine(found, ctx));
  const managed = claudeManagedSettings(ctx);
  const blocking = managed.filter((found) => found.key !== null);
  for (const found of blocking) details.push(`  ${found.path} sets ${found.key}: Claude Code will not run ThoughtGate's hook, so its own tools are not governed`);
  // This project's settings could answer Claude Code's questions in the person's place (agent-prompt-hooks.ts).
  const answering = answeringHooks(ctx.cwd);
  for (const path of answering.PermissionRequest) details.push(`  ${shown(path, ctx)} has a PermissionRequest hook (or cannot be read): here ThoughtGate asks about Claude Code's own tools on the approvals page, the desktop and with thoughtgate approve, not in its prompt`);
  for (const path of answering.Elicitation) details.push(`  ${shown(path, ctx)} has an Elicitation or ElicitationResult hook (or cannot be read): here ThoughtGate puts Claude Code no approval form; MCP tools are asked on the approvals page, the desktop and with thoughtgate approve`);
  const plugin = enrolledPluginState(ctx, stableShim({ create: false }).path);
  details.push(`opencode: its own tools governed under \`thoughtgate wrap\` (ThoughtGate's plugin, named in its environment for the session)${plugin === "ok" ? `; enrolled: the plugin in ${enrolledPluginPath(ctx)} governs plain runs too` : plugin === "changed" ? `; ${enrolledPluginPath(ctx)} is not the plugin ThoughtGate writes (changed, or another thoughtgate's): run \`thoughtgate enroll opencode\` again` : "; not in plain runs (`thoughtgate enroll opencode` installs its plugin)"}`);
  const copilot = copilotSettingsPath(ctx);
  const copilotOff = hooksTurnedOff(ctx);
  details.push(`Copilot CLI: its own tools governed under \`thoughtgate wrap\` (preToolUse hook added to ${copilot} for the session, put back after)${hookIn(copilot, "hook copilot") ? "; `thoughtgate hook copilot` in that file now (enrolled, or a wrap running)" : "; not in plain runs (`thoughtgate enroll copilot` keeps it)"}`);
  for (const path of copilotOff) details.push(`  ${path} sets disableAllHooks: Copilot CLI runs no hook, so its own tools are not governed (wrap refuses to start it)`);
  details.push("the other agents: no hook system; their MCP servers only");
  const broken = installations.filter((found) => found.state === "untrusted" || found.state === "changed" || (found.state === "missing" && found.enrolled));
  return {
    status: blocking.length > 0 || broken.length > 0 || plugin === "changed" || copilotOff.length > 0 ? "warn" : "pass",
    summary:
      blocking.length > 0
        ? "a managed Claude Code setting turns ThoughtGate's hook off"
        : broken.length > 0
          ? `${broken.map((found) => LABELS[found.agent]).join(", ")}: ThoughtGate's hook ${broken.map((found) => found.state).join(", ")}`
          : plugin === "changed"
            ? "opencode's enrolled plugin is changed"
            : copilotOff.length > 0
              ? "a Copilot CLI setting turns every hook off"
              : enrolledSummary(installations),
    details,
    data: { claudeCodeManaged: blocking.map((found) => ({ path: found.path, key: found.key })), hooks: installations.map(({ agent, path, enrolled, state }) => ({ agent, path, enrolled, state })) },
  };
}

const LABELS: Record<HookAgent, string> = { "claude-code": "Claude Code", codex: "Codex", gemini: "Gemini CLI" };
const EVENTS: Record<HookAgent, string> = { "claude-code": "PreToolUse", codex: "PreToolUse", gemini: "BeforeTool" };

function enrolledSummary(installations: readonly HookInstallation[]): string {
  const enrolled = installations.filter((found) => found.enrolled && found.state === "installed").map((found) => LABELS[found.agent]);
  return enrolled.length > 0 ? `hooks enrolled: ${enrolled.join(", ")}; the others under wrap` : "under wrap";
}

/** One line per agent: installed for good, given by each wrap only, or what is wrong and the fix. */
function hookLine(found: HookInstallation, ctx: AgentContext): string {
  const label = LABELS[found.agent];
  const path = shown(found.path, ctx);
  const again = `fix: \`thoughtgate enroll ${found.agent}\``;
  const plain = found.enrolled ? "plain runs are not governed" : "runs outside wrap are not governed by it";
  switch (found.state) {
    case "installed":
      return found.enrolled
        ? `${label}: ${EVENTS[found.agent]} hook enrolled in ${path}${found.agent === "codex" ? " (trusted)" : ""}: its own tools governed in every run`
        : `${label}: ${EVENTS[found.agent]} hook in ${path} (a wrap running, or put there by hand): its own tools governed while it is there`;
    case "missing":
      return found.enrolled
        ? `${label}: enrolled, but ThoughtGate's ${EVENTS[found.agent]} hook is missing from ${path}: ${plain}; ${again}`
        : `${label}: hook not installed: its own tools governed under \`thoughtgate wrap\` only (\`thoughtgate enroll ${found.agent}\` for every run)`;
    case "changed":
      return `${label}: ThoughtGate's ${EVENTS[found.agent]} hook in ${path} is changed (${found.how}): ${plain}; ${again} (and remove the changed entry)`;
    case "untrusted":
      return `${label}: ThoughtGate's PreToolUse hook in ${path} is not trusted (no [hooks.state."${found.key}"] trusted_hash for it in config.toml): Codex skips it without a word; ${again}`;
  }
}

function shown(path: string, ctx: AgentContext): string {
  return path.startsWith(`${ctx.home}/`) ? `~${path.slice(ctx.home.length)}` : path;
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
