/**
 * Where a `thoughtgate wrap` session lives, and how the shims it governs find it (docs/architecture.md,
 * "How a shim finds its session"). A config entry names a server, never a session: the session
 * travels with the agent instead, as `THOUGHTGATE_SESSION=<run id>` in the environment wrap gives
 * it, and, for an agent that passes its servers none of its environment, as the wrap process (and
 * the agent's) pid in a small index a shim checks its ancestors against.
 *
 * The session's directory and its files: core/session-file.ts.
 * `<state dir>/session-pids/<pid>`: the directory of the session whose wrap or agent has that pid.
 * A shim finds the state directory from its own binary, not from the environment its agent gives
 * it (core/user-environment.ts), so an agent that passes its servers only a few variables (Codex)
 * or an entry that sets them moves nothing. Only the user's own index is read: the directory and
 * each entry owned by this uid and writable by no one else, naming a session in the same state
 * directory.
 *
 * No valibot here: a shim that belongs to no session reads nothing more than this file's one
 * directory listing.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bestEffort } from "../../core/errors.ts";
import { writeFileAtomic } from "../../core/atomic-write.ts";
import { stateDir } from "../../core/paths.ts";
import { readRegularFile } from "../../core/safe-open.ts";
import { isSessionId, sessionsDir } from "../../core/session-file.ts";
import { notOwnDirectory, notOwnFile } from "../../core/user-environment.ts";

/** The variable wrap sets on the agent it launches: the run id of its session. */
export const SESSION_ENV = "THOUGHTGATE_SESSION";

function pidIndexDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), "session-pids");
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
  const index = pidIndexDir(env);
  let names: string[];
  try {
    names = readdirSync(index);
  } catch {
    return found;
  }
  if (notOwnDirectory(index) !== null) return found;
  const sessions = sessionsDir(env);
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    // Removed by its wrap while we looked (missing), or not the user's own: not a session.
    const read = readRegularFile(join(index, name), { follow: false, maxBytes: 4096 });
    if (!read.ok || notOwnFile(read.stat) !== null) continue;
    const dir = read.bytes.toString("utf8").trim();
    const runId = dir.slice(sessions.length + 1);
    if (dir === join(sessions, runId) && isSessionId(runId)) found.set(Number(name), { runId, dir });
  }
  return found;
}

/** Remove index entries of sessions `isLive` says are over (what a killed wrap left). */
export function pruneSessionPids(isLive: (runId: string) => boolean, env: NodeJS.ProcessEnv = process.env): void {
  for (const [pid, { runId }] of indexedSessionPids(env)) {
    if (!isLive(runId)) bestEffort(() => rmSync(join(pidIndexDir(env), String(pid)), { force: true }));
  }
}
