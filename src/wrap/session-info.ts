/**
 * Which thoughtgate a wrap session runs: `<state dir>/sessions/<run id>/wrap.json`, written when the
 * session starts. `doctor` reads it to tell that the installed binary is not the one a running
 * wrap (and so every shim it starts) uses, after an upgrade mid-session; the next wrap reads it to
 * keep the binaries running wraps still name.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { stateDir } from "../core/paths.ts";
import { isSameProcessRunning, ownProcessStartId } from "./process-identity.ts";
import { prunePins, shimBinary } from "./shim-path.ts";
import { TARGET, VERSION } from "../version.ts";

export const SESSION_INFO_FILE = "wrap.json";

const SessionInfo = v.object({
  version: v.string(),
  target: v.string(),
  pid: v.pipe(v.number(), v.integer()),
  /** processStartId of the wrap, so a reused pid is not mistaken for it. */
  startId: v.nullable(v.string()),
  /** The binary wrap ran as, and the one the agent configs name for the shims (shim-path.ts). */
  binary: v.string(),
  shim: v.string(),
  startedAt: v.string(),
});
export type SessionInfo = v.InferOutput<typeof SessionInfo>;

export function writeSessionInfo(sessionDir: string, paths: { binary: string; shim: string }): SessionInfo {
  const info: SessionInfo = { version: VERSION, target: TARGET, pid: process.pid, startId: ownProcessStartId(), ...paths, startedAt: new Date().toISOString() };
  writeFileSync(join(sessionDir, SESSION_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  return info;
}

/** Sessions whose wrap is still running, each with its run id. */
export function runningWraps(env: NodeJS.ProcessEnv = process.env): Array<SessionInfo & { runId: string }> {
  const sessions = join(stateDir(env), "sessions");
  if (!existsSync(sessions)) return [];
  const running: Array<SessionInfo & { runId: string }> = [];
  for (const runId of readdirSync(sessions)) {
    let parsed: v.SafeParseResult<typeof SessionInfo>;
    try {
      parsed = v.safeParse(SessionInfo, JSON.parse(readFileSync(join(sessions, runId, SESSION_INFO_FILE), "utf8")));
    } catch {
      // A session from before wrap.json existed, or not a session directory.
      continue;
    }
    if (parsed.success && isSameProcessRunning(parsed.output.pid, parsed.output.startId)) running.push({ ...parsed.output, runId });
  }
  return running;
}

/**
 * Record this session in `sessionDir` and return the path the agent configs are to name for the
 * shims: the session's pin (shim-path.ts), recorded before it is made so that another wrap pruning
 * pins at the same moment keeps it. Pins no running wrap names are removed.
 */
export function recordSessionBinary(sessionDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const planned = shimBinary({ env, create: false });
  writeSessionInfo(sessionDir, { binary: planned.source, shim: planned.path });
  const shim = shimBinary({ env });
  if (shim.path !== planned.path) writeSessionInfo(sessionDir, { binary: shim.source, shim: shim.path });
  prunePins(() => new Set(runningWraps(env).map((session) => session.shim)), env);
  return shim.path;
}
