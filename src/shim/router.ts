import { errorResponse, RPC, type JsonRpcId, type JsonRpcRequest, type Message } from "../core/jsonrpc.ts";
import { messageOf } from "../core/errors.ts";
import { taggedLog, type Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { GOVERNED_METHODS, type Decider } from "../governance/verdict/decider.ts";
import { redactText } from "../telemetry/redact.ts";
import { serverIdentity } from "../governance/definitions/identity.ts";
import type { Unit } from "../stdio/framer.ts";
import type { Sink } from "../stdio/line-sink.ts";
import type { FramingError } from "../stdio/validate-line.ts";
import type { EventStream, Summary } from "../telemetry/events.ts";
import { CallAudit, type Direction } from "./call-audit.ts";
import { DefinitionGuard } from "./definition-guard.ts";
import { ListChanges, resourceSubscriptionsOf } from "./list-changes.ts";
import type { CallTracer } from "./call-trace.ts";
import { declaresFormElicitation, LEGACY } from "./era.ts";
import { ListFilter } from "./list-filter.ts";
import { HeldDecisions, LazyAbort } from "./held-decisions.ts";
import { OwnRequests } from "./own-requests.ts";
import { pinPolicyOf } from "./pin-policy.ts";
import { RequestTracker, type PendingRequest } from "./request-tracker.ts";
import { ResultScanner } from "./result-scanner.ts";
import { RetryAsks } from "./retry-asks.ts";
import { SCAN_EVERYTHING } from "../governance/verdict/secret-policy.ts";
import { ToolCatalog } from "./tool-catalog.ts";
import { compose, describePipeline, type Pipeline, type StageProbe } from "../pipeline/stages.ts";
import type { Answer } from "./stages/answer.ts";
import { auditStage } from "./stages/audit-stage.ts";
import { decideStage } from "./stages/decide-stage.ts";
import { definitionsStage } from "./stages/definitions-stage.ts";
import { forwardStage } from "./stages/forward-stage.ts";
import type { GovernedRequest } from "./stages/governed-request.ts";
import { listsStage } from "./stages/lists-stage.ts";
import { parseStage } from "./stages/parse-stage.ts";
import { secretsStage } from "./stages/secrets-stage.ts";
import { traceStage } from "./stages/trace-stage.ts";

export type { Sink };

export type RouterOptions = {
  serverId: string;
  profile: Profile;
  decider: Decider;
  events: EventStream;
  toAgent: Sink;
  /** null: the server is not running; every request is answered with an error. */
  toServer: Sink | null;
  serverUnavailable?: string;
  /** What runs the server (its pins are kept under `serverId` and this): the command line, or the URL. */
  serverCommand?: readonly string[];
  serverUrl?: string | undefined;
  /** The spans of governed requests; absent when tracing is off. */
  trace?: CallTracer | undefined;
  /** Told each time a stage is entered (tests count entries per call with it). */
  stageProbe?: StageProbe | undefined;
};


/**
 * The shim's routing logic, free of I/O: validated units in, lines out to the agent and the server.
 * It keeps the connection's concerns (ids, cancels, duplicate ids, too many pending, the server
 * gone) and builds the shim's stages once, in the order src/pipeline/stages.ts declares: every
 * governed request goes in through them, every answer to one of the agent's requests comes back
 * through them. One instance per shim (both directions of one connection are one state machine).
 */
export class Router {
  /** Agent requests the server has not answered yet. */
  readonly agentRequests = new RequestTracker();
  /** Server requests (sampling, elicitation, roots) the agent has not answered yet. */
  readonly serverRequests = new RequestTracker();
  readonly audit: CallAudit;
  private readonly held = new HeldDecisions();
  private readonly own: OwnRequests;
  private readonly catalog: ToolCatalog;
  private readonly lists: ListFilter;
  private readonly definitions: DefinitionGuard;
  private readonly secrets: ResultScanner;
  private readonly asks: RetryAsks;
  /** The way in of a governed request: parse → lists → definitions → decide → audit → trace → forward. */
  private readonly requestStages: Pipeline<GovernedRequest>;
  /** The way back of an answer: secrets → definitions → audit → trace. */
  private readonly answerStages: Pipeline<Answer>;
  private readonly log: Logger;
  private readonly listChanges: ListChanges;
  private toServer: Sink | null;
  private serverUnavailable: string;
  /** Requests are being refused for too many pending (logged once until one is accepted again). */
  private refusing = false;

  constructor(private readonly options: RouterOptions) {
    this.toServer = options.toServer;
    this.serverUnavailable = options.serverUnavailable ?? "the MCP server is not running";
    this.log = taggedLog(options.serverId);
    this.audit = new CallAudit(options.events, this.log, () => options.decider.auditArguments?.() ?? true);
    this.own = new OwnRequests(options.toAgent, () => this.toServer);
    this.catalog = new ToolCatalog(this.log);
    this.listChanges = new ListChanges(options.toAgent, (id) => this.agentRequests.has(id));
    const identity = serverIdentity(options.serverId, options.serverCommand ?? [], options.serverUrl);
    this.definitions = new DefinitionGuard({
      identity,
      log: this.log,
      events: options.events,
      onUnblocked: (kinds) => this.listChanges.announce(kinds),
    });
    const pinPolicy = () => pinPolicyOf(options.decider, options.serverId, options.profile, this.log);
    this.lists = new ListFilter({ ...options, catalog: this.catalog, log: this.log, audit: this.audit, definitions: this.definitions, pinPolicy });
    const decider = options.decider;
    this.secrets = new ResultScanner({
      profile: options.profile,
      events: options.events,
      log: this.log,
      policy: () => decider.secretScan?.(options.serverId) ?? SCAN_EVERYTHING,
    });
    this.asks = new RetryAsks(options.serverId, this.held, options.toAgent, this.audit);
    this.log.debug(`every call passes the stages in this order (${describePipeline().replaceAll("\n", "; ")})`);
    const { held, catalog, own, listChanges } = this;
    const definitions = definitionsStage(this.lists, { guard: this.definitions, pinPolicy, held, listChanges, log: this.log });
    const audit = auditStage<GovernedRequest>(this.audit);
    const trace = traceStage<GovernedRequest>(options.trace);
    this.requestStages = compose<GovernedRequest>(
      [
        parseStage({ serverId: options.serverId, asks: this.asks, trace: options.trace }),
        listsStage({ catalog, definitions: this.definitions, pinPolicy, own, held }),
        definitions,
        decideStage({ serverId: options.serverId, server: { command: identity.command, url: identity.url }, decider, catalog, held, audit: this.audit, asks: this.asks, own, definitions: this.definitions, listChanges }),
        audit,
        trace,
        forwardStage<GovernedRequest>((entry, bytes) => this.toServerFor(entry, bytes), options.toAgent),
      ],
      "request",
      options.stageProbe,
    );
    this.answerStages = compose<Answer>([secretsStage(this.secrets), definitions, audit, trace], "response", options.stageProbe);
  }

  get summary(): Summary {
    return this.audit.summary;
  }

  get decisionsInFlight(): number {
    return this.held.size;
  }

  /** Resolves when a pending decision settles (for backpressure). */
  decisionSettled(): Promise<void> {
    return this.held.settled();
  }

  fromAgent(unit: Unit): void {
    this.route(unit, "agent_to_server");
  }

  fromServer(unit: Unit): void {
    this.route(unit, "server_to_agent");
  }

  /** The server exited or could not start: answer everything still waiting on it, so no agent request hangs. */
  serverGone(detail: string): void {
    this.toServer = null;
    this.serverUnavailable = detail;
    for (const entry of this.held.drain()) this.answerUnavailable(entry);
    // A cancelled request has no one waiting for it: nothing to answer.
    for (const entry of this.agentRequests.drain()) if (!entry.cancelled) this.answerUnavailable(entry);
    this.serverRequests.drain();
  }

  /** Report requests that have waited longer than `timeoutMs`, once each. */
  reportOrphans(now: number, timeoutMs: number): void {
    this.audit.orphans(this.agentRequests, "agent_to_server", now, timeoutMs);
    this.audit.orphans(this.serverRequests, "server_to_agent", now, timeoutMs);
  }

  /**
   * Route one unit. Whatever goes wrong while routing a message (a bug, an input no check foresaw)
   * fails closed for that message alone: a request gets an error answer and reaches no one, and the
   * proxy goes on with the next line (it must never look like the stream ended).
   */
  private route(unit: Unit, direction: Direction): void {
    try {
      this.routeUnit(unit, direction);
    } catch (error) {
      this.log.error(`failed to route a ${direction.replaceAll("_", " ")} message (${messageOf(error)}); not forwarded`);
      if (unit.kind !== "message" || unit.message.kind !== "request") return;
      const sender = direction === "agent_to_server" ? this.options.toAgent : this.toServer;
      sender?.sendText(errorResponse(unit.message.id, RPC.internalError, `ThoughtGate could not process the request: ${messageOf(error)}`, { gate: "governance", server_id: this.options.serverId, reason: "internal error" }));
    }
  }

  private routeUnit(unit: Unit, direction: Direction): void {
    if (unit.kind === "message") {
      this.audit.message(direction, unit.message);
      if (direction === "agent_to_server") this.agentMessage(unit.message, unit.bytes);
      else this.serverMessage(unit.message, unit.bytes);
      return;
    }
    if (unit.kind === "rejected") {
      this.rejected(unit.error, direction);
      return;
    }
    this.audit.smuggling();
    if (this.options.profile === "production") {
      this.rejected(unit.error, direction);
      return;
    }
    this.audit.framing(unit.error, direction, "would_reject", undefined);
    for (const replayed of unit.replay) this.routeUnit(replayed, direction);
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
      if (this.own.takeAgentAnswer(message)) return;
      if (!this.serverRequests.settle(message.id) && !this.unsolicited(message.id, "agent_to_server")) return;
    }
    this.toServer?.send(bytes);
  }

  private serverMessage(message: Message, bytes: Uint8Array): void {
    if (message.kind === "response" && this.own.takeServerAnswer(message)) return;
    if (message.kind === "notification" && message.method === "notifications/tools/list_changed") this.catalog.invalidate();
    if (message.kind === "request") {
      if (this.serverRequests.has(message.id)) {
        this.duplicateId(message, bytes, "server_to_agent");
        return;
      }
      const refused = this.serverRequests.refusal(message.id, message.method);
      if (refused) {
        this.tooManyPending(message, "server_to_agent", refused);
        return;
      }
      this.serverRequests.add({ id: message.id, method: message.method, startedAt: performance.now() });
    } else if (message.kind === "response" && message.id !== null) {
      const entry = this.agentRequests.settle(message.id);
      if (!entry) {
        if (!this.unsolicited(message.id, "server_to_agent")) return;
      } else {
        if (entry.call && !entry.cancelled) this.asks.serverAnswered(entry, message);
        const answer: Answer = { entry, message, bytes, delivered: false, responseAt: -1 };
        // Synchronous: every stage on the way back answers at once (src/pipeline/stages.ts).
        void this.answerStages(answer);
        if (answer.delivered) return;
        bytes = answer.bytes;
      }
    }
    this.options.toAgent.send(bytes);
  }

  private agentRequest(request: JsonRpcRequest, bytes: Uint8Array): void {
    if (this.agentRequests.has(request.id) || this.held.has(request.id)) {
      // Reusing the id of a pending request would lose the first (its approval, its answer).
      this.duplicateId(request, bytes, "agent_to_server");
      return;
    }
    // Those awaiting their decision are bounded by the backpressure (decision 6), and counted here too.
    const refused = this.agentRequests.refusal(request.id, request.method, this.held.size);
    if (refused) {
      this.tooManyPending(request, "agent_to_server", refused);
      return;
    }
    this.refusing = false;
    const entry: PendingRequest = { id: request.id, method: request.method, startedAt: performance.now() };
    if (request.method === "initialize") {
      this.listChanges.initialized();
      const params = request.params as { capabilities?: unknown; protocolVersion?: unknown; clientInfo?: { name?: unknown } } | undefined;
      const answering = this.own.formsAnsweredBy(params?.clientInfo?.name);
      this.own.agentCanElicit = declaresFormElicitation(params?.capabilities) && answering.length === 0;
      if (answering.length > 0) {
        this.log.warn(`${answering.join(", ")} ha${answering.length === 1 ? "s" : "ve"} an Elicitation or ElicitationResult hook (or cannot be read), which could answer ThoughtGate's approval form in the person's place: the agent is put no form, approvals go to the page, the desktop and thoughtgate approve`);
      }
      this.own.agentProtocolVersion = typeof params?.protocolVersion === "string" ? params.protocolVersion : null;
    }
    if (request.method === "tools/list") entry.firstPage = (request.params as { cursor?: unknown } | undefined)?.cursor === undefined;
    if (request.method === "subscriptions/listen") {
      entry.longLived = true;
      this.listChanges.listening(request.id, request.params);
    }
    if (request.method === "tools/call") this.audit.startCall(entry, request);
    if (GOVERNED_METHODS.has(request.method)) this.secrets.scanRequest(bytes, entry);
    if (!this.toServer) {
      this.answerUnavailable(entry);
      return;
    }
    let subscriptions: unknown[] | null | undefined;
    if (request.method === "subscriptions/listen") {
      // MCP 2026-07-28: a listen's resource subscriptions replace `resources/subscribe`, and are governed as such.
      const uris = resourceSubscriptionsOf(request.params);
      if (uris === null || uris.length > 0) subscriptions = uris;
    }
    if (subscriptions === undefined && !GOVERNED_METHODS.has(request.method)) {
      this.agentRequests.add(entry);
      this.toServer.send(bytes);
      return;
    }
    // The way in, once: synchronous unless a stage waits (a catalog read, the pins, a person).
    void this.requestStages({ entry, request, bytes, era: LEGACY, control: new LazyAbort(), subscriptions, requestAt: -1 });
  }

  /** A request let through: tracked for its answer and sent, or answered unavailable if the server went away meanwhile. */
  private toServerFor(entry: PendingRequest, bytes: Uint8Array): void {
    if (!this.toServer) {
      this.answerUnavailable(entry);
      return;
    }
    this.agentRequests.add(entry);
    this.toServer.send(bytes);
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
    const held = this.held.cancel(requestId);
    if (!held) {
      const forwarded = this.agentRequests.get(requestId);
      if (forwarded && !forwarded.cancelled) {
        forwarded.cancelled = true;
        this.audit.endCall(forwarded, "cancelled", 0);
      }
      return false;
    }
    // The server never saw this request, so the cancel is not forwarded (docs/architecture.md, decision 6).
    this.audit.endCall(held, "cancelled", 0);
    return true;
  }

  /** A request reusing the id of one still pending in the same direction: answered with an error, not forwarded. */
  private duplicateId(request: JsonRpcRequest, bytes: Uint8Array, direction: Direction): void {
    const detail = `request id ${JSON.stringify(request.id)} is already in use by a pending request`;
    const error: FramingError = { code: "DuplicateRequestId", detail, raw: bytes, size: bytes.length, id: request.id, looksLikeRequest: true };
    const sender = direction === "agent_to_server" ? this.options.toAgent : this.toServer;
    sender?.sendText(errorResponse(request.id, RPC.invalidRequest, `ThoughtGate rejected the request: ${detail}`, this.errorData(error)));
    this.audit.framing(error, direction, "rejected", request.id);
  }

  /**
   * A request past what may wait for the other side (request-tracker.ts, MAX_PENDING_REQUESTS):
   * answered with an error at once, never forwarded, so a peer that does not answer cannot grow the
   * shim without end. Logged once per run of refusals, not once per request.
   */
  private tooManyPending(request: JsonRpcRequest, direction: Direction, reason: string): void {
    const waitingOn = direction === "agent_to_server" ? `MCP server "${this.options.serverId}"` : "the agent";
    const detail = `${reason} from ${waitingOn}`;
    const sender = direction === "agent_to_server" ? this.options.toAgent : this.toServer;
    sender?.sendText(errorResponse(request.id, RPC.tooManyPending, `ThoughtGate refused the request: ${detail}; answer or cancel some first`, { gate: "transport", server_id: this.options.serverId, reason: detail }));
    if (!this.refusing) this.log.warn(`refusing ${direction.replaceAll("_", " ")} requests: ${detail}`);
    this.refusing = true;
  }

  /** A response to a request that was never sent. Returns whether to forward it. */
  private unsolicited(id: JsonRpcId, direction: Direction): boolean {
    const development = this.options.profile === "development";
    this.audit.unsolicited(id, direction, development);
    return development;
  }

  private rejected(error: FramingError, direction: Direction): void {
    const development = this.options.profile === "development";
    const receiver = direction === "agent_to_server" ? this.toServer : this.options.toAgent;
    // JSON that is not JSON-RPC is forwarded in development, reported as WOULD_DROP.
    if (development && (error.code === "NotJsonRpc" || error.code === "MissingJsonRpcVersion")) {
      this.audit.framing(error, direction, "would_reject", undefined);
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
        const line = errorResponse(entry.id, RPC.framingRejected, `ThoughtGate rejected the response: ${error.code}`, this.errorData(error));
        receiver?.sendText(line);
        this.audit.endCall(entry, "error", Buffer.byteLength(line));
      }
    }
    this.audit.framing(error, direction, "rejected", answered);
  }

  /** The detail may hold bytes of the rejected line (a name, a method): redacted as in the log before the other side sees it. */
  private errorData(error: FramingError): Record<string, unknown> {
    return { gate: "framing", reason: error.code, detail: redactText(error.detail), server_id: this.options.serverId };
  }

  private answerUnavailable(entry: PendingRequest): void {
    const line = errorResponse(entry.id, RPC.serverUnavailable, `MCP server "${this.options.serverId}" is unavailable: ${this.serverUnavailable}`, {
      gate: "transport",
      server_id: this.options.serverId,
      reason: this.serverUnavailable,
    });
    this.options.toAgent.sendText(line);
    this.audit.endCall(entry, "server_unavailable", Buffer.byteLength(line));
  }

}
