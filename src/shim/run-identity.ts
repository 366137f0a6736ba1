import { join } from "node:path";
import { readProcCmdline } from "../core/proc-stat.ts";
import { projectRoot } from "../core/project.ts";
import { isSessionId, readSessionInfo, sessionsDir } from "../core/session-file.ts";
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

/**
 * The one answer to "which session is this shim in, and what agent and project": every caller asks
 * here, never re-derives it. A shim is in a session when the run id its environment names
 * (`$THOUGHTGATE_SESSION`, or the `$THOUGHTGATE_RUN_ID` wrap sets on each rewritten entry) has a
 * session folder with its `wrap.json`; that file says the agent's command and the project. A shim
 * in no session records the process that started it (its parent, on Linux) as the agent, and its
 * own working directory's project root (src/core/project.ts).
 */
export function runIdentity(options: { env: NodeJS.ProcessEnv; cwd: string; parentPid: number }): RunIdentity {
  const id = options.env.THOUGHTGATE_SESSION || options.env.THOUGHTGATE_RUN_ID;
  if (id && isSessionId(id)) {
    const info = readSessionInfo(join(sessionsDir(options.env), id));
    if (info) return { session: id, agentCommand: info.agentCommand ?? null, project: info.project ?? projectRoot(options.cwd) };
  }
  const parent = readProcCmdline(options.parentPid);
  return { session: null, agentCommand: parent ? redactArgv(parent) : null, project: projectRoot(options.cwd) };
}
