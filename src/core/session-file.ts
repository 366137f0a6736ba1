/**
 * Where a `thoughtgate wrap` session keeps its files: `<state dir>/sessions/<run id>/` holds
 * `wrap.json` (the descriptor: session-descriptor.ts), `secret` (the shims' session secret, 0600)
 * and `events.jsonl` (the session's record). Read by the shims that join the session
 * (governance/wire/session-index.ts), by wrap and doctor, and by `thoughtgate log` walking the record.
 *
 * No valibot here: a shim that belongs to no session reads nothing more than one directory listing.
 */
import { join } from "node:path";
import { stateDir } from "./paths.ts";

export const SESSION_FILES = { descriptor: "wrap.json", secret: "secret", events: "events.jsonl" } as const;

/** A run id as wrap makes it (a UUID, lower-case): nothing else names a session directory, so none can point elsewhere. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isSessionId(text: string): boolean {
  return SESSION_ID.test(text);
}

/** Every wrap session's folder: `<state dir>/sessions`. */
export function sessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "sessions");
}

/** A session's directory (by default the one under this environment's state directory) and the files in it. */
export function sessionPaths(runId: string, env: NodeJS.ProcessEnv = process.env, dir: string = join(sessionsDir(env), runId)): { dir: string; descriptor: string; secret: string; events: string } {
  return { dir, descriptor: join(dir, SESSION_FILES.descriptor), secret: join(dir, SESSION_FILES.secret), events: join(dir, SESSION_FILES.events) };
}
