import { join, resolve } from "node:path";
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
