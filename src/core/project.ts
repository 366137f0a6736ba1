import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/**
 * Where a call is made from, as rules and Cedar see it (docs/governance.md, "Rules that see
 * arguments"): `${PROJECT}`, `${CWD}` and `${HOME}` in a rule, `project:` of a rule, and Cedar's
 * `context.project` / `context.cwd`. Every path is absolute, with links resolved.
 */
export type Place = { project: string; cwd: string; home: string };

/**
 * The project root the agent was started in: the nearest ancestor of `dir` (itself included)
 * holding `.git` (a directory, or the file a worktree or submodule has), else `dir` itself. Links
 * are resolved first, so the same project reached through a link is the same project.
 */
export function projectRoot(dir: string): string {
  const start = realPath(resolve(dir));
  for (let current = start; ; current = dirname(current)) {
    if (existsSync(join(current, ".git"))) return current;
    if (dirname(current) === current) return start;
  }
}

/**
 * The place of a process working in `cwd`. `project` is given when something else knows it better
 * (a wrap session's project is the one wrap was started in); otherwise it is `cwd`'s project root.
 * `${HOME}` is the user's home directory, never anything a policy file says.
 */
export function placeOf(cwd: string, project?: string): Place {
  const here = realPath(resolve(cwd));
  return { cwd: here, project: project === undefined ? projectRoot(here) : realPath(resolve(project)), home: realPath(homedir()) };
}

/** The path with every link resolved; a path that does not exist (yet) keeps its lexical form. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** `dir` and each of its parents up to the root, nearest first. */
export function selfAndParents(dir: string): string[] {
  const dirs = [dir];
  for (let parent = dirname(dir); parent !== dirs.at(-1); parent = dirname(parent)) dirs.push(parent);
  return dirs;
}

/**
 * The directories whose project config an agent reads: the working directory and its parents up
 * to the repository root (the nearest one holding `.git`), nearest first. Outside a repository,
 * `outside` says what the agent does: only the working directory (Codex, Copilot, Amp) or every
 * parent up to the root (opencode).
 */
export function projectDirs(cwd: string, outside: "cwd" | "all"): string[] {
  const dirs = selfAndParents(resolve(cwd));
  const root = dirs.findIndex((dir) => existsSync(join(dir, ".git")));
  if (root >= 0) return dirs.slice(0, root + 1);
  return outside === "cwd" ? dirs.slice(0, 1) : dirs;
}
