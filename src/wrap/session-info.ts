/**
 * Which thoughtgate a wrap session runs: `<state dir>/sessions/<run id>/wrap.json`, written when the
 * session starts. `doctor` reads it to tell that the installed binary is not the one a running
 * wrap (and so every shim it starts) uses, after an upgrade mid-session; the next wrap reads it to
 * keep the binaries running wraps still name.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readSessionInfo, SESSION_INFO_FILE, sessionsDir, type SessionInfo } from "../core/session-file.ts";
import { isSameProcessRunning, ownProcessStartId } from "./process-identity.ts";
import { prunePins, shimBinary } from "./shim-path.ts";
import { TARGET, VERSION } from "../version.ts";

export { SESSION_INFO_FILE, type SessionInfo };

/** What the session is: the agent's command line (redacted) and its project, for the shims' `run_start`. */
export type SessionIdentity = { agentCommand: string[]; project: string };

export function writeSessionInfo(sessionDir: string, paths: { binary: string; shim: string }, identity?: SessionIdentity): SessionInfo {
  const info: SessionInfo = { version: VERSION, target: TARGET, pid: process.pid, startId: ownProcessStartId(), ...paths, startedAt: new Date().toISOString(), ...identity };
  writeFileSync(join(sessionDir, SESSION_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  return info;
}

/** Sessions whose wrap is still running, each with its run id. */
export function runningWraps(env: NodeJS.ProcessEnv = process.env): Array<SessionInfo & { runId: string }> {
  const sessions = sessionsDir(env);
  if (!existsSync(sessions)) return [];
  const running: Array<SessionInfo & { runId: string }> = [];
  for (const runId of readdirSync(sessions)) {
    // null: a session from before wrap.json existed, or not a session directory.
    const info = readSessionInfo(join(sessions, runId));
    if (info && isSameProcessRunning(info.pid, info.startId)) running.push({ ...info, runId });
  }
  return running;
}

/**
 * Record this session in `sessionDir` and return the path the agent configs are to name for the
 * shims: the session's pin (shim-path.ts), recorded before it is made so that another wrap pruning
 * pins at the same moment keeps it. Pins no running wrap names are removed.
 */
export function recordSessionBinary(sessionDir: string, identity: SessionIdentity, env: NodeJS.ProcessEnv = process.env): string {
  const planned = shimBinary({ env, create: false });
  writeSessionInfo(sessionDir, { binary: planned.source, shim: planned.path }, identity);
  const shim = shimBinary({ env });
  if (shim.path !== planned.path) writeSessionInfo(sessionDir, { binary: shim.source, shim: shim.path }, identity);
  prunePins(() => new Set(runningWraps(env).map((session) => session.shim)), env);
  return shim.path;
}
