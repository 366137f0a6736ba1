import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { GovernanceMetrics } from "../telemetry/metrics.ts";
import { VERSION } from "../version.ts";
import { cancelRequest, decisionRequest, evaluateRequest, filterRequest, heartbeatRequest, metricsReport } from "./api.ts";
import { approvalPageHtml } from "./approval-page.ts";
import type { PolicyEngine } from "./engine.ts";
import { createEvaluator } from "./evaluation.ts";
import { bearer, failure, isCrossOrigin, json, loopbackHosts, newNonce, pageHeaders, parseBody, secretDigest, secretMatches } from "./http-guard.ts";
import { TaskStore, type ChangeResult, type Clock } from "./tasks.ts";

export { newSecret } from "./http-guard.ts";
export { POLL_INTERVAL_MS } from "./evaluation.ts";

export type ServiceOptions = {
  /** The engine, or a getter so a reload can swap it under a running service. */
  engine: PolicyEngine | (() => PolicyEngine);
  profile: Profile;
  sessionSecret: string;
  approvalSecret: string;
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
  /** The approvals page, key included: print it, never write it to disk. */
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
 * people answer approvals through it. It binds loopback only, and every call needs a secret: the
 * session secret for shims, the approval secret (never on disk) for people.
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
      metrics.approvalLatency.observe({ server_id: task.serverId }, ((task.finishedAt ?? task.createdAt) - task.createdAt) / 1000);
      const by = task.decidedBy && task.decidedBy !== "timeout" ? ` by ${task.decidedBy}` : "";
      log.info(`approval task ${task.id} (${task.serverId}.${task.name}): ${task.status.replace("_", " ")}${by}`);
    },
  });
  const sessionDigest = secretDigest(options.sessionSecret);
  const approvalDigest = secretDigest(options.approvalSecret);
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
    if (path === "/governance/tasks" && method === "GET") return json({ tasks: tasks.list().map((t) => tasks.toView(t)) });
    if (path === "/governance/heartbeat" && method === "POST") {
      const body = await parseBody(request, heartbeatRequest);
      if (!body.ok) return body.response;
      metrics.seen(body.value.server_id);
      return json({ shutdown });
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
      for (const m of report.messages) metrics.messages.inc({ server_id: report.server_id, direction: m.direction, method: m.method }, m.count);
      for (const f of report.framing_errors) metrics.framingErrors.inc({ server_id: report.server_id, error_type: f.error_type }, f.count);
      if (report.server_state) metrics.setServerState(report.server_id, report.server_state);
      return json({ shutdown });
    }
    const task = /^\/governance\/task\/([^/]+)(\/decision|\/cancel)?$/.exec(path);
    if (task) {
      const id = decodeURIComponent(task[1] ?? "");
      if (task[2] === undefined && method === "GET") return changed(lookup(id), id);
      if (task[2] === "/decision" && method === "POST") {
        const body = await parseBody(request, decisionRequest);
        return body.ok ? changed(tasks.decide(id, body.value), id) : body.response;
      }
      if (task[2] === "/cancel" && method === "POST") {
        const body = await parseBody(request, cancelRequest, {});
        return body.ok ? changed(tasks.cancel(id, body.value.reason ?? "cancelled by the agent"), id) : body.response;
      }
    }
    return failure(404, "not_found", `no such endpoint: ${method} ${path}`);
  }

  /** `/approvals/api/*`: what people (approval key) call, from the page or `thoughtgate approve`. */
  async function approvals(request: Request, path: string): Promise<Response> {
    if (path === "/approvals/api/tasks" && request.method === "GET") return json({ tasks: tasks.list().map((t) => tasks.toView(t)) });
    const task = /^\/approvals\/api\/tasks\/([^/]+)$/.exec(path);
    if (task) {
      const id = decodeURIComponent(task[1] ?? "");
      if (request.method === "GET") return changed(lookup(id), id);
      if (request.method === "POST") {
        const body = await parseBody(request, decisionRequest);
        return body.ok ? changed(tasks.decide(id, body.value), id) : body.response;
      }
    }
    return failure(404, "not_found", `no such endpoint: ${request.method} ${path}`);
  }

  function approvalPage(url: URL): Response {
    if (!secretMatches(url.searchParams.get("key") ?? "", approvalDigest)) {
      metrics.unauthorized.inc();
      return new Response(WRONG_KEY_PAGE, { status: 401, headers: pageHeaders(newNonce()) });
    }
    const nonce = newNonce();
    return new Response(approvalPageHtml(nonce), { headers: pageHeaders(nonce) });
  }

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // DNS rebinding: a page on another site that resolves its name to 127.0.0.1 still sends its own Host.
    if (!allowedHosts.has(request.headers.get("host") ?? "")) return failure(403, "forbidden", "unexpected Host header");
    if (request.method === "POST" && isCrossOrigin(request)) return failure(403, "forbidden", "cross-origin requests are refused");
    const path = url.pathname;
    if (path === "/approvals" && request.method === "GET") return approvalPage(url);
    if (path.startsWith("/approvals/")) {
      return secretMatches(bearer(request), approvalDigest) ? approvals(request, path) : unauthorized("approval key");
    }
    return secretMatches(bearer(request), sessionDigest) ? governance(request, path) : unauthorized("session secret");
  }

  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: host,
      port: options.port ?? 0,
      maxRequestBodySize: MAX_BODY_BYTES,
      async fetch(request) {
        try {
          return await route(request);
        } catch (error) {
          log.error(`governance service: ${request.method} ${new URL(request.url).pathname} failed: ${messageOf(error)}`);
          return failure(500, "internal", "internal error");
        }
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
    approvalsUrl: `${url}/approvals?key=${options.approvalSecret}`,
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

const WRONG_KEY_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ThoughtGate approvals</title><link rel="icon" href="data:,"></head>
<body><h1>ThoughtGate approvals</h1>
<p id="error">This approvals link has a wrong or old key (the service may have restarted). Open the URL that <code>thoughtgate serve</code> printed.</p>
</body></html>
`;
