import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

// Replaced at build time by `build.ts` (`define`): a test builds a binary of its own with another
// directory, which nothing at run time (no variable, no argument, no file an entry names) can move.
declare const THOUGHTGATE_MACHINE_DIR: string | undefined;

/**
 * The machine's own ThoughtGate settings, written by the administrator or the managed setup (MDM):
 * `/etc/thoughtgate` (docs/team.md, "Setting it for every machine").
 */
export const MACHINE_DIR: string = typeof THOUGHTGATE_MACHINE_DIR === "string" ? THOUGHTGATE_MACHINE_DIR : "/etc/thoughtgate";

/**
 * Where ThoughtGate keeps its own files. XDG on Linux and macOS alike (a CLI's state is not an
 * app bundle's): `$XDG_STATE_HOME/thoughtgate` (default `~/.local/state/thoughtgate`) for session
 * records and the wrap journal, `$XDG_CONFIG_HOME/thoughtgate` for `thoughtgate.yaml`.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(absolute(env.XDG_STATE_HOME) ?? join(env.HOME || homedir(), ".local", "state"), "thoughtgate");
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(absolute(env.XDG_CONFIG_HOME) ?? join(env.HOME || homedir(), ".config"), "thoughtgate");
}

/** XDG Base Directory: "all paths set in these environment variables must be absolute"; a relative one is ignored. */
function absolute(path: string | undefined): string | undefined {
  return path && isAbsolute(path) ? path : undefined;
}

/** The wrap journal: which agent configs are rewritten, where their backups are, by which pid. */
export function journalPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "journal.json");
}
