import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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

/** The project's Claude settings files with a hook that answers `event`'s question (or that cannot be read), nearest first. */
export function answeringHookFiles(cwd: string, event: AnsweringHook): string[] {
  const found: string[] = [];
  for (const dir of projectDirs(resolve(cwd))) {
    for (const name of ["settings.json", "settings.local.json"]) {
      const path = join(dir, ".claude", name);
      if (answersPrompt(path, event)) found.push(path);
    }
  }
  return found;
}

function answersPrompt(path: string, event: AnsweringHook): boolean {
  const read = readRegularFile(path, { follow: true, maxBytes: 4 * 1024 * 1024 });
  if (!read.ok) return !read.missing;
  try {
    const settings = JSON.parse(read.bytes.toString("utf8")) as { hooks?: Record<string, unknown> } | null;
    return EVENTS[event].some((name) => {
      const hooks = settings?.hooks?.[name];
      return Array.isArray(hooks) ? hooks.length > 0 : hooks !== undefined;
    });
  } catch {
    return true;
  }
}

/** `cwd` and its parents up to the repository's root, or `cwd` alone outside a repository. */
function projectDirs(cwd: string): string[] {
  const dirs = [cwd];
  for (let dir = cwd; !existsSync(join(dir, ".git")); ) {
    const parent = dirname(dir);
    if (parent === dir) return [cwd];
    dirs.push(parent);
    dir = parent;
  }
  return dirs;
}
