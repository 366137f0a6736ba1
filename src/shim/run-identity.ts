import { readProcCmdline } from "../core/proc-stat.ts";
import { projectRoot } from "../core/project.ts";
import { redactArgv } from "../telemetry/redact-argv.ts";

/** Which session a shim's run belongs to, the agent that started it and its project (`run_start`, docs/events.md). */
export type RunIdentity = {
  /** The wrap session's id, or null for a shim that governs on its own. */
  session: string | null;
  /** The agent's command line, redacted; null when it cannot be known. */
  agentCommand: string[] | null;
  /** The project directory: the session's, else the shim's working directory's project root. */
  project: string;
};

/** What the session the shim joined says of itself (src/governance/deciders/find-session.ts finds it). */
export type JoinedSession = { id: string; agent: { command: string[] }; project: string };

/**
 * What a shim records of its run. A shim in a wrap session (found once, at its start, by
 * `findSession`: the one answer to "which session") records the session's agent and project; a
 * shim in no session records the process that started it (its parent, on Linux) as the agent, and
 * its own working directory's project root (src/core/project.ts).
 */
export function runIdentity(options: { session: JoinedSession | undefined; cwd: string; parentPid: number }): RunIdentity {
  const { session } = options;
  // wrap wrote the agent's command line redacted (src/wrap/session-info.ts).
  if (session) return { session: session.id, agentCommand: session.agent.command, project: session.project };
  const parent = readProcCmdline(options.parentPid);
  return { session: null, agentCommand: parent ? redactArgv(parent) : null, project: projectRoot(options.cwd) };
}
