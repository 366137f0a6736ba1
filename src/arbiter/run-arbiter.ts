import type { FileSink } from "bun";
import { bestEffort, EXIT, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log, taggedLog } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { exitCodeForSignal } from "../core/signals.ts";
import type { EngineHolder } from "../governance/engine/engine-holder.ts";
import type { ByteReader } from "../stdio/framed-reader.ts";
import { concatBytes } from "../core/bytes.ts";
import { ServerProcess, SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS, type Exit } from "../stdio/server-process.ts";
import { EventStream } from "../telemetry/events.ts";
import { VERSION } from "../version.ts";
import { projectRoot } from "../core/project.ts";
import { startIdField } from "../core/process-identity.ts";
import { redactArgv } from "../telemetry/redact-argv.ts";
import type { Tracer } from "../telemetry/tracing/tracer.ts";
import { Arbiter, emptySummary } from "./arbiter.ts";
import type { Call } from "../pipeline/call.ts";
import { ControlChannel } from "./control-channel.ts";
import { EventSplitter, type Piece } from "./event-splitter.ts";
import { parseEvent, pingMessage, type AbortCode, type ArbiterDecision } from "./protocol.ts";
import { TerminalApprover, type Approver } from "./terminal-approver.ts";

/** The `timeout_ms` a `policy.ping` announces (docs/codecli-protocol.md §3.3). */
export const DECISION_TIMEOUT_MS = 300_000;
/**
 * A write to the child's stdin failed: if the child exits within this long it was simply ending
 * (its stdin closes with it) and its exit code stands; if it is still running, it can no longer be
 * controlled (docs/codecli-protocol.md §6.1, failed transport) and the session ends with an error.
 */
export const WRITE_FAILURE_GRACE_MS = 500;

export type ArbiterSessionOptions = {
  command: string[];
  profile: Profile;
  serverId: string;
  runId: string;
  eventsPath: string | null;
  engines: Pick<EngineHolder, "engine" | "label" | "files" | "watch" | "close">;
  /** Event lines start with this; null: a line is an event when it is a JSON object with a `tool.*` type. */
  eventPrefix: string | null;
  defaultAction: ArbiterDecision;
  decisionTimeoutMs: number;
  /** The terminal by default; tests and benchmarks may answer otherwise. */
  approver?: Approver;
  stdinCloseGraceMs?: number;
  sigtermGraceMs?: number;
  /** Tracing on (docs/governance.md, "Traces"): where the session's and its calls' spans go. */
  tracer?: Tracer | undefined;
};

/** At exit, how long the spans still queued may take to leave before they are dropped (as a shim's). */
const TRACE_FLUSH_MS = 1_000;

type Stop =
  | { kind: "child_exit" }
  | { kind: "abort"; code: AbortCode }
  | { kind: "signal"; signal: NodeJS.Signals }
  | { kind: "transport"; reason: string };

type Stream = "stdout" | "stderr";

/**
 * `thoughtgate arbiter`: run a codecli-style child and decide the tool calls it announces
 * (docs/codecli-protocol.md §5). Two readers take its stdout and stderr (output through, events to
 * the arbiter), the `ControlChannel` is the one writer of its stdin, the `Arbiter` decides, and one
 * task waits for the child. Resolves with
 * the child's exit code (1 when it could no longer be controlled).
 */
export async function runArbiter(options: ArbiterSessionOptions): Promise<number> {
  const serverLog = taggedLog(options.serverId);
  const events = EventStream.open(options.eventsPath, { run_id: options.runId, server_id: options.serverId, profile: options.profile });
  events.emit("run_start", {
    started_at: new Date().toISOString(),
    pid: process.pid,
    ...startIdField(),
    server_command: options.command,
    policy: options.engines.label,
    version: VERSION,
    // The child is the agent: its command line, and the project it works in.
    agent_command: redactArgv(options.command),
    project: projectRoot(process.cwd()),
  });
  const spawned = ServerProcess.spawn(options.command, process.env, { pipeStderr: true });
  if (!(spawned instanceof ServerProcess)) {
    events.emit("server_state", { state: "failed_to_start", detail: spawned.error });
    events.emit("run_end", { ended_at: new Date().toISOString(), status: "server_failed", pid: process.pid, exit_code: EXIT.error, summary: emptySummary() });
    await events.close();
    throw new ThoughtGateError("SPAWN_FAILED", spawned.error);
  }
  const child = spawned;
  events.emit("server_state", { state: "running", pid: child.pid });
  serverLog.debug(`started ${options.command.join(" ")} (pid ${child.pid}); policy ${options.engines.label}, ${options.profile}`);

  let stopWith: (stop: Stop) => void = () => {};
  const stopped = new Promise<Stop>((resolve) => {
    stopWith = resolve;
  });
  let stopping = false;
  void stopped.then(() => {
    stopping = true;
  });

  const tracing = options.tracer?.on ? await startTracing(options, options.tracer) : null;
  const control = new ControlChannel(child.stdin, (reason) => void transportFailed(reason));
  const approver = options.approver ?? new TerminalApprover();
  const arbiter = new Arbiter({
    engines: options.engines,
    profile: options.profile,
    serverId: options.serverId,
    runId: options.runId,
    defaultAction: options.defaultAction,
    decisionTimeoutMs: options.decisionTimeoutMs,
    control,
    approver,
    events,
    onAbort: (code) => stopWith({ kind: "abort", code }),
    spans: tracing?.spans,
  });

  const transportFailed = async (reason: string): Promise<void> => {
    if (stopping) return;
    const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(WRITE_FAILURE_GRACE_MS).then(() => false)]);
    if (exited || stopping) return;
    serverLog.error(`cannot write to its stdin (${reason}): the child can no longer be controlled; stopping it`);
    stopWith({ kind: "transport", reason });
    arbiter.abort("fatal_error", `the control channel to the child failed: ${reason}`);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    // Ctrl+C while a question is open is the user's "abort" (docs/codecli-protocol.md §3.4, user_cancel), not a hard stop.
    if (signal === "SIGINT" && approver.interrupt()) return;
    serverLog.info(`${signal}: stopping the child`);
    stopWith({ kind: "signal", signal });
    arbiter.abort("user_cancel", `thoughtgate arbiter received ${signal}`);
    // Also when already stopping: whoever signals us may SIGKILL us next.
    child.hurry();
  };
  // SIGHUP reloads the policy when it comes from a file (EngineHolder.watch); otherwise it stops us like SIGTERM.
  const signals: NodeJS.Signals[] = options.engines.files.length > 0 ? ["SIGINT", "SIGTERM"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, onSignal);
  options.engines.watch();

  control.send(pingMessage(options.runId, "ping-1", options.decisionTimeoutMs));

  const readers: ByteReader[] = [];
  const pump = (stream: ReadableStream<Uint8Array> | null, name: Stream, sink: FileSink): Promise<void> => {
    if (!stream) return Promise.resolve();
    const reader: ByteReader = stream.getReader();
    readers.push(reader);
    return pumpOutput(reader, sink, name, new EventSplitter(options.eventPrefix), arbiter);
  };
  const pumps = Promise.all([pump(child.stdout, "stdout", Bun.stdout.writer()), pump(child.stderr, "stderr", Bun.stderr.writer())]);
  void child.exited.then(() => stopWith({ kind: "child_exit" }));

  const stop = await stopped;
  // An abort denies what still waits, then writes policy.abort: both before the child's stdin closes.
  await arbiter.aborted();
  serverLog.debug(`stopping: ${stop.kind}`);
  if (stop.kind === "transport") child.hurry();
  // Nothing may be decided for a child that is going away: questions are withdrawn, new requests abandoned.
  arbiter.close();
  approver.close();
  control.close();
  const sigtermMs = options.sigtermGraceMs ?? SIGTERM_GRACE_MS;
  const exit = await child.stop({ stdinCloseMs: options.stdinCloseGraceMs ?? STDIN_CLOSE_GRACE_MS, sigtermMs });
  events.emit("server_state", { state: exit.escalation === "none" ? "exited" : "terminated", pid: child.pid, exit_code: exit.exitCode, signal: exit.signal });
  // What the child wrote before it ended is still delivered; a grandchild that left its group could hold the pipes open.
  await Promise.race([pumps, Bun.sleep(sigtermMs)]);
  for (const reader of readers) bestEffort(() => void reader.cancel());

  for (const signal of signals) process.off(signal, onSignal);
  options.engines.close();
  arbiter.finish();
  if (tracing) {
    tracing.session.end();
    await tracing.tracer.close(TRACE_FLUSH_MS);
  }
  const exitCode = stop.kind === "transport" ? EXIT.error : exitCodeOf(exit);
  const status = stop.kind === "child_exit" ? "child_exited" : stop.kind === "transport" ? "transport_failed" : "aborted";
  if (arbiter.summary.malformed_events > 0) serverLog.warn(`${arbiter.summary.malformed_events} malformed event line(s) passed through as output`);
  events.emit("run_end", { ended_at: new Date().toISOString(), status, pid: process.pid, exit_code: exitCode, summary: arbiter.summary });
  await events.close();
  return exitCode;
}

/** The session's span (the parent of its calls' spans) and the calls' spans, loaded only now. */
async function startTracing(options: ArbiterSessionOptions, tracer: Tracer) {
  const { beginCallSpans } = await import("../pipeline/call-spans.ts");
  const session = tracer.session("thoughtgate arbiter", {
    "thoughtgate.server_id": options.serverId,
    "thoughtgate.run_id": options.runId,
    "thoughtgate.profile": options.profile,
  });
  const spans = (call: Call) => beginCallSpans(call, { tracer, profile: options.profile, runId: options.runId, transport: "pipe" });
  return { tracer, session, spans };
}

/**
 * Read one of the child's streams; output goes to `sink` unchanged and in order, events
 * to the arbiter, malformed event lines to both (counted, passed through). Before reading more,
 * wait for `sink` to drain, so a slow reader of ours slows the child instead of growing memory.
 */
async function pumpOutput(reader: ByteReader, sink: FileSink, stream: Stream, splitter: EventSplitter, arbiter: Arbiter): Promise<void> {
  let sinkBroken = false;
  const write = (parts: Uint8Array[]): Promise<unknown> | null => {
    if (parts.length === 0 || sinkBroken) return null;
    try {
      sink.write(concatBytes(parts));
      const flushed = sink.flush();
      return flushed instanceof Promise ? flushed.catch((error: unknown) => broken(error)) : null;
    } catch (error) {
      broken(error);
      return null;
    }
  };
  const broken = (error: unknown) => {
    if (sinkBroken) return;
    sinkBroken = true;
    // Keep reading: the child's events must still be decided, or it would wait for nothing.
    if (stream === "stdout") log.warn(`our stdout is closed (${messageOf(error)}): the child's output is discarded from now on`);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || value === undefined) break;
      const pending = write(route(splitter.push(value), stream, arbiter));
      if (pending) await pending;
    }
  } catch (error) {
    // A cancelled or broken pipe ends the stream like EOF does.
    taggedLog(stream).debug(`stream ended: ${messageOf(error)}`);
  }
  const pending = write(route(splitter.end(), stream, arbiter));
  if (pending) await pending;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Hand events to the arbiter; return what passes through, in order. */
function route(pieces: Piece[], stream: Stream, arbiter: Arbiter): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const piece of pieces) {
    if (piece.kind === "output") {
      out.push(piece.bytes);
      continue;
    }
    const prefixed = piece.payloadStart > 0;
    out.push(piece.bytes);
    if (!piece.complete) {
      if (prefixed) arbiter.malformed(stream, "UnterminatedEvent", `${piece.bytes.length} bytes without a newline (over the line limit, or the stream ended)`, piece.bytes);
      continue;
    }
    let text: string;
    try {
      text = utf8.decode(piece.bytes.subarray(piece.payloadStart));
    } catch {
      if (prefixed) arbiter.malformed(stream, "InvalidUtf8", "the event line is not valid UTF-8", piece.bytes);
      continue;
    }
    const parsed = parseEvent(text, prefixed);
    if (!parsed.ok) {
      arbiter.malformed(stream, parsed.error, parsed.detail, piece.bytes);
    } else if (parsed.event) {
      // A valid event is consumed: it is not output.
      out.pop();
      arbiter.handle(parsed.event);
    }
  }
  return out;
}

/** The child's own code; 128+N when signal N ended it (what a shell reports). */
function exitCodeOf(exit: Exit): number {
  return exit.exitCode ?? exitCodeForSignal(exit.signal);
}
