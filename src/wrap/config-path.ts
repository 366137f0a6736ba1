/**
 * Which file a config path names, and when wrap may follow a symlink to it. The rule:
 *
 * - A config the user owns (user scope, Claude Code's local entries, `--config-path`) may be a
 *   symlink anywhere, as dotfile managers make them: wrap resolves it once (`realConfigPath`) and
 *   works on the real file from then on. The lock and the backup sit beside the real file, the
 *   journal records the real path, and the rewrite and the restore replace the real file, so the
 *   link stays a link and its target gets back its exact bytes.
 * - A project-scope config (`.mcp.json`, `.vscode/mcp.json`, …) lives in a directory a cloned
 *   repository controls. It may resolve only to a file inside that project directory (the
 *   working directory, or the parent directory the agent reads it from): a link out of the
 *   project is a problem of the file (`projectEscape`), and wrap leaves it alone.
 * - The files wrap owns (lock, backup, journal, temp files) are never followed at all
 *   (safe-open.ts), and once resolved, a config's real path is opened with O_NOFOLLOW: a symlink
 *   that appears there during a session is refused, not written through.
 */
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** The real file `path` names (symlinks resolved); the absolute path itself when it cannot be resolved (it does not exist). */
export function realConfigPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/**
 * Why a project-scope config must not be used: it resolves (through a symlink, of the file or of a
 * directory on its way) to a file outside the project directory it was found in. The project
 * directory is the nearest of `cwd` and its parents that holds `path`. Undefined when the file
 * stays inside, or does not resolve (then there is nothing to read either).
 */
export function projectEscape(path: string, cwd: string): string | undefined {
  const file = resolve(path);
  let project = resolve(cwd);
  while (!isInside(file, project) && dirname(project) !== project) project = dirname(project);
  let real: string;
  let realProject: string;
  try {
    real = realpathSync(file);
    realProject = realpathSync(project);
  } catch {
    return undefined;
  }
  if (isInside(real, realProject)) return undefined;
  return `resolves through a symbolic link to ${real}, outside the project directory ${project}`;
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
