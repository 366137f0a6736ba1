import { bestEffort } from "../core/errors.ts";
import { taggedLog } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { EventStream } from "../telemetry/events.ts";
import { VERSION } from "../version.ts";
import { exitCodeForSignal } from "../core/signals.ts";
import type { Decider } from "../governance/decider.ts";
import type { Unit } from "../stdio/framer.ts";
import { readFramed, type ByteReader } from "../stdio/framed-reader.ts";
import { LineSink } from "../stdio/line-sink.ts";
import { ServerProcess, SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS, type Exit } from "../stdio/server-process.ts";
import { Router } from "./router.ts";

/** docs/architecture.md, decision 6: past this many pending decisions the shim stops reading from the agent. */
export const MAX_PENDING_DECISIONS = 32;
export const ORPHAN_TIMEOUT_MS = 300_000;

export type ShimOptions = {
  serverId: string;
  profile: Profile;
  command: string[];
  runId: string;
  eventsPath: string | null;
  decider: Decider;
  orphanTimeoutMs?: number;
  stdinCloseGraceMs?: number;
  sigtermGraceMs?: number;
};

type StopReason = "agent_eof" | "signal" | "server_exit" | "agent_gone" | "governance";

/**
 * `thoughtgate shim`: proxy NDJSON JSON-RPC between the agent (our stdin/stdout) and the MCP
 * server (a child process), judging every line on the way. Resolves with the exit code.
 */
export async function runShim(options: ShimOptions): Promise<number> {
  const serverLog = taggedLog(options.serverId);
  const events = EventStream.open(options.eventsPath, {
    run_id: options.runId,
    server_id: options.serverId,
    profile: options.profile,
  });
  events.emit("run_start", {
    started_at: new Date().toISOString(),
    pid: process.pid,
    server_command: options.command,
    policy: options.decider.policy,
    version: VERSION,
  });

  let stopWith: (reason: StopReason) => void = () => {};
  const stopped = new Promise<StopReason>((resolve) => {
    stopWith = resolve;
  });
  let hurry: () => void = () => {};
  const onSignal = (signal: NodeJS.Signals) => {
    serverLog.info(`${signal}: shutting down`);
    stopWith("signal");
    // Also when already stopping (agent EOF first): whoever signals us may SIGKILL us next.
    hurry();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  const toAgent = new LineSink(Bun.stdout.writer(), (reason) => {
    serverLog.warn(`agent stopped reading (${reason}): shutting down`);
    stopWith("agent_gone");
  });

  const spawned = ServerProcess.spawn(options.command);
  const server = spawned instanceof ServerProcess ? spawned : null;
  if (server) hurry = () => server.hurry();
  const toServer = server
    ? new LineSink(server.stdin, (reason) => serverLog.debug(`server stdin closed: ${reason}`))
    : null;
  const router = new Router({
    serverId: options.serverId,
    profile: options.profile,
    decider: options.decider,
    events,
    toAgent,
    toServer,
  });

  if (options.decider.attachCounts) {
    router.audit.counting = true;
    options.decider.attachCounts(() => ({ messages: router.audit.messageCounts, framingErrors: router.audit.framingErrorCounts }));
  }
  void options.decider.stopRequested?.then((why) => {
    serverLog.info(`${why}: shutting down`);
    stopWith("governance");
  });

  if (server) {
    events.emit("server_state", { state: "running", pid: server.pid });
    options.decider.serverState?.("running");
    serverLog.debug(`started ${options.command.join(" ")} (pid ${server.pid})`);
  } else {
    const reason = "error" in spawned ? spawned.error : "spawn failed";
    // A server that cannot start: stay up and answer every request with the reason instead of vanishing.
    serverLog.error(`${reason}`);
    events.emit("server_state", { state: "failed_to_start", detail: reason });
    options.decider.serverState?.("failed");
    router.serverGone(`it failed to start: ${reason}`);
  }

  const orphanTimeoutMs = options.orphanTimeoutMs ?? ORPHAN_TIMEOUT_MS;
  const orphanTimer = setInterval(
    () => router.reportOrphans(performance.now(), orphanTimeoutMs),
    Math.max(10, Math.min(1_000, orphanTimeoutMs / 2)),
  );
  orphanTimer.unref();

  const agentReader: ByteReader = Bun.stdin.stream().getReader();
  // Each pump waits only on the sink it forwards to. Waiting on the other direction too deadlocks:
  // a server blocked writing its stdout stops reading its stdin, and neither side moves again.
  // (The few lines a pump writes back to its own sender, error answers, buffer without waiting.)
  const agentPump = pump(agentReader, (unit) => router.fromAgent(unit), toServer, toAgent, router, `${options.serverId} agent`).then(() =>
    stopWith("agent_eof"),
  );
  let serverReader: ByteReader | null = null;
  let serverPump: Promise<void> = Promise.resolve();
  if (server) {
    const reader: ByteReader = server.stdout.getReader();
    serverReader = reader;
    serverPump = pump(reader, (unit) => router.fromServer(unit), toAgent, toServer, null, `${options.serverId} server`).then(async () => {
      const code = await server.exited;
      router.serverGone(`it exited (code ${server.hasExited ? code : "unknown"})`);
      stopWith("server_exit");
    });
  }

  const reason = await stopped;
  serverLog.debug(`stopping: ${reason}`);
  if (reason === "signal" || reason === "agent_gone" || reason === "governance") {
    // Stop accepting new agent messages; what the server still sends is delivered until it exits.
    bestEffort(() => void agentReader.cancel());
  }

  let exit: Exit | null = null;
  if (server) {
    exit = await server.stop({
      stdinCloseMs: options.stdinCloseGraceMs ?? STDIN_CLOSE_GRACE_MS,
      sigtermMs: options.sigtermGraceMs ?? SIGTERM_GRACE_MS,
    });
    events.emit("server_state", {
      state: exit.escalation === "none" ? "exited" : "terminated",
      pid: server.pid,
      exit_code: exit.exitCode,
      signal: exit.signal,
    });
    // Failed: it died on its own with an error; stopped by the shim (even by a signal), it exited.
    options.decider.serverState?.(reason === "server_exit" && (exit.exitCode !== 0 || exit.signal !== null) ? "failed" : "exited");
    // A grandchild that left the group could still hold the server's stdout open.
    await Promise.race([serverPump, Bun.sleep(options.sigtermGraceMs ?? SIGTERM_GRACE_MS)]);
    bestEffort(() => void serverReader?.cancel());
  } else if (reason === "agent_eof") {
    await agentPump;
  }
  router.serverGone("the shim is shutting down");
  await options.decider.close?.();
  clearInterval(orphanTimer);
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);

  const exitCode = exitCodeOf(server, exit);
  router.summary.events_dropped = events.dropped;
  events.emit(
    "run_end",
    {
      ended_at: new Date().toISOString(),
      status: server ? (reason === "server_exit" ? "server_exited" : "ok") : "server_failed",
      pid: process.pid,
      exit_code: exitCode,
      summary: router.summary,
    },
  );
  await toAgent.backpressure();
  toAgent.close();
  await events.close();
  return exitCode;
}

/** 0 for a clean shutdown (one the shim asked for), else the server's own code (128+n for a signal it died of). */
function exitCodeOf(server: ServerProcess | null, exit: Exit | null): number {
  if (!server || !exit) return 1;
  if (exit.exitCode !== null) return exit.exitCode;
  if (exit.escalation !== "none") return 0;
  return exitCodeForSignal(exit.signal);
}

/**
 * Answers a pump writes back to its own sender (errors for rejected lines) are not waited for line
 * by line — waiting on the other direction can deadlock a peer that writes before it reads — but
 * once the sender has left this much unread, the pump stops reading it until it catches up: a peer
 * that sends garbage and never reads cannot grow our memory without bound.
 */
export const SENDER_UNREAD_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * One direction of the proxy: read, frame and route until EOF; before reading more, wait for the
 * destination to drain, for the sender to read what we answered it past the limit, and (agent
 * side) for a free decision slot.
 */
function pump(
  reader: ByteReader,
  route: (unit: Unit) => void,
  destination: LineSink | null,
  sender: LineSink | null,
  decisions: Router | null,
  label: string,
): Promise<void> {
  return readFramed(reader, route, {
    label,
    afterChunk: () => {
      const pending = destination?.backpressure();
      const unread = sender && sender.bufferedBytes > SENDER_UNREAD_LIMIT_BYTES ? sender.backpressure() : null;
      if (pending || unread) return Promise.all([pending, unread]).then(() => waitForDecisionSlot(decisions));
      return decisions && decisions.decisionsInFlight >= MAX_PENDING_DECISIONS ? waitForDecisionSlot(decisions) : null;
    },
  });
}

async function waitForDecisionSlot(decisions: Router | null): Promise<void> {
  while (decisions && decisions.decisionsInFlight >= MAX_PENDING_DECISIONS) await decisions.decisionSettled();
}
