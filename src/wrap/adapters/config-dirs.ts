import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { AgentContext, DiscoverOptions } from "./types.ts";

/** Where agents keep their config files: the user's directories, and a project's up to its repository root. */

/** `--config-path`, relative to the working directory. */
export function customPath(ctx: AgentContext, options: DiscoverOptions): string | undefined {
  return options.configPath === undefined ? undefined : resolve(ctx.cwd, options.configPath);
}

/** `$XDG_CONFIG_HOME` or `~/.config`. */
export function xdgConfigHome(ctx: AgentContext): string {
  return ctx.env.XDG_CONFIG_HOME || join(ctx.home, ".config");
}

/** Where desktop (Electron) apps keep their files: Application Support on macOS, XDG on Linux. */
export function appDataDir(ctx: AgentContext): string {
  return ctx.platform === "darwin" ? join(ctx.home, "Library", "Application Support") : xdgConfigHome(ctx);
}

/**
 * What `read` returns, or undefined when it throws: for looking at something the agent may not
 * have (a directory, a link, a JSON file it ignores when it cannot read it).
 */
export function ifReadable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
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
