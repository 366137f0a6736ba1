import { capLabelValue, Counter, Gauge, Histogram, renderMetrics } from "./prometheus.ts";
import { DROP_REASONS, type TracerStats } from "./tracing/tracer.ts";

/** A server counts as active while its shim has been heard from within this window (3 heartbeats). */
const ACTIVE_SERVER_WINDOW_MS = 15_000;

/**
 * A shim's MCP server: `starting` (the shim is up and about to start it), `running`, `exited` (it
 * stopped, on its own with status 0 or because the shim stopped it), `failed` (it could not start,
 * or died on its own with a non-zero status or a signal).
 */
export const SERVER_STATES = ["starting", "running", "exited", "failed"] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/**
 * Label values come from shims, and through them from agents and servers (a method name is
 * whatever a line says). Each distinct value is a series kept for the life of the service, so they
 * are bounded: the MCP methods of the specification (2025-11-25) and `response` pass, a few other
 * names per server are kept, and the rest count as `other`; so do servers past `MAX_SERVERS`.
 */
const OTHER_LABEL = "other";
const MAX_SERVERS = 100;
const MAX_OTHER_METHODS_PER_SERVER = 10;

const KNOWN_MCP_METHODS: ReadonlySet<string> = new Set([
  "response",
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "sampling/createMessage",
  "elicitation/create",
  "roots/list",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/message",
  "notifications/resources/updated",
  "notifications/resources/list_changed",
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/roots/list_changed",
  "notifications/elicitation/complete",
  "notifications/tasks/status",
]);

/** The shim's framing error codes (src/stdio/validate-line.ts) and its unsolicited-response report. */
export const KNOWN_FRAMING_ERRORS: ReadonlySet<string> = new Set([
  "MessageTooLarge",
  "InvalidUtf8",
  "ByteOrderMark",
  "BareCarriageReturn",
  "InvalidJson",
  "UnsupportedBatch",
  "NotAnObject",
  "MissingJsonRpcVersion",
  "NotJsonRpc",
  "InvalidId",
  "SmugglingAttempt",
  "TruncatedLine",
  "DuplicateKey",
  "NestingTooDeep",
  "DuplicateRequestId",
  "UnsolicitedResponse",
]);

const DIRECTIONS: ReadonlySet<string> = new Set(["agent_to_server", "server_to_agent"]);

/**
 * What a Slack call can fail with: the Web API errors the approvals use are named (others are
 * bounded like method names), plus what ThoughtGate itself saw (no answer, an HTTP status, an
 * answer that was not Slack's).
 */
const KNOWN_SLACK_ERRORS: ReadonlySet<string> = new Set([
  "unreachable",
  "timeout",
  "invalid_response",
  "http_error",
  "ratelimited",
  "not_authed",
  "invalid_auth",
  "token_revoked",
  "token_expired",
  "account_inactive",
  "missing_scope",
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "message_not_found",
  "cant_update_message",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "link_disabled",
  "socket_closed",
]);
const SLACK_METHODS: ReadonlySet<string> = new Set(["chat.postMessage", "chat.update", "chat.postEphemeral", "reactions.get", "apps.connections.open", "socket_mode"]);
const MAX_OTHER_SLACK_ERRORS = 20;

/** At most `max` distinct values are admitted; the ones seen first keep their label. */
class LabelBudget {
  private readonly admitted = new Set<string>();
  constructor(private readonly max: number) {}

  label(value: string, known?: ReadonlySet<string>): string {
    if (known?.has(value) || this.admitted.has(value)) return value;
    if (this.admitted.size >= this.max) return OTHER_LABEL;
    this.admitted.add(value);
    return value;
  }
}

/**
 * The governance service's metrics (docs/governance.md, Metrics), plus Cedar latency and refused calls.
 * Shims report message and framing counts through POST /governance/events; decisions, approvals
 * and heartbeats are counted by the service itself.
 */
/** What the audit's OTLP logs export delivered and lost (src/record/otlp-logs.ts). */
export type AuditStats = { exported: number; dropped: { queue_full: number; export_failed: number; shutdown: number } };

export class GovernanceMetrics {
  readonly messages = new Counter("thoughtgate_stdio_messages_total", "JSON-RPC messages seen by shims");
  readonly decisions = new Counter("thoughtgate_stdio_governance_decisions_total", "Governance decisions by outcome");
  readonly framingErrors = new Counter("thoughtgate_stdio_framing_errors_total", "Lines rejected by shims' framing checks");
  readonly approvalLatency = new Histogram(
    "thoughtgate_stdio_approval_latency_seconds",
    "Time from an approval task's creation to its outcome",
    [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  );
  readonly cedarLatency = new Histogram(
    "thoughtgate_cedar_evaluation_seconds",
    "Engine evaluations that ran the Cedar gate",
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05],
  );
  readonly unauthorized = new Counter("thoughtgate_governance_unauthorized_total", "Calls refused for a missing or wrong secret");
  readonly slackErrors = new Counter("thoughtgate_slack_errors_total", "Slack Web API calls and Socket Mode connections that failed, by method and error");
  private readonly otherSlackErrors = new LabelBudget(MAX_OTHER_SLACK_ERRORS);
  private readonly servers = new LabelBudget(MAX_SERVERS);
  private readonly otherMethods = new Map<string, LabelBudget>();
  private readonly otherFramingErrors = new Map<string, LabelBudget>();
  private readonly serverStates = new Map<string, ServerState>();
  private readonly lastSeen = new Map<string, number>();
  private readonly states = new Gauge("thoughtgate_stdio_server_state", "1 for each server's current state, 0 for the others", () =>
    [...this.serverStates].flatMap(([serverId, current]) =>
      SERVER_STATES.map((state) => ({ labels: { server_id: serverId, state }, value: state === current ? 1 : 0 })),
    ),
  );
  /** The service's tracer, when it traces (docs/governance.md, "Traces"): what it exported and lost. */
  private traceStats: () => TracerStats = () => ({ exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } });
  private readonly spansExported = new Counter("thoughtgate_trace_spans_exported_total", "Spans the OTLP exporter delivered (the service's and its shims')", () => [
    { labels: {}, value: this.traceStats().exported },
  ]);
  private readonly spansDropped = new Counter(
    "thoughtgate_trace_spans_dropped_total",
    "Spans lost: queue_full (bounded queue), export_failed (collector down or refusing), shutdown (still queued at exit); a shim's own losses included",
    () => DROP_REASONS.map((reason) => ({ labels: { reason }, value: this.traceStats().dropped[reason] })),
  );
  /** The session's audit export to OTLP logs, when on (docs/governance.md, "The audit in your log pipeline"). */
  private auditStats: () => AuditStats = () => ({ exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } });
  private readonly auditExported = new Counter("thoughtgate_audit_records_exported_total", "Calls of the session's record the OTLP logs exporter delivered", () => [
    { labels: {}, value: this.auditStats().exported },
  ]);
  private readonly auditDropped = new Counter(
    "thoughtgate_audit_records_dropped_total",
    "Calls not delivered as OTLP log records: queue_full (bounded queue), export_failed (collector down or refusing), shutdown (still queued at exit); the local record keeps them all",
    () => (["queue_full", "export_failed", "shutdown"] as const).map((reason) => ({ labels: { reason }, value: this.auditStats().dropped[reason] })),
  );
  private readonly activeServers = new Gauge("thoughtgate_stdio_active_servers", "Servers whose shim was heard from recently", () => [
    { labels: {}, value: this.activeServerIds().length },
  ]);

  constructor(private readonly now: () => number = Date.now) {
    // A scrape shows the refusal counter at 0 rather than leaving it out until the first refusal.
    this.unauthorized.inc({}, 0);
  }

  /** The `server_id` label for a server id a shim sent: capped in length and in number. */
  serverLabel(serverId: string): string {
    return this.servers.label(capLabelValue(serverId));
  }

  /** A shim was heard from (heartbeat, evaluate, events). */
  seen(serverId: string): void {
    this.lastSeen.set(this.serverLabel(serverId), this.now());
  }

  setServerState(serverId: string, state: ServerState): void {
    this.serverStates.set(this.serverLabel(serverId), state);
  }

  countDecision(serverId: string, decision: string, profile: string): void {
    this.decisions.inc({ server_id: this.serverLabel(serverId), decision, profile });
  }

  observeApproval(serverId: string, seconds: number): void {
    this.approvalLatency.observe({ server_id: this.serverLabel(serverId) }, seconds);
  }

  /** A shim's message counts: method names beyond the known ones are bounded per server. */
  countMessages(serverId: string, direction: string, method: string, count: number): void {
    const server = this.serverLabel(serverId);
    const label = budgetFor(this.otherMethods, server, MAX_OTHER_METHODS_PER_SERVER).label(capLabelValue(method), KNOWN_MCP_METHODS);
    this.messages.inc({ server_id: server, direction: DIRECTIONS.has(direction) ? direction : OTHER_LABEL, method: label }, count);
  }

  countFramingErrors(serverId: string, errorType: string, count: number): void {
    const server = this.serverLabel(serverId);
    const label = budgetFor(this.otherFramingErrors, server, MAX_OTHER_METHODS_PER_SERVER).label(capLabelValue(errorType), KNOWN_FRAMING_ERRORS);
    this.framingErrors.inc({ server_id: server, error_type: label }, count);
  }

  /** One failed Slack call (`method`: the Web API method, or `socket_mode` for the WebSocket). */
  countSlackError(method: string, error: string): void {
    const errorLabel = this.otherSlackErrors.label(capLabelValue(error), KNOWN_SLACK_ERRORS);
    this.slackErrors.inc({ method: SLACK_METHODS.has(method) ? method : OTHER_LABEL, error: errorLabel });
  }

  watchTracing(stats: () => TracerStats): void {
    this.traceStats = stats;
  }

  watchAuditExport(stats: () => AuditStats): void {
    this.auditStats = stats;
  }

  activeServerIds(): string[] {
    const since = this.now() - ACTIVE_SERVER_WINDOW_MS;
    return [...this.lastSeen].filter(([, at]) => at >= since).map(([id]) => id);
  }

  render(): string {
    return renderMetrics([
      this.messages,
      this.decisions,
      this.framingErrors,
      this.states,
      this.approvalLatency,
      this.activeServers,
      this.cedarLatency,
      this.unauthorized,
      this.slackErrors,
      this.spansExported,
      this.spansDropped,
      this.auditExported,
      this.auditDropped,
    ]);
  }
}

function budgetFor(budgets: Map<string, LabelBudget>, server: string, max: number): LabelBudget {
  let budget = budgets.get(server);
  if (!budget) {
    budget = new LabelBudget(max);
    budgets.set(server, budget);
  }
  return budget;
}
