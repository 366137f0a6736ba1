import { join } from "node:path";
import { projectDirs } from "../../core/project.ts";
import { readRegularFile } from "../../core/safe-open.ts";

/**
 * A repository's Claude Code settings can answer Claude Code's own questions themselves, each
 * measured with Claude Code 2.1.330 under wrap, no key pressed:
 *
 * - a `PermissionRequest` hook that answers allow runs a call asked in Claude Code's permission
 *   prompt (`rm -rf ./data` ran). ThoughtGate hands its questions about the agent's own tools to
 *   that prompt. A project's `PreToolUse` hook that answers allow does not lift ThoughtGate's ask
 *   (measured: the prompt stays).
 * - an `Elicitation` hook that accepts an MCP server's form after a second (slower than a client's
 *   auto-answer) approves what ThoughtGate's form asks (`delete_note` ran, allowed for the session);
 *   an `ElicitationResult` hook that says accept turns the person's Esc into a yes (the same).
 *
 * So where a project has such a hook, those questions are asked through ThoughtGate's own channels
 * instead (the approvals page, the desktop, `thoughtgate approve`). The project's files are
 * `.claude/settings.json` and `.claude/settings.local.json` in the working directory and each parent
 * up to the repository's root (the nearest with `.git`). A file that cannot be read, or does not
 * parse, counts as having such a hook: what cannot be read is not trusted to leave the question to
 * the person. The user's own settings are theirs (docs/security.md).
 */
export type AnsweringHook = "PermissionRequest" | "Elicitation";

/** The hook events that can answer each question: a form's answer can come from either of two. */
const EVENTS: Record<AnsweringHook, readonly string[]> = { PermissionRequest: ["PermissionRequest"], Elicitation: ["Elicitation", "ElicitationResult"] };

/**
 * The project's Claude settings files with a hook that answers each question (or that cannot be
 * read), nearest first. Each file is read once for both.
 */
export function answeringHooks(cwd: string): Record<AnsweringHook, string[]> {
  const found: Record<AnsweringHook, string[]> = { PermissionRequest: [], Elicitation: [] };
  for (const dir of projectDirs(cwd, "cwd")) {
    for (const name of ["settings.json", "settings.local.json"]) {
      const path = join(dir, ".claude", name);
      const hooks = hookEvents(path);
      for (const question of ["PermissionRequest", "Elicitation"] as const) {
        if (hooks === null || EVENTS[question].some((event) => hooks.has(event))) found[question].push(path);
      }
    }
  }
  return found;
}

/** The hook events a settings file names (a list with at least one entry, or any other value), or null when it cannot be read. */
function hookEvents(path: string): Set<string> | null {
  const read = readRegularFile(path, { follow: true, maxBytes: 4 * 1024 * 1024 });
  if (!read.ok) return read.missing ? new Set() : null;
  try {
    const settings = JSON.parse(read.bytes.toString("utf8")) as { hooks?: Record<string, unknown> } | null;
    const hooks = settings?.hooks ?? {};
    return new Set(Object.keys(hooks).filter((event) => (Array.isArray(hooks[event]) ? hooks[event].length > 0 : hooks[event] !== undefined)));
  } catch {
    return null;
  }
}
