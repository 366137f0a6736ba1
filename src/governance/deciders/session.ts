/**
 * Which wrap session a shim belongs to: the one function that answers it (docs/architecture.md,
 * "How a shim finds its session"). A config entry carries no session, so the answer comes from the
 * agent that started the shim:
 *
 * 1. `THOUGHTGATE_SESSION` in the shim's environment: wrap sets it on the agent it launches, and
 *    most agents pass their environment to the stdio servers they start. Set, it must name a
 *    session whose wrap still runs; anything else (a wrap that was killed, a value that is no run
 *    id) is an ended session, and the shim fails its governed calls closed, never governing on its
 *    own with a policy other than the session's.
 * 2. Otherwise the shim's ancestors: an agent that passes its servers no environment (Codex) still
 *    started them, so the wrap, or the agent it launched, is among their ancestors; wrap indexes
 *    both pids (wire/session.ts). Checked only when some wrap runs: an empty index costs one failed
 *    directory listing.
 * 3. Neither: no session. The shim governs on its own (the user's policy, its own audit).
 *
 * Paid once, when the shim starts.
 */
import { ancestorsOf } from "../../core/process-ancestry.ts";
import { isSameProcessRunning } from "../../core/process-identity.ts";
import type { Profile } from "../../core/profile.ts";
import { isSessionId, sessionPaths } from "../../core/session-file.ts";
import { indexedSessionPids, SESSION_ENV } from "../wire/session.ts";

export type Session = {
  /** The run id: the session's directory name, and the run id of its shims' events. */
  id: string;
  /** How the shim found it. */
  via: "environment" | "ancestry";
  dir: string;
  /** The session's record, and the file holding its shims' secret. */
  events: string;
  secretFile: string;
  /** The session's governance service. */
  endpoint: string;
  profile: Profile;
  /** The agent wrap launched, as given to wrap (argv), and its type. */
  agent: { type: string; command: string[] };
  /** wrap's working directory and its project root. */
  cwd: string;
  project: string;
  /** The thoughtgate the session runs, and the binary its shims are to run (its pin). */
  version: string;
  target: string;
  shim: string;
  /** The wrap process, so a shim can tell at once when it is gone. */
  wrap: { pid: number; startId: string | null };
};

export type SessionLookup =
  | { kind: "none" }
  | { kind: "joined"; session: Session }
  /** The shim was started in a session that is over (or never was): it must not govern on its own. */
  | { kind: "ended"; id: string; via: Session["via"]; why: string };

export async function findSession(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): Promise<SessionLookup> {
  const named = env[SESSION_ENV];
  if (named !== undefined) {
    const id = named.trim();
    if (!isSessionId(id)) return { kind: "ended", id: named, via: "environment", why: `$${SESSION_ENV} is ${JSON.stringify(named)}, which names no thoughtgate wrap session` };
    return (await open(id, "environment", null, sessionPaths(id, env))) ?? { kind: "none" };
  }
  const index = indexedSessionPids(env);
  if (index.size === 0) return { kind: "none" };
  for (const ancestor of ancestorsOf(pid)) {
    const indexed = index.get(ancestor);
    if (indexed === undefined) continue;
    const found = await open(indexed.runId, "ancestry", ancestor, sessionPaths(indexed.runId, env, indexed.dir));
    if (found) return found;
  }
  return { kind: "none" };
}

/**
 * The session `id`, or null when `ancestor` (found in the index) is not in fact its wrap or agent
 * (the pid was reused, or the index entry is left over).
 */
async function open(id: string, via: Session["via"], ancestor: number | null, paths: ReturnType<typeof sessionPaths>): Promise<SessionLookup | null> {
  // Loaded only here: a shim that belongs to no session never pays for the schema library.
  const { readSessionDescriptor } = await import("../../core/session-descriptor.ts");
  const read = readSessionDescriptor(paths.descriptor);
  if (!read.ok) return ancestor !== null ? null : { kind: "ended", id, via, why: `no thoughtgate wrap session ${id} can be read (${read.why})` };
  const d = read.descriptor;
  if (ancestor !== null) {
    const isWrap = d.pid === ancestor && isSameProcessRunning(d.pid, d.startId);
    const isAgent = d.agent?.pid === ancestor && isSameProcessRunning(ancestor, d.agent.startId);
    if (!isWrap && !isAgent) return null;
  }
  if (!isSameProcessRunning(d.pid, d.startId)) return { kind: "ended", id, via, why: `the thoughtgate wrap of session ${id} (pid ${d.pid}) has ended` };
  const { endpoint, profile, agent, cwd, project } = d;
  if (endpoint === undefined || profile === undefined || agent === undefined || cwd === undefined || project === undefined) {
    return { kind: "ended", id, via, why: `session ${id} runs thoughtgate ${d.version}, whose shims are named in the config; this shim cannot join it` };
  }
  const session: Session = {
    id,
    via,
    dir: paths.dir,
    events: paths.events,
    secretFile: paths.secret,
    endpoint,
    profile,
    agent: { type: agent.type, command: agent.command },
    cwd,
    project,
    version: d.version,
    target: d.target,
    shim: d.shim,
    wrap: { pid: d.pid, startId: d.startId },
  };
  return { kind: "joined", session };
}
