import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import * as v from "valibot";
import { canonicalJson } from "../core/canonical-json.ts";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { GOVERNED_METHODS } from "../shim/decide.ts";
import { GovernanceMetrics } from "../telemetry/metrics.ts";
import { VERSION } from "../version.ts";
import {
  cancelRequest,
  decisionRequest,
  evaluateRequest,
  errorResponse,
  filterRequest,
  heartbeatRequest,
  metricsReport,
  type EvaluateRequest,
  type EvaluateResponse,
} from "./api.ts";
import { approvalPageHtml } from "./approval-page.ts";
import { denyError } from "./deny-error.ts";
import { applyProfile, type EngineDecision, type GovernanceEngine } from "./engine.ts";
import { GOVERNANCE_ERROR } from "./errors.ts";
import { TaskStore, type ChangeResult, type Clock, type Task } from "./tasks.ts";

export type ServiceOptions = {
  /** The engine, or a getter so a reload can swap it under a running service. */
  engine: GovernanceEngine | (() => GovernanceEngine);
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

/** A session or approval secret: 32 random bytes, hex. */
export function newSecret(): string {
  return randomBytes(32).toString("hex");
}

/** How often a shim should poll a pending task. */
export const POLL_INTERVAL_MS = 250;
/** Above the shim's 10 MiB line limit, so any line it accepted fits in an evaluate body. */
const MAX_BODY_BYTES = 12 * 1024 * 1024;
const PROMPT_ARGUMENTS_CHARS = 200;

/**
 * The local governance service (DESIGN decision 7): shims ask it for decisions, people answer
 * approvals through it. It binds loopback only, and every call needs a secret: the session secret
 * for shims, the approval secret (never on disk) for people.
 */
export function startGovernanceService(options: ServiceOptions): GovernanceService {
  const engine = typeof options.engine === "function" ? options.engine : () => options.engine as GovernanceEngine;
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

  const json = (body: unknown, status = 200) =>
    Response.json(body, { status, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } });
  const failure = (status: number, code: v.InferOutput<typeof errorResponse>["code"], error: string) => json({ error, code }, status);
  const unauthorized = (what: string) => {
    metrics.unauthorized.inc();
    return failure(401, "unauthorized", `missing or wrong ${what}`);
  };

  function evaluate(request: EvaluateRequest): EvaluateResponse {
    metrics.seen(request.server_id);
    // The stricter profile wins: a shim may ask for enforcement, never opt out of it.
    const profile: Profile = options.profile === "production" || request.profile === "production" ? "production" : "development";
    const base = { gate: null, rule_id: null, policy_id: null, shutdown };
    if (request.direction !== "agent_to_server" || request.message_type !== "request" || !GOVERNED_METHODS.has(request.method)) {
      return count({ ...base, decision: "forward", reason: "not a governed method (forwarded and audited)" }, request, profile);
    }
    // The JSON-RPC id ties the error to the shim's audit events, as in the in-process shim.
    const correlationId = request.id === undefined || request.id === null ? Bun.randomUUIDv7() : String(request.id);
    const call = { serverId: request.server_id, method: request.method, name: request.name, correlationId };
    let decision: EngineDecision;
    const started = performance.now();
    try {
      decision = engine().evaluate({
        serverId: request.server_id,
        method: request.method,
        name: request.name,
        arguments: request.arguments,
        ...(request.annotations ? { annotations: request.annotations } : {}),
      });
    } catch (error) {
      log.error(`governance engine failed (denying, fail closed): ${messageOf(error)}`);
      const reason = `governance engine failed: ${messageOf(error)}`;
      const block = { gate: "governance" as const, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason };
      return count(
        { ...base, decision: "deny", gate: "governance", reason, error: denyError(block, call) },
        request,
        profile,
      );
    }
    if (ranCedar(decision)) metrics.cedarLatency.observe({}, (performance.now() - started) / 1000);
    const outcome = applyProfile(decision, profile);
    if (outcome.kind === "forward") {
      return count(
        {
          ...base,
          decision: "forward",
          gate: outcome.gate,
          rule_id: outcome.ruleId,
          policy_id: outcome.policyId,
          reason: outcome.reason,
          ...(outcome.would ? { would: outcome.would } : {}),
          ...(outcome.autoApproved ? { auto_approved: true } : {}),
        },
        request,
        profile,
      );
    }
    if (outcome.kind === "deny") {
      const { gate, ruleId, policyId, reason } = outcome.block;
      return count(
        { ...base, decision: "deny", gate, rule_id: ruleId, policy_id: policyId, reason, error: denyError(outcome.block, call) },
        request,
        profile,
      );
    }
    const created = tasks.create({
      serverId: request.server_id,
      method: request.method,
      name: request.name,
      arguments: request.arguments ?? null,
      ruleId: outcome.ruleId,
      workflowName: outcome.workflowName,
      workflow: outcome.workflow,
      reason: outcome.reason,
    });
    const decided = { gate: "approval", rule_id: outcome.ruleId, policy_id: outcome.policyId };
    if (!created.ok) {
      const reason = `too many approvals pending (${tasks.pendingCount}); denying (fail closed)`;
      log.error(reason);
      const block = { gate: "approval" as const, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: outcome.ruleId, policyId: outcome.policyId, reason };
      return count(
        { ...base, ...decided, decision: "deny", reason, error: denyError(block, call) },
        request,
        profile,
      );
    }
    const task = created.task;
    const destination = outcome.workflow.destination.type;
    const elicit = request.channels.includes("elicitation") && (destination === "any" || destination === "elicitation");
    log.info(`approval needed: task ${task.id} ${task.serverId}.${task.name} (rule ${task.ruleId ?? "-"}); thoughtgate approve ${task.id}`);
    return count(
      {
        ...base,
        ...decided,
        decision: "pending_approval",
        reason: outcome.reason,
        task_id: task.id,
        poll_interval_ms: POLL_INTERVAL_MS,
        prompt: approvalPrompt(task),
        ...(elicit ? { shim_channels: ["elicitation" as const] } : {}),
      },
      request,
      profile,
    );
  }

  function count(response: EvaluateResponse, request: EvaluateRequest, profile: Profile): EvaluateResponse {
    metrics.decisions.inc({ server_id: request.server_id, decision: response.decision, profile });
    log.debug(`${request.server_id} ${request.method} ${request.name}: ${response.decision} (${response.reason})`);
    return response;
  }

  function changed(result: ChangeResult, id: string): Response {
    if (result.ok) return json({ task: tasks.toView(result.task), shutdown });
    if (result.error === "not_found") return failure(404, "not_found", `no task ${id} (unknown, or finished long ago)`);
    if (result.error === "not_pending") return failure(409, "not_pending", `task ${id} is already ${result.task.status.replace("_", " ")}`);
    return failure(409, "digest_mismatch", `task ${id}: the decision names a different call than the task (digest mismatch); refused`);
  }

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

  function lookup(id: string): ChangeResult {
    const found = tasks.get(id);
    return found ? { ok: true, task: found } : { ok: false, error: "not_found" };
  }

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
      return new Response(WRONG_KEY_PAGE, { status: 401, headers: pageHeaders(randomBytes(16).toString("base64")) });
    }
    const nonce = randomBytes(16).toString("base64");
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
  allowedHosts = new Set([`${host}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
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

type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

/** Parse a JSON body with its wire schema; any problem is a 400 with one line saying what. */
async function parseBody<S extends v.GenericSchema>(request: Request, schema: S, whenEmpty?: v.InferInput<S>): Promise<Parsed<v.InferOutput<S>>> {
  const bad = (message: string): Parsed<v.InferOutput<S>> => ({
    ok: false,
    response: Response.json({ error: message, code: "bad_request" }, { status: 400, headers: { "cache-control": "no-store" } }),
  });
  const text = await request.text();
  let raw: unknown;
  if (text.trim() === "" && whenEmpty !== undefined) raw = whenEmpty;
  else {
    try {
      raw = JSON.parse(text);
    } catch {
      return bad("request body is not valid JSON");
    }
  }
  const result = v.safeParse(schema, raw);
  if (result.success) return { ok: true, value: result.output };
  const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? "(body)"}: ${issue.message}`);
  return bad(`invalid request body: ${problems.join("; ")}`);
}

function secretDigest(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** Constant time: both sides are hashed to the same length first, so neither length nor content leaks. */
function secretMatches(given: string, expected: Buffer): boolean {
  return timingSafeEqual(secretDigest(given), expected);
}

function bearer(request: Request): string {
  const header = request.headers.get("authorization") ?? "";
  return header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
}

/** Browsers say where a request comes from; only our own page (or no browser at all) may POST. */
function isCrossOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return true;
  const origin = request.headers.get("origin");
  return origin !== null && origin !== `http://${request.headers.get("host")}`;
}

function ranCedar(decision: EngineDecision): boolean {
  if (decision.kind === "deny") return decision.block.gate === "cedar";
  if (decision.kind === "forward") return decision.gate === "cedar";
  return decision.policyId !== null;
}

/** "Allow github.delete_repo with {"repo":"x"}?" — what elicitation and the page show. */
export function approvalPrompt(task: Pick<Task, "serverId" | "method" | "name" | "arguments">): string {
  const args = canonicalJson(task.arguments ?? {});
  const shown = args.length > PROMPT_ARGUMENTS_CHARS ? `${args.slice(0, PROMPT_ARGUMENTS_CHARS)}…` : args;
  const target = task.method === "tools/call" ? `${task.serverId}.${task.name}` : `${task.serverId} ${task.method} ${task.name}`;
  return `Allow ${target} with ${shown}?`;
}

function pageHeaders(nonce: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

const WRONG_KEY_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ThoughtGate approvals</title><link rel="icon" href="data:,"></head>
<body><h1>ThoughtGate approvals</h1>
<p id="error">This approvals link has a wrong or old key (the service may have restarted). Open the URL that <code>thoughtgate serve</code> printed.</p>
</body></html>
`;
