import { taggedLog } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { EventStream } from "../telemetry/events.ts";
import { VERSION } from "../version.ts";
import type { Decider } from "../governance/verdict/decider.ts";
import type { Tracer } from "../telemetry/tracing/tracer.ts";
import { SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS } from "../stdio/server-process.ts";
import { collectWhenIdle } from "../core/idle-collector.ts";
import { startIdField } from "../core/process-identity.ts";
import { Router } from "./router.ts";
import { StdioAgent, type AgentSide } from "./stdio-agent.ts";
import type { Upstream } from "./upstream.ts";
import type { RunIdentity } from "./run-identity.ts";

export { MAX_PENDING_DECISIONS, SENDER_UNREAD_LIMIT_BYTES } from "./pump.ts";
export const ORPHAN_TIMEOUT_MS = 300_000;

export type ShimOptions = {
  serverId: string;
  profile: Profile;
  /** The server: a child on stdio (`StdioUpstream`) or a remote one (`HttpUpstream`). */
  upstream: Upstream;
  /** The agent: on our stdio unless given (`shim --listen`). */
  agent?: (onGone: (reason: string) => void) => AgentSide;
  runId: string;
  /** Which session, agent and project this run is (run-identity.ts), for `run_start`. */
  identity?: RunIdentity;
  eventsPath: string | null;
  decider: Decider;
  orphanTimeoutMs?: number;
  stdinCloseGraceMs?: number;
  sigtermGraceMs?: number;
  /** Tracing on (docs/governance.md, "Traces"): where this shim's spans go. */
  tracer?: Tracer;
};

/** At exit, how long the spans still queued may take to leave before they are dropped. */
const TRACE_FLUSH_MS = 1_000;

type StopReason = "agent_eof" | "signal" | "server_exit" | "agent_gone" | "governance";

/**
 * `thoughtgate shim`: proxy JSON-RPC between the agent and the MCP server, judging every message
 * on the way. Resolves with the exit code.
 */
export async function runShim(options: ShimOptions): Promise<number> {
  const serverLog = taggedLog(options.serverId);
  const { upstream } = options;
  const events = EventStream.open(options.eventsPath, {
    run_id: options.runId,
    server_id: options.serverId,
    profile: options.profile,
  });
  events.emit("run_start", {
    started_at: new Date().toISOString(),
    pid: process.pid,
    ...startIdField(),
    server_command: upstream.command,
    ...(upstream.url === undefined ? {} : { server_url: upstream.url }),
    policy: options.decider.policy,
    version: VERSION,
    ...(options.identity?.agentCommand ? { agent_command: options.identity.agentCommand } : {}),
    ...(options.identity ? { project: options.identity.project } : {}),
  });

  const tracing = options.tracer?.on ? await startTracing(options, options.tracer) : null;

  let stopWith: (reason: StopReason) => void = () => {};
  const stopped = new Promise<StopReason>((resolve) => {
    stopWith = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    serverLog.info(`${signal}: shutting down`);
    stopWith("signal");
    // Also when already stopping (agent EOF first): whoever signals us may SIGKILL us next.
    upstream.hurry();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  const onAgentGone = (reason: string) => {
    serverLog.warn(`agent stopped reading (${reason}): shutting down`);
    stopWith("agent_gone");
  };
  const agent = options.agent ? options.agent(onAgentGone) : new StdioAgent(options.serverId, onAgentGone);
  const opened = upstream.open();
  const toServer = "sink" in opened ? opened.sink : null;
  const router = new Router({
    serverId: options.serverId,
    profile: options.profile,
    decider: options.decider,
    events,
    toAgent: agent.sink,
    toServer,
    serverCommand: upstream.command,
    serverUrl: upstream.url,
    trace: tracing?.calls,
  });

  if (options.decider.attachCounts) {
    router.audit.counting = true;
    options.decider.attachCounts(() => ({ messages: router.audit.messageCounts, framingErrors: router.audit.framingErrorCounts }));
  }
  void options.decider.stopRequested?.then((why) => {
    serverLog.info(`${why}: shutting down`);
    stopWith("governance");
  });

  if ("sink" in opened) {
    events.emit("server_state", opened.state);
    options.decider.serverState?.("running");
  } else {
    // A server that cannot start: stay up and answer every request with the reason instead of vanishing.
    serverLog.error(opened.error);
    events.emit("server_state", { state: "failed_to_start", detail: opened.error });
    options.decider.serverState?.("failed");
    router.serverGone(`it failed to start: ${opened.error}`);
  }

  const orphanTimeoutMs = options.orphanTimeoutMs ?? ORPHAN_TIMEOUT_MS;
  const orphanTimer = setInterval(
    () => router.reportOrphans(performance.now(), orphanTimeoutMs),
    Math.max(10, Math.min(1_000, orphanTimeoutMs / 2)),
  );
  orphanTimer.unref();
  const stopCollecting = collectWhenIdle(() => router.summary.messages_agent_to_server + router.summary.messages_server_to_agent);

  const agentPump = agent.pump((unit) => router.fromAgent(unit), toServer, router).then(() => stopWith("agent_eof"));
  if (toServer) {
    void upstream
      .pump((unit) => router.fromServer(unit), agent.sink)
      .then((why) => {
        router.serverGone(why);
        stopWith("server_exit");
      });
  }

  const reason = await stopped;
  serverLog.debug(`stopping: ${reason}`);
  // Stop accepting new agent messages; what the server still sends is delivered until it stops.
  if (reason === "signal" || reason === "agent_gone" || reason === "governance") agent.stopReading();

  let exitCode = 1;
  if (toServer) {
    const stoppedServer = await upstream.stop({
      stdinCloseMs: options.stdinCloseGraceMs ?? STDIN_CLOSE_GRACE_MS,
      sigtermMs: options.sigtermGraceMs ?? SIGTERM_GRACE_MS,
    });
    exitCode = stoppedServer.exitCode;
    events.emit("server_state", stoppedServer.state);
    // Failed: it died on its own with an error; stopped by the shim (even by a signal), it exited.
    const diedBadly = (stoppedServer.state.exit_code ?? 0) !== 0 || (stoppedServer.state.signal ?? null) !== null;
    options.decider.serverState?.(reason === "server_exit" && diedBadly ? "failed" : "exited");
  } else if (reason === "agent_eof") {
    await agentPump;
  }
  router.serverGone("the shim is shutting down");
  if (tracing) {
    tracing.session.end();
    // Before the decider closes: a wrap session's shim hands its spans to the governance service.
    await tracing.tracer.close(TRACE_FLUSH_MS);
  }
  await options.decider.close?.();
  clearInterval(orphanTimer);
  stopCollecting();
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);

  router.summary.events_dropped = events.dropped;
  events.emit("run_end", {
    ended_at: new Date().toISOString(),
    status: toServer ? (reason === "server_exit" ? "server_exited" : "ok") : "server_failed",
    pid: process.pid,
    exit_code: exitCode,
    summary: router.summary,
  });
  await agent.close();
  await events.close();
  return exitCode;
}

/** The shim's session span (the parent of its requests' spans) and the per-request tracer, loaded only now. */
async function startTracing(options: ShimOptions, tracer: Tracer) {
  const { CallTracer } = await import("./call-trace.ts");
  const remote = options.upstream.url === undefined ? null : new URL(options.upstream.url);
  const session = tracer.session("thoughtgate shim", {
    "thoughtgate.server_id": options.serverId,
    "thoughtgate.run_id": options.runId,
    "thoughtgate.profile": options.profile,
  });
  const calls = new CallTracer({
    tracer,
    serverId: options.serverId,
    profile: options.profile,
    runId: options.runId,
    agentTransport: options.agent ? "tcp" : "pipe",
    serverTransport: remote ? "tcp" : "pipe",
    ...(remote ? { serverAddress: { host: remote.hostname, port: Number(remote.port) || (remote.protocol === "https:" ? 443 : 80) } } : {}),
  });
  return { tracer, session, calls };
}
