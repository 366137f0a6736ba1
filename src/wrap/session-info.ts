/**
 * A wrap session's descriptor (core/session-descriptor.ts), from wrap's side: written
 * when the session starts, before any shim can look for it, and again once the agent runs (with
 * its pid); read by `doctor` (which wraps run, on which version) and by the next wrap (which pinned
 * binaries are still in use). The wrap's pid, and then the agent's, are indexed so a shim whose
 * agent passes it no environment finds the session among its ancestors (wire/session-index.ts).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isSameProcessRunning, ownProcessStartId, processStartId } from "../core/process-identity.ts";
import type { Profile } from "../core/profile.ts";
import { projectRoot } from "../core/project.ts";
import { readSessionDescriptor, writeSessionDescriptor, type SessionDescriptor } from "../core/session-descriptor.ts";
import { sessionPaths, sessionsDir, SESSION_FILES } from "../core/session-file.ts";
import { indexSessionPid, pruneSessionPids } from "../governance/wire/session-index.ts";
import { prunePins, shimBinary } from "./shim-path.ts";
import { redactArgv } from "../telemetry/redact-argv.ts";
import { TARGET, VERSION } from "../version.ts";

export type SessionStart = {
  runId: string;
  endpoint: string;
  profile: Profile;
  agent: { type: string; command: string[] };
  cwd: string;
};

export type SessionInfo = {
  /** What the shims of this session run when theirs is another version (shim-path.ts: the session's pin). */
  shim: string;
  /** Record the agent's pid once it runs (so its shims find the session through their ancestry too). */
  agentStarted(pid: number): void;
  /** Record the servers the session's shims govern (core/session-descriptor.ts, `governedServers`). */
  serversGoverned(names: readonly string[]): void;
  /** Forget the pids: the session is over. Idempotent. */
  end(): void;
};

/**
 * Write the session's descriptor and index wrap's pid; the session's pin of this binary is
 * recorded before it is made, so another wrap pruning pins at the same moment keeps it.
 */
export function startSessionInfo(start: SessionStart, env: NodeJS.ProcessEnv = process.env): SessionInfo {
  const path = sessionPaths(start.runId, env).descriptor;
  const planned = shimBinary({ env, create: false });
  const agent = { type: start.agent.type, command: redactArgv(start.agent.command) };
  let descriptor: SessionDescriptor = {
    version: VERSION,
    target: TARGET,
    pid: process.pid,
    startId: ownProcessStartId(),
    binary: planned.source,
    shim: planned.path,
    startedAt: new Date().toISOString(),
    endpoint: start.endpoint,
    profile: start.profile,
    // The command line redacted before it is written: the descriptor is read back into every record.
    agent: { ...agent, pid: null, startId: null },
    cwd: start.cwd,
    project: projectRoot(start.cwd),
  };
  writeSessionDescriptor(path, descriptor);
  const pinned = shimBinary({ env });
  if (pinned.path !== planned.path) {
    descriptor = { ...descriptor, binary: pinned.source, shim: pinned.path };
    writeSessionDescriptor(path, descriptor);
  }
  let running: Array<SessionDescriptor & { runId: string }> | undefined;
  const live = () => (running ??= runningWraps(env));
  prunePins(() => new Set(live().map((session) => session.shim)), env);
  pruneSessionPids((runId) => live().some((session) => session.runId === runId), env);
  const dir = sessionPaths(start.runId, env).dir;
  const forget = [indexSessionPid(process.pid, dir, env)];
  return {
    shim: descriptor.shim,
    agentStarted(pid) {
      descriptor = { ...descriptor, agent: { ...agent, pid, startId: processStartId(pid) } };
      writeSessionDescriptor(path, descriptor);
      forget.push(indexSessionPid(pid, dir, env));
    },
    serversGoverned(names) {
      descriptor = { ...descriptor, governedServers: [...names] };
      writeSessionDescriptor(path, descriptor);
    },
    end() {
      for (const unindex of forget.splice(0)) unindex();
    },
  };
}

/** Sessions whose wrap is still running, each with its run id. */
export function runningWraps(env: NodeJS.ProcessEnv = process.env): Array<SessionDescriptor & { runId: string }> {
  const dir = sessionsDir(env);
  if (!existsSync(dir)) return [];
  const running: Array<SessionDescriptor & { runId: string }> = [];
  for (const runId of readdirSync(dir)) {
    // A session from before wrap.json existed, or not a session directory: skipped.
    if (!existsSync(join(dir, runId, SESSION_FILES.descriptor))) continue;
    const read = readSessionDescriptor(sessionPaths(runId, env).descriptor);
    if (read.ok && isSameProcessRunning(read.descriptor.pid, read.descriptor.startId)) running.push({ ...read.descriptor, runId });
  }
  return running;
}
