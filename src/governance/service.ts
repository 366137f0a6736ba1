import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { showInvisible } from "../core/visible-text.ts";
import { GovernanceMetrics } from "../telemetry/metrics.ts";
import { redactText } from "../telemetry/redact.ts";
import { VERSION } from "../version.ts";
import { cancelRequest, decisionRequest, evaluateRequest, filterRequest, heartbeatRequest, metricsReport, relayRequest } from "./api.ts";
import { approvalPageHtml } from "./approval-page.ts";
import type { PolicyEngine } from "./engine.ts";
import { createEvaluator } from "./evaluation.ts";
import { bearer, failure, hostProblem, isCrossOrigin, json, loopbackHosts, newNonce, pageHeaders, parseBody, pathOf } from "./http-guard.ts";
import { secretDigest, secretMatches } from "./secrets.ts";
import { TaskStore, type Channel, type ChangeResult, type Clock } from "./tasks.ts";

export { newSecret } from "./secrets.ts";
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
  /** For tests: task timeouts without waiting. */
  clock?: Clock;
  maxTasks?: number;
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
  metrics: GovernanceMetrics;
  /** Tell every shim to drain (piggy-backed on its next evaluate, heartbeat, task or filter answer). */
  setShutdown(): void;
  stop(): Promise<void>;
};

/** Above the shim's 10 MiB line limit, so any line it accepted fits in an evaluate body. */
const MAX_BODY_BYTES = 12 * 1024 * 1024;

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
  const tasks = new TaskStore({
    ...(clock ? { clock } : {}),
    ...(options.maxTasks !== undefined ? { capacity: options.maxTasks } : {}),
    onFinish: (task) => {
      metrics.observeApproval(task.serverId, ((task.finishedAt ?? task.createdAt) - task.createdAt) / 1000);
      const by = task.decidedBy && task.decidedBy !== "timeout" ? ` by ${task.decidedBy}` : "";
      log.info(showInvisible(redactText(`approval task ${task.id} (${task.serverId}.${task.name}): ${task.status.replace("_", " ")}${by}`)));
    },
  });
  const sessionDigest = secretDigest(options.sessionSecret);
  const pageDigest = secretDigest(options.pageKey);
  const cliDigest = secretDigest(options.cliKey);
  let shutdown = false;
  let allowedHosts = new Set<string>();
  const evaluate = createEvaluator({ engine, profile: options.profile, tasks, metrics, shuttingDown: () => shutdown });

  const unauthorized = (what: string) => {
    metrics.unauthorized.inc();
    return failure(401, "unauthorized", `missing or wrong ${what}`);
  };

  function changed(result: ChangeResult, id: string): Response {
    if (result.ok) return json({ task: tasks.toView(result.task), shutdown });
    if (result.error === "not_found") return failure(404, "not_found", `no task ${id} (unknown, or finished long ago)`);
    if (result.error === "relay_refused") {
      metrics.unauthorized.inc();
      return failure(401, "unauthorized", `task ${id}: missing or wrong relay token (only the shim the task was offered to for elicitation relays its answer)`);
    }
    if (result.error === "not_pending") return failure(409, "not_pending", `task ${id} is already ${result.task.status.replace("_", " ")}`);
    return failure(409, "digest_mismatch", `task ${id}: the decision names a different call than the task (digest mismatch); refused`);
  }

  function lookup(id: string): ChangeResult {
    const found = tasks.get(id);
    return found ? { ok: true, task: found } : { ok: false, error: "not_found" };
  }

  /** `/healthz`, `/metrics` and `/governance/*`: what shims (session secret) call. */
  async function governance(request: Request, path: string): Promise<Response> {
    const method = request.method;
    if (path === "/healthz" && method === "GET") return json({ status: "ok", version: VERSION, profile: options.profile });
    if (path === "/metrics" && method === "GET") {
      return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
    }
    if (path === "/governance/evaluate" && method === "POST") {
      const body = await parseBody(request, evaluateRequest);
      return body.ok ? json(evaluate(body.value)) : body.response;
    }
    if (path === "/governance/heartbeat" && method === "POST") {
      const body = await parseBody(request, heartbeatRequest);
      if (!body.ok) return body.response;
      metrics.seen(body.value.server_id);
      return json({ shutdown, secrets: engine().secretScan(body.value.server_id) });
    }
    if (path === "/governance/filter" && method === "POST") {
      const body = await parseBody(request, filterRequest);
      if (!body.ok) return body.response;
      const { server_id, kind, names } = body.value;
      metrics.seen(server_id);
      let visible: string[];
      try {
        visible = engine().visibility.filter(server_id, kind, names);
      } catch (error) {
        log.error(`visibility filter failed (showing nothing, fail closed): ${messageOf(error)}`);
        visible = [];
      }
      return json({ visible, shutdown });
    }
    if (path === "/governance/events" && method === "POST") {
      const body = await parseBody(request, metricsReport);
      if (!body.ok) return body.response;
      const report = body.value;
      metrics.seen(report.server_id);
      for (const m of report.messages) metrics.countMessages(report.server_id, m.direction, m.method, m.count);
      for (const f of report.framing_errors) metrics.countFramingErrors(report.server_id, f.error_type, f.count);
      if (report.server_state) metrics.setServerState(report.server_id, report.server_state);
      return json({ shutdown });
    }
    const task = /^\/governance\/task\/([^/]+)(\/decision|\/cancel)?$/.exec(path);
    if (task) {
      const id = decodeURIComponent(task[1] ?? "");
      if (task[2] === undefined && method === "GET") return changed(lookup(id), id);
      if (task[2] === "/decision" && method === "POST") {
        const body = await parseBody(request, relayRequest);
        if (!body.ok) return body.response;
        const { relay_token, ...decision } = body.value;
        return changed(tasks.relay(id, relay_token, decision), id);
      }
      if (task[2] === "/cancel" && method === "POST") {
        const body = await parseBody(request, cancelRequest, {});
        return body.ok ? changed(tasks.cancel(id, body.value.reason ?? "cancelled by the agent"), id) : body.response;
      }
    }
    return failure(404, "not_found", `no such endpoint: ${method} ${path}`);
  }

  /** `/approvals/api/*`: what people call, from the page (page key) or `thoughtgate approve` (CLI key). */
  async function approvals(request: Request, path: string, channel: Channel): Promise<Response> {
    if (path === "/approvals/api/tasks" && request.method === "GET") return json({ tasks: tasks.list().map((t) => tasks.toView(t)) });
    const task = /^\/approvals\/api\/tasks\/([^/]+)$/.exec(path);
    if (task) {
      const id = decodeURIComponent(task[1] ?? "");
      if (request.method === "GET") return changed(lookup(id), id);
      if (request.method === "POST") {
        const body = await parseBody(request, decisionRequest);
        return body.ok ? changed(tasks.decide(id, body.value, channel), id) : body.response;
      }
    }
    return failure(404, "not_found", `no such endpoint: ${request.method} ${path}`);
  }

  /** Which person's key a request carries: both are compared every time, in constant time. */
  function personChannel(request: Request): Channel | null {
    const given = bearer(request);
    const page = secretMatches(given, pageDigest);
    const cli = secretMatches(given, cliDigest);
    return page ? "web" : cli ? "cli" : null;
  }

  async function route(request: Request): Promise<Response> {
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
    return secretMatches(bearer(request), sessionDigest) ? governance(request, path) : unauthorized("session secret");
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
      async fetch(request) {
        try {
          return await route(request);
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
  const port = server.port ?? 0;
  allowedHosts = loopbackHosts(host, port);
  const url = `http://${host}:${port}`;
  return {
    url,
    port,
    approvalsUrl: `${url}/approvals#key=${options.pageKey}`,
    tasks,
    metrics,
    setShutdown: () => {
      shutdown = true;
    },
    async stop() {
      tasks.cancelAll("the governance service stopped");
      await server.stop(true);
    },
  };
}
