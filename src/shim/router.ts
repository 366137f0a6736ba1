import { errorResponse, idKey, RPC, toolNameOf, type JsonRpcId, type Message } from "../core/jsonrpc.ts";
import { argsHash } from "../core/canonical-json.ts";
import { log } from "../core/log.ts";
import { messageOf } from "../core/errors.ts";
import type { Profile } from "../core/profile.ts";
import { rawForLog, type CallStatus, type EventStream, type Summary } from "../telemetry/events.ts";
import { GOVERNED_METHODS, type Decider, type Verdict } from "./decide.ts";
import type { Unit } from "./framer.ts";
import { RequestTracker, type Outstanding } from "./request-tracker.ts";
import type { FramingError } from "./validate-line.ts";

/** Where the router writes: one JSON-RPC line per call, the newline added by the sink. */
export type Sink = {
  send(bytes: Uint8Array): void;
  sendText(line: string): void;
};

type Direction = "agent_to_server" | "server_to_agent";
type Request = Extract<Message, { kind: "request" }>;

export type RouterOptions = {
  serverId: string;
  profile: Profile;
  decider: Decider;
  events: EventStream;
  toAgent: Sink;
  /** null: the server is not running; every request is answered with an error. */
  toServer: Sink | null;
  serverUnavailable?: string;
};

/**
 * The shim's routing logic, free of I/O: validated units in, lines out to the agent and the server,
 * audit events on the side. One instance per shim.
 */
export class Router {
  /** Agent requests the server has not answered yet. */
  readonly agentRequests = new RequestTracker();
  /** Server requests (sampling, elicitation, roots) the agent has not answered yet. */
  readonly serverRequests = new RequestTracker();
  /** Governed requests whose decision is still pending (approval), by id key. */
  private readonly held = new Map<string, { entry: Outstanding; controller: AbortController }>();
  private readonly heldWaiters: Array<() => void> = [];
  private toServer: Sink | null;
  private serverUnavailable: string;

  readonly summary: Summary = {
    calls_total: 0,
    calls_forwarded: 0,
    calls_denied: 0,
    calls_errored: 0,
    messages_agent_to_server: 0,
    messages_server_to_agent: 0,
    framing_errors: 0,
    smuggling_attempts: 0,
    orphaned_requests: 0,
    events_dropped: 0,
  };

  constructor(private readonly options: RouterOptions) {
    this.toServer = options.toServer;
    this.serverUnavailable = options.serverUnavailable ?? "the MCP server is not running";
  }

  get decisionsInFlight(): number {
    return this.held.size;
  }

  /** Resolves when a pending decision settles (for backpressure). */
  decisionSettled(): Promise<void> {
    return new Promise((resolve) => this.heldWaiters.push(resolve));
  }

  fromAgent(unit: Unit): void {
    this.route(unit, "agent_to_server");
  }

  fromServer(unit: Unit): void {
    this.route(unit, "server_to_agent");
  }

  /** The server exited or could not start: answer everything still waiting on it (EC-STDIO-010). */
  serverGone(detail: string): void {
    this.toServer = null;
    this.serverUnavailable = detail;
    for (const { entry, controller } of this.held.values()) {
      controller.abort();
      this.answerUnavailable(entry);
    }
    this.held.clear();
    this.wakeHeldWaiters();
    // A cancelled request has no one waiting for it: nothing to answer.
    for (const entry of this.agentRequests.drain()) if (!entry.cancelled) this.answerUnavailable(entry);
    this.serverRequests.drain();
  }

  /** Report requests that have waited longer than `timeoutMs` (F-015), once each. */
  reportOrphans(now: number, timeoutMs: number): void {
    const report = (tracker: RequestTracker, direction: Direction) => {
      for (const entry of tracker.newOrphans(now, timeoutMs)) {
        const ageMs = Math.round(now - entry.startedAt);
        log.warn(`[${this.options.serverId}] ${entry.method} (id ${JSON.stringify(entry.id)}) has had no response for ${ageMs} ms`);
        this.summary.orphaned_requests += 1;
        this.options.events.emit("orphaned_request", { direction, request_id: entry.id, method: entry.method, age_ms: ageMs });
      }
    };
    report(this.agentRequests, "agent_to_server");
    report(this.serverRequests, "server_to_agent");
  }

  private route(unit: Unit, direction: Direction): void {
    if (unit.kind === "message") {
      if (direction === "agent_to_server") {
        this.summary.messages_agent_to_server += 1;
        this.agentMessage(unit.message, unit.bytes);
      } else {
        this.summary.messages_server_to_agent += 1;
        this.serverMessage(unit.message, unit.bytes);
      }
      return;
    }
    if (unit.kind === "rejected") {
      this.rejected(unit.error, direction);
      return;
    }
    this.summary.smuggling_attempts += 1;
    if (this.options.profile === "production") {
      this.rejected(unit.error, direction);
      return;
    }
    this.reportFraming(unit.error, direction, "would_reject", undefined);
    for (const replayed of unit.replay) this.route(replayed, direction);
  }

  private agentMessage(message: Message, bytes: Uint8Array): void {
    if (message.kind === "request") {
      this.agentRequest(message, bytes);
      return;
    }
    if (message.kind === "notification") {
      if (message.method === "notifications/cancelled" && this.cancel(message.params)) return;
      this.toServer?.send(bytes);
      return;
    }
    if (message.id !== null && !this.serverRequests.settle(message.id)) {
      if (!this.unsolicited(message.id, "agent_to_server")) return;
    }
    this.toServer?.send(bytes);
  }

  private serverMessage(message: Message, bytes: Uint8Array): void {
    if (message.kind === "request") {
      this.serverRequests.add({ id: message.id, method: message.method, startedAt: performance.now() });
    } else if (message.kind === "response" && message.id !== null) {
      const entry = this.agentRequests.settle(message.id);
      if (!entry) {
        if (!this.unsolicited(message.id, "server_to_agent")) return;
      } else if (entry.call && !entry.cancelled) {
        this.endCall(entry, responseStatus(message), bytes.length);
      }
    }
    this.options.toAgent.send(bytes);
  }

  private agentRequest(request: Request, bytes: Uint8Array): void {
    const entry: Outstanding = { id: request.id, method: request.method, startedAt: performance.now() };
    if (request.method === "tools/call") {
      const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
      entry.call = { callId: Bun.randomUUIDv7(), tool: toolNameOf(request.params) ?? "", argsHash: argsHash(args) };
      this.summary.calls_total += 1;
      this.options.events.emit("tool_call_start", {
        call_id: entry.call.callId,
        request_id: request.id,
        tool: entry.call.tool,
        args_hash: entry.call.argsHash,
      });
    }
    if (!this.toServer) {
      this.answerUnavailable(entry);
      return;
    }
    if (!GOVERNED_METHODS.has(request.method)) {
      this.agentRequests.add(entry);
      this.toServer.send(bytes);
      return;
    }
    const controller = new AbortController();
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = this.options.decider.decide(request, controller.signal);
    } catch (error) {
      verdict = decisionFailed(error);
    }
    if (!(verdict instanceof Promise)) {
      this.apply(entry, bytes, verdict);
      return;
    }
    // Pending (e.g. waiting for a human): this request alone waits (DESIGN decision 6).
    const key = idKey(request.id);
    this.held.set(key, { entry, controller });
    this.emitDecision(entry, { action: "pending" });
    verdict
      .catch(decisionFailed)
      .then((settled) => {
        if (this.held.get(key)?.entry !== entry) return; // cancelled or the server went away
        this.held.delete(key);
        this.wakeHeldWaiters();
        if (this.toServer) this.apply(entry, bytes, settled);
        else this.answerUnavailable(entry);
      });
  }

  private apply(entry: Outstanding, bytes: Uint8Array, verdict: Verdict): void {
    this.emitDecision(entry, verdict);
    if (verdict.action === "forward") {
      if (entry.call) this.summary.calls_forwarded += 1;
      this.agentRequests.add(entry);
      this.toServer?.send(bytes);
      return;
    }
    if (entry.call) this.summary.calls_denied += 1;
    this.options.toAgent.sendText(errorResponse(entry.id, verdict.error.code, verdict.error.message, verdict.error.data));
    if (entry.call) this.endCall(entry, "denied", 0);
  }

  /**
   * `notifications/cancelled` from the agent. A request still awaiting its decision is dropped
   * here and the cancel swallowed (returns true). A request the server has: the call ends as
   * `cancelled` in the audit, and the cancel is forwarded (MCP: the server should not answer,
   * but may, and a late answer is passed on quietly).
   */
  private cancel(params: unknown): boolean {
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    if (typeof requestId !== "string" && typeof requestId !== "number") return false;
    const key = idKey(requestId);
    const held = this.held.get(key);
    if (!held) {
      const forwarded = this.agentRequests.get(requestId);
      if (forwarded && !forwarded.cancelled) {
        forwarded.cancelled = true;
        if (forwarded.call) this.endCall(forwarded, "cancelled", 0);
      }
      return false;
    }
    // The server never saw this request, so the cancel is not forwarded (DESIGN decision 6).
    held.controller.abort();
    this.held.delete(key);
    this.wakeHeldWaiters();
    if (held.entry.call) this.endCall(held.entry, "cancelled", 0);
    return true;
  }

  /** A response to a request that was never sent. Returns whether to forward it. */
  private unsolicited(id: JsonRpcId, direction: Direction): boolean {
    const development = this.options.profile === "development";
    log.warn(
      `[${this.options.serverId}] ${development ? "WOULD_DROP " : ""}response to unknown request id ${JSON.stringify(id)} (${direction})`,
    );
    const raw = new TextEncoder().encode(JSON.stringify({ id }));
    this.summary.framing_errors += 1;
    this.options.events.emit("framing_error", {
      direction,
      error: "UnsolicitedResponse",
      detail: `response to unknown request id ${JSON.stringify(id)}`,
      action: development ? "would_reject" : "rejected",
      bytes: raw.length,
      ...rawForLog(raw),
    });
    return development;
  }

  private rejected(error: FramingError, direction: Direction): void {
    const development = this.options.profile === "development";
    const receiver = direction === "agent_to_server" ? this.toServer : this.options.toAgent;
    // EC-STDIO-017: JSON that is not JSON-RPC is forwarded in development, with WOULD_DROP.
    if (development && (error.code === "NotJsonRpc" || error.code === "MissingJsonRpcVersion")) {
      this.reportFraming(error, direction, "would_reject", undefined);
      receiver?.send(error.raw);
      return;
    }
    const sender = direction === "agent_to_server" ? this.options.toAgent : this.toServer;
    const waiting = direction === "agent_to_server" ? this.serverRequests : this.agentRequests;
    let answered: JsonRpcId | null | undefined;
    if (error.looksLikeRequest) {
      // The sender may be waiting on this request: it gets an error instead of silence.
      answered = error.id;
      sender?.sendText(errorResponse(error.id, RPC.framingRejected, `ThoughtGate rejected the message: ${error.code}`, this.errorData(error)));
    } else if (error.id !== null) {
      // A rejected response: the request it answered gets an error, so its sender does not hang.
      const entry = waiting.settle(error.id);
      if (entry) {
        answered = entry.id;
        receiver?.sendText(
          errorResponse(entry.id, RPC.framingRejected, `ThoughtGate rejected the response: ${error.code}`, this.errorData(error)),
        );
        if (entry.call) this.endCall(entry, "error", 0);
      }
    }
    this.reportFraming(error, direction, "rejected", answered);
  }

  private reportFraming(
    error: FramingError,
    direction: Direction,
    action: "rejected" | "would_reject",
    answered: JsonRpcId | null | undefined,
  ): void {
    this.summary.framing_errors += 1;
    const logged = rawForLog(error.raw);
    const label = action === "would_reject" ? (error.code === "SmugglingAttempt" ? "WOULD_REJECT" : "WOULD_DROP") : "rejected";
    log.warn(
      `[${this.options.serverId}] ${label} ${direction.replaceAll("_", " ")}: ${error.code}: ${error.detail} (${logged.raw_encoding} ${truncate(logged.raw)})`,
    );
    this.options.events.emit("framing_error", {
      direction,
      error: error.code,
      detail: error.detail,
      action,
      bytes: error.size,
      ...logged,
      ...(answered !== undefined ? { answered_id: answered } : {}),
    });
  }

  private errorData(error: FramingError): Record<string, unknown> {
    return { gate: "framing", reason: error.code, detail: error.detail, server_id: this.options.serverId };
  }

  private answerUnavailable(entry: Outstanding): void {
    this.options.toAgent.sendText(
      errorResponse(entry.id, RPC.serverUnavailable, `MCP server "${this.options.serverId}" is unavailable: ${this.serverUnavailable}`, {
        gate: "transport",
        server_id: this.options.serverId,
        reason: this.serverUnavailable,
      }),
    );
    if (entry.call) {
      this.summary.calls_errored += 1;
      this.endCall(entry, "server_unavailable", 0);
    }
  }

  private emitDecision(entry: Outstanding, verdict: Verdict | { action: "pending" }): void {
    if (!entry.call) return;
    this.options.events.emit("tool_call_decision", {
      call_id: entry.call.callId,
      tool: entry.call.tool,
      decision: verdict.action,
      gate: "gate" in verdict ? verdict.gate : null,
      rule_id: "ruleId" in verdict ? verdict.ruleId : null,
      reason: "reason" in verdict ? verdict.reason : "awaiting decision",
    });
  }

  private endCall(entry: Outstanding, status: CallStatus, bytesOut: number): void {
    if (!entry.call) return;
    if (status === "error") this.summary.calls_errored += 1;
    this.options.events.emit("tool_call_end", {
      call_id: entry.call.callId,
      tool: entry.call.tool,
      args_hash: entry.call.argsHash,
      status,
      latency_ms: Math.round((performance.now() - entry.startedAt) * 1000) / 1000,
      bytes_out: bytesOut,
    });
  }

  private wakeHeldWaiters(): void {
    for (const wake of this.heldWaiters.splice(0)) wake();
  }
}

function responseStatus(message: Extract<Message, { kind: "response" }>): CallStatus {
  if (message.isError) return "error";
  const result = message.body.result as { isError?: unknown } | undefined;
  return result?.isError === true ? "error" : "ok";
}

/** A decider that throws or rejects fails closed (DESIGN decision 3). */
function decisionFailed(error: unknown): Verdict {
  log.error(`governance decision failed: ${messageOf(error)}`);
  return {
    action: "deny",
    gate: "governance",
    ruleId: null,
    reason: "decision failed",
    error: { code: RPC.internalError, message: `ThoughtGate could not decide: ${messageOf(error)}` },
  };
}

function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
