import { Counter, Gauge, Histogram, renderMetrics } from "./prometheus.ts";

/** A server counts as active while its shim has been heard from within this window (3 heartbeats). */
export const ACTIVE_SERVER_WINDOW_MS = 15_000;

const SERVER_STATES = ["running", "failed_to_start", "exited", "terminated"] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/**
 * The governance service's metrics (docs/governance.md, Metrics), plus Cedar latency and refused calls.
 * Shims report message and framing counts through POST /governance/events; decisions, approvals
 * and heartbeats are counted by the service itself.
 */
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
  private readonly serverStates = new Map<string, ServerState>();
  private readonly lastSeen = new Map<string, number>();
  private readonly states = new Gauge("thoughtgate_stdio_server_state", "1 for each server's current state, 0 for the others", () =>
    [...this.serverStates].flatMap(([serverId, current]) =>
      SERVER_STATES.map((state) => ({ labels: { server_id: serverId, state }, value: state === current ? 1 : 0 })),
    ),
  );
  private readonly activeServers = new Gauge("thoughtgate_stdio_active_servers", "Servers whose shim was heard from recently", () => [
    { labels: {}, value: this.activeServerIds().length },
  ]);

  constructor(private readonly now: () => number = Date.now) {
    // A scrape shows the refusal counter at 0 rather than leaving it out until the first refusal.
    this.unauthorized.inc({}, 0);
  }

  /** A shim was heard from (heartbeat, evaluate, events). */
  seen(serverId: string): void {
    this.lastSeen.set(serverId, this.now());
  }

  setServerState(serverId: string, state: ServerState): void {
    this.serverStates.set(serverId, state);
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
    ]);
  }
}
