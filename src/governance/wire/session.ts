/**
 * Where a `thoughtgate wrap` session lives, and how the shims it governs find it (docs/architecture.md,
 * "How a shim finds its session"). A config entry names a server, never a session: the session
 * travels with the agent instead, as `THOUGHTGATE_SESSION=<run id>` in the environment wrap gives
 * it, and, for an agent that passes its servers none of its environment, as the wrap process (and
 * the agent's) pid in a small index a shim checks its ancestors against.
 *
 * `<state dir>/sessions/<run id>/`: `wrap.json` (the descriptor: session-descriptor.ts), `secret`
 * (the shims' session secret, 0600), `events.jsonl` (the session's record).
 * `<state dir>/session-pids/<pid>`: the run id of the session whose wrap or agent has that pid.
 *
 * No valibot here: a shim that belongs to no session reads nothing more than this file's one
 * directory listing.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { bestEffort } from "../../core/errors.ts";
import { writeFileAtomic } from "../../core/atomic-write.ts";
import { stateDir } from "../../core/paths.ts";

/** The variable wrap sets on the agent it launches: the run id of its session. */
export const SESSION_ENV = "THOUGHTGATE_SESSION";

export const SESSION_FILES = { descriptor: "wrap.json", secret: "secret", events: "events.jsonl" } as const;

/** A run id as wrap makes it (a UUID, lower-case): nothing else names a session directory. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isSessionId(text: string): boolean {
  return SESSION_ID.test(text);
}

export function sessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "sessions");
}

/** A session's directory and the files in it. */
export function sessionPaths(runId: string, env: NodeJS.ProcessEnv = process.env): { dir: string; descriptor: string; secret: string; events: string } {
  const dir = join(sessionsDir(env), runId);
  return { dir, descriptor: join(dir, SESSION_FILES.descriptor), secret: join(dir, SESSION_FILES.secret), events: join(dir, SESSION_FILES.events) };
}

function pidIndexDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), "session-pids");
}

/** Record that `pid` (a wrap, or the agent it launched) belongs to session `runId`; the returned function forgets it. */
export function indexSessionPid(pid: number, runId: string, env: NodeJS.ProcessEnv = process.env): () => void {
  const dir = pidIndexDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, String(pid));
  writeFileAtomic(path, `${runId}\n`, { mode: 0o600 });
  return () => void bestEffort(() => rmSync(path, { force: true }));
}

/**
 * The indexed pids and their run ids: empty (one failed directory listing) when no wrap runs. An
 * entry may be stale (its wrap was killed): the descriptor's pids and start stamps decide.
 */
export function indexedSessionPids(env: NodeJS.ProcessEnv = process.env): Map<number, string> {
  const found = new Map<number, string>();
  let names: string[];
  try {
    names = readdirSync(pidIndexDir(env));
  } catch {
    return found;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let runId = "";
    // Removed by its wrap while we looked: not a session any more.
    bestEffort(() => (runId = readFileSync(join(pidIndexDir(env), name), "utf8").trim()));
    if (isSessionId(runId)) found.set(Number(name), runId);
  }
  return found;
}

/** Remove index entries of sessions `isLive` says are over (what a killed wrap left). */
export function pruneSessionPids(isLive: (runId: string) => boolean, env: NodeJS.ProcessEnv = process.env): void {
  for (const [pid, runId] of indexedSessionPids(env)) {
    if (!isLive(runId)) bestEffort(() => rmSync(join(pidIndexDir(env), String(pid)), { force: true }));
  }
}
