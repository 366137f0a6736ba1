/**
 * A wrap session's descriptor, `<state dir>/sessions/<run id>/wrap.json`, written when the session
 * starts: which thoughtgate it runs (doctor, the next wrap keeping the binaries running wraps still
 * name) and what the session is (the agent's command line, redacted, and the project directory),
 * which its shims record in their `run_start` (docs/events.md). One schema for every reader: wrap,
 * doctor, and the shim finding its session. Fields added later are optional: an older session's
 * file still reads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { stateDir } from "./paths.ts";

export const SESSION_INFO_FILE = "wrap.json";

export const SessionInfo = v.object({
  version: v.string(),
  target: v.string(),
  pid: v.pipe(v.number(), v.integer()),
  /** processStartId of the wrap, so a reused pid is not mistaken for it. */
  startId: v.nullable(v.string()),
  /** The binary wrap ran as, and the one the agent configs name for the shims (shim-path.ts). */
  binary: v.string(),
  shim: v.string(),
  startedAt: v.string(),
  /** The agent's command line, redacted (src/telemetry/redact-argv.ts). */
  agentCommand: v.optional(v.array(v.string())),
  /** The project the agent was started in (src/core/project.ts). */
  project: v.optional(v.string()),
});
export type SessionInfo = v.InferOutput<typeof SessionInfo>;

/** Every wrap session's folder: `<state dir>/sessions`. */
export function sessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "sessions");
}

/** A session id names a folder: only what a run id (a UUID) is made of, so it cannot point elsewhere. */
export function isSessionId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes("..");
}

/** The session's descriptor, or null when there is none (not a session, or one from before wrap.json) or it does not parse. */
export function readSessionInfo(sessionDir: string): SessionInfo | null {
  let text: string;
  try {
    text = readFileSync(join(sessionDir, SESSION_INFO_FILE), "utf8");
  } catch {
    return null;
  }
  try {
    const parsed = v.safeParse(SessionInfo, JSON.parse(text));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}
