import { errorResponse, RPC, toolNameOf, type JsonRpcId, type Message } from "../core/jsonrpc.ts";
import { argsHash } from "../core/canonical-json.ts";
import { log } from "../core/log.ts";
import { messageOf } from "../core/errors.ts";
import type { Profile } from "../core/profile.ts";
import { rawForLog, type CallStatus, type EventStream, type Summary } from "../telemetry/events.ts";
import type { ToolAnnotations } from "../governance/rules.ts";
import type { ListKind } from "../governance/visibility.ts";
import { GOVERNED_METHODS, targetName, type DecisionContext, type Decider, type Verdict } from "./decide.ts";
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
type Response = Extract<Message, { kind: "response" }>;

/** List methods whose responses the visibility gate filters, and the key naming each item. */
const LISTS: Record<string, { kind: ListKind; key: "name" | "uri" }> = {
  "tools/list": { kind: "tools", key: "name" },
  "prompts/list": { kind: "prompts", key: "name" },
  "resources/list": { kind: "resources", key: "uri" },
};

const APPROVAL_SCHEMA = {
  type: "object",
  properties: { approve: { type: "boolean", title: "Allow this call?", description: "Approve only if you expected this call." } },
  required: ["approve"],
} as const;

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
  private readonly held = new Map<JsonRpcId, { entry: Outstanding; control: LazyAbort }>();
  private readonly heldWaiters: Array<() => void> = [];
  /** Requests the shim itself sent to the agent (approval elicitations), by id key. */
  private readonly shimRequests = new Map<JsonRpcId, (response: Response) => void>();
  /** Each tool's annotations from the server's tools/list (the embedded default policy uses them). */
  private readonly annotations = new Map<string, ToolAnnotations>();
  /** Whether the agent declared the `elicitation` capability (form mode) in its initialize. */
  private agentCanElicit = false;
  /** Requests the shim itself sent to the server (its own tools/list), by id key. */
  private readonly shimServerRequests = new Map<JsonRpcId, (response: Response) => void>();
  /** Set once the server's tool list (and so every tool's annotations) has been read. */
  private toolListRead = false;
  private toolListFetch: Promise<void> | null = null;
  private toServer: Sink | null;
  private serverUnavailable: string;

  /** "<direction> <method>" → messages seen (responses count under "response"), for metrics. */
  readonly messageCounts = new Map<string, number>();
  /** Counting costs a string and a map update per message: only done when someone reads it. */
  counting = false;
  /** Framing error code → count, for metrics. */
  readonly framingErrorCounts = new Map<string, number>();

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
    for (const { entry, control } of this.held.values()) {
      control.abort();
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
      if (this.counting) {
        const countKey = `${direction} ${unit.message.kind === "response" ? "response" : unit.message.method}`;
        this.messageCounts.set(countKey, (this.messageCounts.get(countKey) ?? 0) + 1);
      }
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
    if (message.id !== null) {
      const ours = this.shimRequests.get(message.id);
      if (ours) {
        this.shimRequests.delete(message.id);
        ours(message);
        return;
      }
      if (!this.serverRequests.settle(message.id) && !this.unsolicited(message.id, "agent_to_server")) return;
    }
    this.toServer?.send(bytes);
  }

  private serverMessage(message: Message, bytes: Uint8Array): void {
    if (message.kind === "response" && message.id !== null) {
      const ours = this.shimServerRequests.get(message.id);
      if (ours) {
        this.shimServerRequests.delete(message.id);
        ours(message);
        return;
      }
    }
    if (message.kind === "notification" && message.method === "notifications/tools/list_changed") this.toolListRead = false;
    if (message.kind === "request") {
      this.serverRequests.add({ id: message.id, method: message.method, startedAt: performance.now() });
    } else if (message.kind === "response" && message.id !== null) {
      const entry = this.agentRequests.settle(message.id);
      if (!entry) {
        if (!this.unsolicited(message.id, "server_to_agent")) return;
      } else if (entry.call && !entry.cancelled) {
        this.endCall(entry, responseStatus(message), bytes.length);
      } else if (entry.method in LISTS && !message.isError && this.filterList(entry, message, bytes)) {
        return;
      }
    }
    this.options.toAgent.send(bytes);
  }

  /**
   * A list response: remember tool annotations, and hide what the visibility gate hides (DESIGN
   * decision 5). Returns true when it took over delivering the response. The original bytes go
   * out unless something was actually hidden.
   */
  private filterList(entry: Outstanding, message: Response, bytes: Uint8Array): boolean {
    const list = LISTS[entry.method];
    const result = message.body.result as Record<string, unknown> | undefined;
    const items = result?.[list?.kind ?? ""];
    if (!list || !result || !Array.isArray(items)) return false;
    const names = items.map((item) => {
      const value = (item as Record<string, unknown> | null)?.[list.key];
      return typeof value === "string" ? value : "";
    });
    if (list.kind === "tools") this.rememberAnnotations(items);
    const filter = this.options.decider.filterList;
    if (!filter) return false;
    const deliver = (visible: string[]) => {
      const keep = new Set(visible);
      const kept = items.filter((_, i) => keep.has(names[i] as string));
      if (kept.length === items.length) {
        this.options.toAgent.send(bytes);
        return;
      }
      log.info(`[${this.options.serverId}] ${entry.method}: hid ${items.length - kept.length} of ${items.length} (not exposed)`);
      this.options.toAgent.sendText(JSON.stringify({ ...message.body, result: { ...result, [list.kind]: kept } }));
    };
    let visible: string[] | Promise<string[]>;
    try {
      visible = filter.call(this.options.decider, this.options.serverId, list.kind, names);
    } catch (error) {
      visible = Promise.reject(error);
    }
    if (!(visible instanceof Promise)) {
      deliver(visible);
      return true;
    }
    visible.then(deliver, (error: unknown) => {
      // Fail closed: a list we cannot filter is not shown (development: shown, with a warning).
      if (this.options.profile === "development") {
        log.warn(`[${this.options.serverId}] WOULD_BLOCK ${entry.method}: cannot filter (${messageOf(error)}); forwarding unfiltered`);
        this.options.toAgent.send(bytes);
        return;
      }
      log.error(`[${this.options.serverId}] ${entry.method}: cannot filter (${messageOf(error)}); refusing it`);
      this.options.toAgent.sendText(
        errorResponse(entry.id, GOVERNANCE_UNAVAILABLE, `ThoughtGate cannot check ${entry.method}: ${messageOf(error)}`, {
          gate: "visibility",
          server_id: this.options.serverId,
          reason: "governance unavailable",
        }),
      );
    });
    return true;
  }

  private agentRequest(request: Request, bytes: Uint8Array): void {
    const entry: Outstanding = { id: request.id, method: request.method, startedAt: performance.now() };
    if (request.method === "initialize") this.agentCanElicit = declaresFormElicitation(request.params);
    if (request.method === "tools/call") {
      this.summary.calls_total += 1;
      // The audit identity (a UUID and a SHA-256 of canonical arguments) costs ~20% of the
      // per-call time: only computed when someone reads the event stream.
      const audited = this.options.events.enabled;
      const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
      entry.call = {
        callId: audited ? Bun.randomUUIDv7() : "",
        tool: toolNameOf(request.params) ?? "",
        argsHash: audited ? argsHash(args) : "",
      };
      if (audited) this.options.events.emit("tool_call_start", {
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
    const control = new LazyAbort();
    const key = request.id;
    if (request.method === "tools/call" && !this.toolListRead) {
      // Policies may depend on the tool's annotations (the embedded default does): an agent that
      // never listed the tools must not get past them, so the shim reads the list itself first.
      // The call is held meanwhile (a cancel for it is honoured), and then decided as usual.
      this.held.set(key, { entry, control });
      void this.readToolList().then(() => {
        if (this.held.get(key)?.entry !== entry) return; // cancelled or the server went away
        this.held.delete(key);
        this.wakeHeldWaiters();
        this.decide(request, entry, bytes, control);
      });
      return;
    }
    this.decide(request, entry, bytes, control);
  }

  private decide(request: Request, entry: Outstanding, bytes: Uint8Array, control: LazyAbort): void {
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = this.options.decider.decide(request, this.contextFor(request, control, entry));
    } catch (error) {
      verdict = decisionFailed(error);
    }
    if (!(verdict instanceof Promise)) {
      this.apply(entry, bytes, verdict, request);
      return;
    }
    // Not decided yet (a service round trip, or a human): this request alone waits (DESIGN
    // decision 6). The audit's `pending` decision comes from the decider, when it asks a human.
    const key = request.id;
    this.held.set(key, { entry, control });
    verdict
      .catch(decisionFailed)
      .then((settled) => {
        if (this.held.get(key)?.entry !== entry) return; // cancelled or the server went away
        this.held.delete(key);
        this.wakeHeldWaiters();
        if (this.toServer) this.apply(entry, bytes, settled, request);
        else this.answerUnavailable(entry);
      });
  }

  private rememberAnnotations(tools: unknown[]): void {
    for (const tool of tools) {
      const { name, annotations } = (tool ?? {}) as { name?: unknown; annotations?: unknown };
      if (typeof name === "string" && annotations !== null && typeof annotations === "object") {
        this.annotations.set(name, annotations as ToolAnnotations);
      }
    }
    this.toolListRead = true;
  }

  /** Fetch every page of the server's tools/list with the shim's own request ids (never shown to the agent). */
  private readToolList(): Promise<void> {
    this.toolListFetch ??= (async () => {
      let cursor: string | undefined;
      for (let page = 0; page < TOOL_LIST_MAX_PAGES; page++) {
        const response = await this.askServer("tools/list", cursor === undefined ? {} : { cursor });
        const result = response?.body.result as { tools?: unknown; nextCursor?: unknown } | undefined;
        if (!result || !Array.isArray(result.tools)) {
          log.warn(`[${this.options.serverId}] could not read the tool list; deciding without tool annotations`);
          return;
        }
        this.rememberAnnotations(result.tools);
        if (typeof result.nextCursor !== "string") return;
        cursor = result.nextCursor;
      }
    })().finally(() => {
      this.toolListFetch = null;
    });
    return this.toolListFetch;
  }

  /** One request to the server from the shim itself; null if it does not answer in time or is gone. */
  private askServer(method: string, params: unknown): Promise<Response | null> {
    const server = this.toServer;
    if (!server) return Promise.resolve(null);
    const id = `thoughtgate-${crypto.randomUUID()}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.shimServerRequests.delete(id);
        resolve(null);
      }, SHIM_REQUEST_TIMEOUT_MS);
      this.shimServerRequests.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      server.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  private contextFor(request: Request, control: LazyAbort, entry: Outstanding): DecisionContext {
    return {
      awaitingApproval: (reason) => this.emitDecision(entry, { action: "pending", reason }, request),
      get signal() {
        return control.signal;
      },
      serverId: this.options.serverId,
      annotations: request.method === "tools/call" ? this.annotations.get(targetName(request)) : undefined,
      elicit: this.agentCanElicit ? this.elicit : null,
    };
  }

  /** Ask the agent's user through MCP elicitation, with an id no server can have used or guess. */
  private readonly elicit = (message: string, signal: AbortSignal): Promise<boolean> =>
    new Promise<boolean>((resolve, reject) => {
      if (signal.aborted) {
        reject(new Error("approval aborted"));
        return;
      }
      const id = `thoughtgate-approval-${crypto.randomUUID()}`;
      const onAbort = () => {
        this.shimRequests.delete(id);
        this.options.toAgent.sendText(
          JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "approval no longer needed" } }),
        );
        reject(new Error("approval aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.shimRequests.set(id, (response) => {
        signal.removeEventListener("abort", onAbort);
        const result = response.body.result as { action?: unknown; content?: { approve?: unknown } } | undefined;
        resolve(!response.isError && result?.action === "accept" && result.content?.approve === true);
      });
      this.options.toAgent.sendText(
        JSON.stringify({ jsonrpc: "2.0", id, method: "elicitation/create", params: { message, requestedSchema: APPROVAL_SCHEMA } }),
      );
    });

  private apply(entry: Outstanding, bytes: Uint8Array, verdict: Verdict, request: Request): void {
    this.emitDecision(entry, verdict, request);
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
    const key = requestId;
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
    held.control.abort();
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
    this.framingErrorCounts.set(error.code, (this.framingErrorCounts.get(error.code) ?? 0) + 1);
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

  private emitDecision(entry: Outstanding, verdict: Verdict | { action: "pending"; reason: string }, request: Request): void {
    const decided = verdict.action === "pending" ? null : verdict;
    if (decided?.action === "forward" && decided.would) {
      log.warn(`[${this.options.serverId}] ${decided.would} ${request.method} ${targetName(request)}: ${decided.reason}`);
    } else if (decided?.action === "deny") {
      log.info(`[${this.options.serverId}] denied ${request.method} ${targetName(request)}: ${decided.reason}`);
    }
    if (!this.options.events.enabled) return;
    const fields = {
      decision: verdict.action,
      gate: decided?.gate ?? null,
      rule_id: decided?.ruleId ?? null,
      policy_id: decided?.policyId ?? null,
      reason: verdict.reason,
      ...(decided?.action === "forward" && decided.would ? { would: decided.would } : {}),
      ...(decided?.action === "forward" && decided.autoApproved ? { auto_approved: true } : {}),
      ...(decided?.action === "forward" && decided.approvedBy ? { approved_by: decided.approvedBy } : {}),
    };
    if (entry.call) {
      this.options.events.emit("tool_call_decision", { call_id: entry.call.callId, tool: entry.call.tool, ...fields });
    } else {
      this.options.events.emit("method_decision", { request_id: entry.id, method: request.method, name: targetName(request), ...fields });
    }
  }

  private endCall(entry: Outstanding, status: CallStatus, bytesOut: number): void {
    if (!entry.call) return;
    if (status === "error") this.summary.calls_errored += 1;
    if (!this.options.events.enabled) return;
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

/** MCP: `elicitation: {}` (2025-06-18) or `{form: {}}` (2025-11-25) means form elicitation works. */
function declaresFormElicitation(params: unknown): boolean {
  const elicitation = (params as { capabilities?: { elicitation?: unknown } } | undefined)?.capabilities?.elicitation;
  if (elicitation === null || typeof elicitation !== "object") return false;
  const modes = Object.keys(elicitation);
  return modes.length === 0 || modes.includes("form");
}

const GOVERNANCE_UNAVAILABLE = -32013;
/** The shim's own requests to the server (its tools/list) give up after this long. */
const SHIM_REQUEST_TIMEOUT_MS = 10_000;
const TOOL_LIST_MAX_PAGES = 50;

/**
 * An AbortController made only when someone asks for its signal: most decisions are synchronous
 * and never need one (a controller per call cost ~5% of the shim's time).
 */
class LazyAbort {
  private controller: AbortController | null = null;
  private aborted = false;

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.aborted) this.controller.abort();
    return this.controller.signal;
  }

  abort(): void {
    this.aborted = true;
    this.controller?.abort();
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
