/**
 * Copilot CLI's hook, in the user's `$COPILOT_HOME/settings.json` (`~/.copilot/settings.json`):
 * shared through the config guard (backup, journal, crash repair, byte-for-byte restore, sessions
 * side by side), the owned key `hooks.preToolUse`, ThoughtGate's entry first (agent-hooks.ts). A
 * wrap session holds it until the session ends; an enrollment until `unenroll`. A file that does
 * not exist or is not a JSON object is not created or replaced: the hook is not added, and the
 * caller says so.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { messageOf } from "../core/errors.ts";
import { projectDirs } from "../core/project.ts";
import type { AgentContext } from "./adapters/types.ts";
import { withCopilotHook } from "./agent-hooks.ts";
import { ConfigGuard, type ShareOutcome } from "./config-guard.ts";
import type { Holder } from "./journal.ts";

export function copilotSettingsPath(ctx: Pick<AgentContext, "env" | "home">): string {
  return join(ctx.env.COPILOT_HOME || join(ctx.home, ".copilot"), "settings.json");
}

/**
 * The settings files Copilot CLI reads that turn every hook off (`disableAllHooks: true`): the
 * user's, and a repository's `.github/copilot/settings.json` or `settings.local.json` from the
 * working directory up to the repository root, which Copilot honours in a folder it trusts
 * (measured: a trusted repository's file switched a user-level hook off). Wrap refuses to run
 * Copilot CLI where one is found: its own tools would run ungoverned.
 */
export function hooksTurnedOff(ctx: AgentContext): string[] {
  const files = [copilotSettingsPath(ctx), ...projectDirs(ctx.cwd, "cwd").flatMap((dir) => ["settings.json", "settings.local.json"].map((name) => join(dir, ".github", "copilot", name)))];
  return files.filter((path) => {
    try {
      const json: unknown = JSON.parse(readFileSync(path, "utf8"));
      return json !== null && typeof json === "object" && (json as Record<string, unknown>).disableAllHooks === true;
    } catch {
      return false;
    }
  });
}

/** Add the hook for `holder`; `keep`: the guard stays held past this process (enroll). */
export function shareCopilotHook(ctx: AgentContext, binary: string, holder: Holder, keep: boolean): { path: string; outcome: ShareOutcome; created: boolean } | { path: string; problem: string } {
  const path = copilotSettingsPath(ctx);
  // A settings file that does not exist yet is made for the hook (the guard removes it again on restore).
  let text: string | null = null;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return { path, problem: `cannot be read (${messageOf(error)})` };
  }
  const hooked = withCopilotHook(text ?? "{}\n", binary);
  if (hooked === null) return { path, problem: "is not a JSON object; ThoughtGate's hook was not added" };
  try {
    const guard = new ConfigGuard({ configPath: path, agentType: "copilot", holder });
    const outcome = guard.share(text ?? "", hooked);
    if (keep) guard.release();
    return { path, outcome, created: text === null };
  } catch (error) {
    return { path, problem: `${messageOf(error)}; ThoughtGate's hook was not added` };
  }
}
