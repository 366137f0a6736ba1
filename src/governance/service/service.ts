import type { Server } from "bun";
import { hostname, userInfo } from "node:os";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import type { Profile } from "../../core/profile.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { GovernanceMetrics } from "../../telemetry/metrics.ts";
import { redactText } from "../../telemetry/redact.ts";
import { formatTraceparent } from "../../telemetry/tracing/trace-context.ts";
import { NO_TRACER, type Tracer } from "../../telemetry/tracing/tracer.ts";
import { VERSION } from "../../version.ts";
import { approvalsApi } from "./approvals-api.ts";
import type { AlwaysResult } from "../approval/always-allow.ts";
import { DesktopNotifier, type NotifyTool } from "../approval/desktop-notifier.ts";
import { approvalPageHtml } from "./approval-page.ts";
import type { PolicyEngine } from "../engine/engine.ts";
import { createEvaluator } from "./evaluation.ts";
import { bearer, failure, hostProblem, isCrossOrigin, json, loopbackHosts, newNonce, pageHeaders, pathOf, readJson, toResponse } from "./http-guard.ts";
import { secretDigest, secretMatches } from "../wire/secrets.ts";
import { shimApi, taskChange } from "./shim-api.ts";
import { CHANNEL_PATH, shimChannels } from "./shim-channel.ts";
import { spanRelayHandler } from "./span-relay.ts";
import { SessionGrants } from "../approval/session-grants.ts";
import { systemClock, TaskStore, type Channel, type ChangeResult, type Clock, type Task } from "../approval/tasks.ts";
import { SlackApprovals } from "../approval/slack/slack-approvals.ts";
import { collectWhenIdle } from "../../core/idle-collector.ts";

const HEARTBEAT_PATH = "/governance/heartbeat";

export { newSecret } from "../wire/secrets.ts";
export { POLL_INTERVAL_MS } from "./evaluation.ts";

export type ServiceOptions = {
  /** The engine, or a getter so a reload can swap it under a running service. */
  engine: PolicyEngine | (() => PolicyEngine);
  profile: Profile;
  /** What shims hold: asks for decisions, relays an elicitation answer only with the task's relay token. */
  sessionSecret: string;
  /** The approvals page's key (channel web): printed in the page URL's fragment, never written to disk. */
  pageKey: string;
  /** `thoughtgate approve|deny|tasks`'s key (channel cli): printed, and in the service descriptor (0600). */
  cliKey: string;
  /** 0 (the default): any free port. */
  port?: number;
  host?: string;
  /** Who asks for approvals, as a Slack message says ("thoughtgate serve on ada@laptop"). */
  origin?: string;
  /** For tests: task timeouts without waiting. */
  clock?: Clock;
  maxTasks?: number;
  /**
   * False when the agent is known to answer no elicitation (`claude -p`, `codex exec`: wrap knows
   * these modes): no shim is offered elicitation, and approvals go to people's channels at once.
   */
  agentCanAsk?: boolean;
  /** Announce approvals on the desktop with this tool (src/governance/approval/desktop-notifier.ts); none: no notifications. */
  desktop?: NotifyTool | null;
  /** "Always allow" from the approvals page (src/governance/approval/always-allow.ts); absent: refused as not possible here. */
  alwaysAllow?: (task: Task) => Promise<AlwaysResult>;
  /** Tracing on (docs/governance.md, Traces): the service's tracer (governance/engine/tracing.ts), and what its session span is called. */
  tracer?: Tracer;
  role?: "wrap" | "serve";
  /**
   * A wrap session's project (the project root wrap was started in): every call of the session is
   * decided in it, whatever a shim says. Absent (`serve`): each shim's own project.
   */
  sessionProject?: string;
};

export type GovernanceService = {
  /** `http://127.0.0.1:<port>`: what shims get in THOUGHTGATE_GOVERNANCE_ENDPOINT. */
  url: string;
  port: number;
  /**
   * The approvals page with its key in the fragment (`/approvals#key=…`): a browser never sends a
   * fragment, so the key is in no request line, Referer or log. Print it, never write it to disk.
   */
  approvalsUrl: string;
  tasks: TaskStore;
  /** "Allow for this session" grants; they end with the service. */
  grants: SessionGrants;
  metrics: GovernanceMetrics;
  /** Tell every shim to drain: pushed on every open channel at once, and carried by every answer from now on. */
  setShutdown(): void;
  stop(): Promise<void>;
};

/** Above the shim's 10 MiB line limit, so any line it accepted fits in an evaluate body. */
const MAX_BODY_BYTES = 12 * 1024 * 1024;
/** At stop, how long the spans still queued may take to reach the collector before they are dropped. */
const TRACE_FLUSH_MS = 2_000;

/**
 * The local governance service (docs/architecture.md, decision 7): shims ask it for decisions,
 * people answer approvals through it. It binds loopback only, and every call but the page itself
 * needs a credential (docs/governance.md, Credentials): the session secret for shims, which asks
 * but never approves; the page key (web) or the CLI key (cli) for people. The channel a decision is
 * recorded under is the credential's.
 */
export function startGovernanceService(options: ServiceOptions): GovernanceService {
  const engine = typeof options.engine === "function" ? options.engine : () => options.engine as PolicyEngine;
  const host = options.host ?? "127.0.0.1";
  const clock = options.clock;
  const metrics = new GovernanceMetrics(clock ? () => clock.now() : undefined);
  const grants = new SessionGrants();
  let notifier: DesktopNotifier | null = null;
  // Slack decides through the task store like every channel (docs/architecture.md, "An approval channel").
  const slack = new SlackApprovals({ decide: (id, decision, channel) => tasks.decide(id, decision, channel), metrics, origin: options.origin ?? defaultOrigin() });
  const tasks: TaskStore = new TaskStore({
    ...(clock ? { clock } : {}),
    ...(options.maxTasks !== undefined ? { capacity: options.maxTasks } : {}),
    onCreate: (task) => slack.created(task),
    onFinish: (task) => {
      slack.finished(task);
      metrics.observeApproval(task.serverId, ((task.finishedAt ?? task.createdAt) - task.createdAt) / 1000);
      const by = task.decidedBy && task.decidedBy !== "timeout" ? ` by ${task.decidedBy}` : "";
      const scope = task.scope === "session" ? " for this session" : task.scope === "always" ? " always" : "";
      log.info(showInvisible(redactText(`approval task ${task.id} (${task.serverId}.${task.name}): ${task.status.replace("_", " ")}${scope}${by}`)));
      // "Allow for this session", from whichever channel: later calls of this tool are approved by the grant.
      if (task.status === "approved" && task.scope === "session" && task.decidedBy) grants.grant(task, task.id, task.decidedBy, (clock ?? systemClock).now());
      notifier?.finished(task);
    },
  });
  const sessionDigest = secretDigest(options.sessionSecret);
  const pageDigest = secretDigest(options.pageKey);
  const cliDigest = secretDigest(options.cliKey);
  let shutdown = false;
  let allowedHosts = new Set<string>();
  const tracer = options.tracer ?? NO_TRACER;
  // The session's span: every shim's session span hangs under it, so a session is one trace.
  const sessionSpan = tracer.session(`thoughtgate ${options.role ?? "serve"}`, { "thoughtgate.profile": options.profile });
  metrics.watchTracing(() => tracer.stats);
  const approvals = approvalsApi({ tasks, grants, changed: (result, id) => changed(result, id), ...(options.alwaysAllow ? { alwaysAllow: options.alwaysAllow } : {}) });
  const evaluate = createEvaluator({
    engine,
    profile: options.profile,
    tasks,
    grants,
    metrics,
    shuttingDown: () => shutdown,
    ...(options.agentCanAsk === false ? { agentCanAsk: false } : {}),
    ...(options.sessionProject ? { sessionProject: options.sessionProject } : {}),
    onPending: (task, agentAsking) => notifier?.pending(task, agentAsking),
    tracer,
  });

  const unauthorized = (what: string) => {
    metrics.unauthorized.inc();
    return failure(401, "unauthorized", `missing or wrong ${what}`);
  };

  function changed(result: ChangeResult, id: string): Response {
    return toResponse(taskChange(result, id, { tasks, metrics, shutdown }));
  }

  const tracing = tracer.root ? { traceparent: formatTraceparent(tracer.root), spans: spanRelayHandler(tracer, metrics, () => shutdown) } : undefined;
  const api = shimApi({ evaluate, engine, profile: options.profile, metrics, tasks, shuttingDown: () => shutdown, unanswered: (task) => notifier?.unanswered(task), ...(tracing ? { tracing } : {}) });
  // Decisions, audit and page requests so far: the heap is collected once they stop for a second.
  // Heartbeats are not traffic (every shim sends one each 5 s; counted, they would collect each time).
  let activity = 0;
  const channels = shimChannels((method, path, body) => {
    if (path !== HEARTBEAT_PATH) activity += 1;
    return api(method, path, body);
  }, MAX_BODY_BYTES);

  /** `/healthz`, `/metrics` and `/governance/*`: what shims (session secret) call. */
  async function governance(request: Request, path: string): Promise<Response> {
    const method = request.method;
    if (path === "/healthz" && method === "GET") return json({ status: "ok", version: VERSION, profile: options.profile });
    if (path === "/metrics" && method === "GET") {
      return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
    }
    if (!path.startsWith("/governance/")) return failure(404, "not_found", `no such endpoint: ${method} ${path}`);
    const read = await readJson(request);
    return toResponse(read.ok ? api(method, path, read.raw) : read.answer);
  }

  /** Which person's key a request carries: both are compared every time, in constant time. */
  function personChannel(request: Request): Channel | null {
    const given = bearer(request);
    const page = secretMatches(given, pageDigest);
    const cli = secretMatches(given, cliDigest);
    return page ? "web" : cli ? "cli" : null;
  }

  async function route(request: Request, server: Server<unknown>): Promise<Response | undefined> {
    const refused = hostProblem(request, allowedHosts);
    if (refused) return refused;
    if (request.method === "POST" && isCrossOrigin(request)) return failure(403, "forbidden", "cross-origin requests are refused");
    const path = pathOf(request);
    // The page is the same for everyone and holds no data: its script reads the key from the
    // URL's fragment and sends it with every API call.
    if (path === "/approvals" && request.method === "GET") {
      const nonce = newNonce();
      return new Response(approvalPageHtml(nonce), { headers: pageHeaders(nonce) });
    }
    if (path.startsWith("/approvals/")) {
      const channel = personChannel(request);
      return channel ? approvals(request, path, channel) : unauthorized("approval key");
    }
    if (!secretMatches(bearer(request), sessionDigest)) return unauthorized("session secret");
    if (path === CHANNEL_PATH && request.method === "GET") return channels.upgrade(request, server as Server<never>);
    return governance(request, path);
  }

  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: host,
      port: options.port ?? 0,
      maxRequestBodySize: MAX_BODY_BYTES,
      // Never Bun's development error page (it shows source and stack traces to whoever asked).
      development: false,
      // Said outright: without it Bun 1.4 in production mode lets a second server bind this port
      // and take its connections, where a taken port must be an error (measured: no EADDRINUSE).
      reusePort: false,
      websocket: channels.websocket,
      async fetch(request, server) {
        if (pathOf(request) !== HEARTBEAT_PATH) activity += 1;
        try {
          return await route(request, server);
        } catch (error) {
          log.error(`governance service: ${request.method} ${showInvisible(pathOf(request))} failed: ${messageOf(error)}`);
          return failure(500, "internal", "internal error");
        }
      },
      error(error) {
        log.error(`governance service: ${messageOf(error)}`);
        return failure(500, "internal", "internal error");
      },
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === "EADDRINUSE") {
      throw new ThoughtGateError("CONFIG", `port ${options.port} is in use on ${host} (choose another with --governance-port, or 0 for any free port)`, { cause: error });
    }
    throw new ThoughtGateError("IO", `cannot start the governance service on ${host}:${options.port ?? 0}: ${messageOf(error)}`, { cause: error });
  }
  const stopCollecting = collectWhenIdle(() => activity);
  const port = server.port ?? 0;
  allowedHosts = loopbackHosts(host, port);
  const url = `http://${host}:${port}`;
  if (options.desktop) {
    notifier = new DesktopNotifier({
      tool: options.desktop,
      pageUrl: `${url}/approvals`,
      clock: clock ?? systemClock,
      decide: (task, choice) => {
        const result = tasks.decide(task.id, { decision: choice.decision, digest: task.digest, scope: choice.scope }, "desktop");
        if (!result.ok && result.error !== "not_pending") log.warn(`the desktop notification's answer for task ${task.id} was refused (${result.error})`);
      },
    });
  }
  return {
    url,
    port,
    approvalsUrl: `${url}/approvals#key=${options.pageKey}`,
    tasks,
    grants,
    metrics,
    setShutdown: () => {
      shutdown = true;
      channels.pushShutdown();
    },
    async stop() {
      stopCollecting();
      tasks.cancelAll("the governance service stopped");
      // A session grant never outlives its session.
      grants.close();
      notifier?.close();
      await slack.close();
      await server.stop(true);
      sessionSpan.end();
      await tracer.close(TRACE_FLUSH_MS);
    },
  };
}

/** `thoughtgate serve on ada@laptop`: who asks, when the caller does not say. */
function defaultOrigin(): string {
  return `thoughtgate serve on ${userAtHost()}`;
}

/** `ada@laptop` (a user without a passwd entry, in a container say, by $USER). */
export function userAtHost(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER ?? "unknown";
  }
  return `${user}@${hostname()}`;
}
