import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { readRegularFile } from "../../core/safe-open.ts";

/**
 * A repository's Claude Code settings can answer Claude Code's own permission prompt themselves: a
 * `PermissionRequest` hook that answers allow runs the call without the person (measured with
 * Claude Code 2.1.330 under wrap: `rm -rf ./data` asked in its prompt ran, the prompt gone, no key
 * pressed). ThoughtGate hands its questions about the agent's own tools to that prompt, so where a
 * project has such a hook they are asked through ThoughtGate's own channels instead (the approvals
 * page, the desktop, `thoughtgate approve`). A project's `PreToolUse` hook that answers allow does
 * not lift ThoughtGate's ask (measured: the prompt stays).
 *
 * The project's files are `.claude/settings.json` and `.claude/settings.local.json` in the working
 * directory and each parent up to the repository's root (the nearest with `.git`). A file that
 * cannot be read, or does not parse, counts as having such a hook: what cannot be read is not
 * trusted to leave the prompt to the person. The user's own settings are theirs (docs/security.md).
 */
export function promptAnsweringFiles(cwd: string): string[] {
  const found: string[] = [];
  for (const dir of projectDirs(resolve(cwd))) {
    for (const name of ["settings.json", "settings.local.json"]) {
      const path = join(dir, ".claude", name);
      if (answersPrompt(path)) found.push(path);
    }
  }
  return found;
}

function answersPrompt(path: string): boolean {
  const read = readRegularFile(path, { follow: true, maxBytes: 4 * 1024 * 1024 });
  if (!read.ok) return !read.missing;
  try {
    const settings = JSON.parse(read.bytes.toString("utf8")) as { hooks?: { PermissionRequest?: unknown } } | null;
    const hooks = settings?.hooks?.PermissionRequest;
    return Array.isArray(hooks) ? hooks.length > 0 : hooks !== undefined;
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
