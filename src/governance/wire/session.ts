/**
 * Where a `thoughtgate wrap` session lives, and how the shims it governs find it (docs/architecture.md,
 * "How a shim finds its session"). A config entry names a server, never a session: the session
 * travels with the agent instead, as `THOUGHTGATE_SESSION=<run id>` in the environment wrap gives
 * it, and, for an agent that passes its servers none of its environment, as the wrap process (and
 * the agent's) pid in a small index a shim checks its ancestors against.
 *
 * The session's directory and its files: core/session-file.ts.
 * `~/.local/state/thoughtgate/session-pids/<pid>`: the directory of the session whose wrap or agent
 * has that pid. Under the home directory whatever `XDG_STATE_HOME` says: an agent that passes its
 * servers only a few variables (Codex) passes HOME but not XDG_STATE_HOME.
 *
 * No valibot here: a shim that belongs to no session reads nothing more than this file's one
 * directory listing.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import { bestEffort } from "../../core/errors.ts";
import { writeFileAtomic } from "../../core/atomic-write.ts";
import { isSessionId } from "../../core/session-file.ts";

/** The variable wrap sets on the agent it launches: the run id of its session. */
export const SESSION_ENV = "THOUGHTGATE_SESSION";

function pidIndexDir(env: NodeJS.ProcessEnv): string {
  return join(env.HOME || homedir(), ".local", "state", "thoughtgate", "session-pids");
}

/** Record that `pid` (a wrap, or the agent it launched) belongs to the session in `sessionDir`; the returned function forgets it. */
export function indexSessionPid(pid: number, sessionDir: string, env: NodeJS.ProcessEnv = process.env): () => void {
  const dir = pidIndexDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, String(pid));
  writeFileAtomic(path, `${sessionDir}\n`, { mode: 0o600 });
  return () => void bestEffort(() => rmSync(path, { force: true }));
}

/**
 * The indexed pids and their sessions' directories: empty (one failed directory listing) when no
 * wrap runs. An entry may be stale (its wrap was killed): the descriptor's pids and start stamps decide.
 */
export function indexedSessionPids(env: NodeJS.ProcessEnv = process.env): Map<number, { runId: string; dir: string }> {
  const found = new Map<number, { runId: string; dir: string }>();
  let names: string[];
  try {
    names = readdirSync(pidIndexDir(env));
  } catch {
    return found;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let dir = "";
    // Removed by its wrap while we looked: not a session any more.
    bestEffort(() => (dir = readFileSync(join(pidIndexDir(env), name), "utf8").trim()));
    if (isAbsolute(dir) && isSessionId(basename(dir))) found.set(Number(name), { runId: basename(dir), dir });
  }
  return found;
}

/** Remove index entries of sessions `isLive` says are over (what a killed wrap left). */
export function pruneSessionPids(isLive: (runId: string) => boolean, env: NodeJS.ProcessEnv = process.env): void {
  for (const [pid, { runId }] of indexedSessionPids(env)) {
    if (!isLive(runId)) bestEffort(() => rmSync(join(pidIndexDir(env), String(pid)), { force: true }));
  }
}
