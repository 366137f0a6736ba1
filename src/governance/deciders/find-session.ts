/**
 * Which wrap session a shim belongs to: the one function that answers it (docs/architecture.md,
 * "How a shim finds its session"). A config entry carries no session, so the answer comes from the
 * agent that started the shim, looked up only in the user's own state directory (the one the shim
 * runs from, core/user-environment.ts: never one an entry's environment names), each directory and
 * file of it owned by this user and writable by no one else:
 *
 * 1. The shim's ancestors: wrap indexes its own pid and its agent's (wire/session-index.ts), so the wrap,
 *    or the agent it launched, is among the ancestors of every shim of its session, whatever
 *    environment the agent passes (Codex passes a short list) and whatever the entry sets. Checked
 *    only when some wrap runs: an empty index costs one failed directory listing.
 * 2. Otherwise `THOUGHTGATE_SESSION` in the shim's environment: wrap sets it on the agent it
 *    launches, and most agents pass their environment on. Set, it must name a session of the user's
 *    whose wrap still runs; anything else (a wrap that was killed, a value that is no run id, a
 *    session no wrap of the user's wrote) is an ended session, and the shim fails its governed calls
 *    closed, never governing on its own with a policy other than the session's.
 * 3. Neither: no session. The shim governs on its own (the user's policy, its own audit).
 *
 * Paid once, when the shim starts.
 */
import { lstatSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { messageOf } from "../../core/errors.ts";
import { stateDir } from "../../core/paths.ts";
import { ancestorsOf } from "../../core/process-ancestry.ts";
import { isSameProcessRunning } from "../../core/process-identity.ts";
import type { Profile } from "../../core/profile.ts";
import { isSessionId, sessionPaths } from "../../core/session-file.ts";
import { notOwnDirectory, notOwnFile } from "../../core/user-environment.ts";
import { indexedSessionPids, SESSION_ENV } from "../wire/session-index.ts";

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
  /** The MCP servers whose every entry runs through a shim of this session (core/session-descriptor.ts). */
  governedServers: string[];
};

export type SessionLookup =
  | { kind: "none" }
  | { kind: "joined"; session: Session }
  /** The shim was started in a session that is over (or never was): it must not govern on its own. */
  | { kind: "ended"; id: string; via: Session["via"]; why: string };

export async function findSession(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): Promise<SessionLookup> {
  const index = indexedSessionPids(env);
  if (index.size > 0) {
    for (const ancestor of ancestorsOf(pid)) {
      const indexed = index.get(ancestor);
      if (indexed === undefined) continue;
      const found = await open(indexed.runId, "ancestry", ancestor, sessionPaths(indexed.runId, env), env);
      if (found) return found;
    }
  }
  const named = env[SESSION_ENV];
  if (named === undefined) return { kind: "none" };
  const id = named.trim();
  if (!isSessionId(id)) return { kind: "ended", id: named, via: "environment", why: `$${SESSION_ENV} is ${JSON.stringify(named)}, which names no thoughtgate wrap session` };
  return (await open(id, "environment", null, sessionPaths(id, env), env)) ?? { kind: "none" };
}

/**
 * The session `id`, or null when `ancestor` (found in the index) is not in fact its wrap or agent
 * (the pid was reused, or the index entry is left over).
 */
async function open(id: string, via: Session["via"], ancestor: number | null, paths: ReturnType<typeof sessionPaths>, env: NodeJS.ProcessEnv): Promise<SessionLookup | null> {
  const untrusted = notTheUsers(paths, env);
  if (untrusted) return ancestor !== null ? null : { kind: "ended", id, via, why: `session ${id} is not one of this user's thoughtgate wrap sessions: ${untrusted}` };
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
    governedServers: d.governedServers ?? [],
  };
  return { kind: "joined", session };
}

/**
 * Why a session's files are not the user's own, or null: the state directory, its `sessions`, the
 * session's directory and its descriptor each owned by this user, writable by no one else, and no
 * symbolic link among them.
 */
function notTheUsers(paths: ReturnType<typeof sessionPaths>, env: NodeJS.ProcessEnv): string | null {
  for (const dir of [stateDir(env), dirname(paths.dir), paths.dir]) {
    const problem = notOwnDirectory(dir);
    // Nothing there is nothing to trust: reading the descriptor says it is missing.
    if (problem === "does not exist") return null;
    if (problem) return `${dir} ${problem}`;
  }
  let stat: Stats | undefined;
  try {
    stat = lstatSync(paths.descriptor, { throwIfNoEntry: false });
  } catch (error) {
    return `${paths.descriptor} cannot be looked at (${messageOf(error)})`;
  }
  if (!stat) return null;
  if (stat.isSymbolicLink()) return `${paths.descriptor} is a symbolic link`;
  const problem = notOwnFile(stat);
  return problem ? `${paths.descriptor} ${problem}` : null;
}
