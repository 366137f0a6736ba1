import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where ThoughtGate keeps its own files. XDG on Linux and macOS alike (a CLI's state is not an
 * app bundle's): `$XDG_STATE_HOME/thoughtgate` (default `~/.local/state/thoughtgate`) for session
 * records and the wrap journal, `$XDG_CONFIG_HOME/thoughtgate` for `thoughtgate.yaml`.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "thoughtgate");
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "thoughtgate");
}

/** The wrap journal: which agent configs are rewritten, where their backups are, by which pid. */
export function journalPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "journal.json");
}
