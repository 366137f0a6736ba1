import type { Server } from "bun";
import { hostname } from "node:os";
import { localUserName } from "../../core/user-name.ts";
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
import type { AlwaysWriter } from "../approval/always-allow.ts";
import { DesktopNotifier, type NotifyTool } from "../approval/desktop-notifier.ts";
import { approvalPageHtml } from "./approval-page.ts";
import type { PolicyEngine } from "../engine/engine.ts";
import { createEvaluator, HTTP_CALLER } from "./evaluation.ts";
import { bearer, failure, hostProblem, isCrossOrigin, json, loopbackHosts, newNonce, pageHeaders, parseBody, pathOf, readJson, toResponse } from "./http-guard.ts";
import { notSibling, pidOfConnection } from "../../core/peer-process.ts";
import { SLACK_HANDOFF_PATH, slackHandoffRequest } from "../wire/api.ts";
import type { Sibling } from "../approval/slack/handoff.ts";
import { secretDigest, secretMatches } from "../wire/secrets.ts";
import type { SessionView, TaskView } from "../wire/api.ts";
import { shimApi, taskChange } from "./shim-api.ts";
import { serviceShellReader, type ShellReader } from "./shell-reading.ts";
import { CHANNEL_PATH, shimChannels } from "./shim-channel.ts";
import type { PersonAct, PersonCheck } from "./person-check.ts";
import { spanRelayHandler } from "./span-relay.ts";
import { grantHolder, SessionGrants } from "../approval/session-grants.ts";
import { AgentPromptAsks, EDIT_TOOLS } from "../approval/agent-prompt-answers.ts";
import { AGENT_SOURCE } from "../verdict/agent-tools.ts";
import { systemClock, TaskStore, type Channel, type ChangeResult, type Clock } from "../approval/tasks.ts";
import { SlackApprovals } from "../approval/slack/slack-approvals.ts";
import { decideOrOnce, taskDecider } from "./decide-task.ts";
import { collectWhenIdle } from "../../core/idle-collector.ts";

const HEARTBEAT_PATH = "/governance/heartbeat";

export { newSecret } from "../wire/secrets.ts";
export { processPersonCheck } from "./person-check.ts";

export type ServiceOptions = {
  /** The engine, or a getter so a reload can swap it under a running service. */
  engine: PolicyEngine | (() => PolicyEngine);
  profile: Profile;
  /** What shims hold: asks for decisions; relays an elicitation answer only on the channel the call came in on. */
  sessionSecret: string;
  /** The approvals page's key (channel web): printed in the page URL's fragment, never written to disk. */
  pageKey: string;
  /** `thoughtgate approve|deny|tasks`'s key (channel cli): printed, and in the service descriptor (0600). */
  cliKey: string;
  /**
   * Whether the process behind a person's request may be a person (person-check.ts): wrap and serve
   * pass `processPersonCheck`; a test that has no other process to decide from passes its own.
   */
  people: PersonCheck;
  /** 0 (the default): any free port. */
  port?: number;
  host?: string;
  /** Who asks for approvals, as a Slack message says ("thoughtgate serve on ada@laptop"). */
  origin?: string;
  /** For tests: task timeouts without waiting. */
  clock?: Clock;
  /** The bash parser that reads agents' shell calls (shell-reading.ts); the embedded one when absent. */
  shellReader?: ShellReader;
  maxTasks?: number;
  /**
   * False when the agent is known to answer no elicitation (`claude -p`, `codex exec`: wrap knows
   * these modes): no shim is offered elicitation, and approvals go to people's channels at once.
   */
  agentCanAsk?: boolean;
  /** A call (or a definition) now waits for a person, as people see it: wrap says so where the terminal is its to write on. */
  waiting?: (task: TaskView) => void;
  /**
   * True when wrap knows the agent shows its forms to a person (Claude Code without `-p`, Codex's
   * TUI, …): a form the person dismisses (Esc) is their no, and the call is refused at once.
   */
  dismissIsNo?: boolean;
  /** Announce approvals on the desktop with this tool (src/governance/approval/desktop-notifier.ts); none: no notifications. */
  desktop?: NotifyTool | null;
  /** "Always allow", from every channel (src/governance/approval/always-allow.ts); absent: never offered, refused as not possible. */
  always?: AlwaysWriter;
  /** The governance services beside this one (their descriptors): a Slack click on one of their messages is handed on (slack/handoff.ts). */
  siblings?: () => Sibling[];
  /** Tracing on (docs/governance.md, Traces): the service's tracer (governance/engine/tracing.ts), and what its session span is called. */
  tracer?: Tracer;
  role?: "wrap" | "serve";
  /**
   * A wrap session's project (the project root wrap was started in): every call of the session is
   * decided in it, whatever a shim says, and "always … in this project" keeps its rule to it.
   * Absent (`serve`): each shim's own project.
   */
  sessionProject?: string;
  /** The session as people tell it apart (agent, project, start): the approvals page's header and cards, `thoughtgate tasks`. */
  session?: SessionView;
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
  const agentAsks = new AgentPromptAsks();
  let notifier: DesktopNotifier | null = null;
  // Every channel decides through one function (decide-task.ts): "always" writes its rule first.
  const decide = taskDecider({ get: (id) => tasks.get(id), decide: (id, decision, channel) => tasks.decide(id, decision, channel) }, options.always);
  const slack = new SlackApprovals({ decide: (id, decision, channel) => decide(id, decision, channel), metrics, origin: options.origin ?? defaultOrigin(), ...(options.siblings ? { siblings: options.siblings } : {}) });
  const tasks: TaskStore = new TaskStore({
    ...(clock ? { clock } : {}),
    ...(options.maxTasks !== undefined ? { capacity: options.maxTasks } : {}),
    onCreate: (task) => {
      slack.created(task);
      options.waiting?.(tasks.toView(task));
    },
    onFinish: (task) => {
      slack.finished(task);
      metrics.observeApproval(task.serverId, ((task.finishedAt ?? task.createdAt) - task.createdAt) / 1000);
      const by = task.decidedBy && task.decidedBy !== "timeout" ? ` by ${task.decidedBy}` : "";
      const scope = task.scope === "session" ? " for this session" : task.scope === "always" ? " always" : "";
      log.info(showInvisible(redactText(`approval task ${task.id} (${task.serverId}.${task.name}): ${task.status.replace("_", " ")}${scope}${by}`)));
      // "Allow for this session", from whichever channel: later calls of this tool are approved by the grant.
      // The grant covers the calls of the shim that asked, never another's; an agent's own tools share one holder (session-grants.ts).
      if (task.status === "approved" && task.scope === "session" && task.decidedBy && task.openedBy !== undefined) grants.grant(task, task.id, task.decidedBy, (clock ?? systemClock).now(), grantHolder(task.serverId, task.openedBy));
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
  let pageUrl = "";
  const who = localUserName();
  const approvals = approvalsApi({
    tasks,
    grants,
    page: () => ({ url: pageUrl, key: options.pageKey }),
    decide,
    ...(who ? { who } : {}),
    changed: (result, id) => changed(result, id),
    ...(options.session ? { session: options.session } : {}),
  });
  // One bash parser for the service's life, loaded on the first shell call (shell-reading.ts).
  const shell = options.shellReader ?? serviceShellReader();
  const evaluate = createEvaluator({
    engine,
    shell,
    profile: options.profile,
    tasks,
    grants,
    metrics,
    shuttingDown: () => shutdown,
    ...(options.agentCanAsk === false ? { agentCanAsk: false } : {}),
    ...(options.always ? { always: options.always } : {}),
    ...(options.sessionProject ? { sessionProject: options.sessionProject } : {}),
    agentAsks,
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
  const api = shimApi({
    evaluate,
    shell,
    engine,
    profile: options.profile,
    metrics,
    tasks,
    shuttingDown: () => shutdown,
    unanswered: (task) => notifier?.unanswered(task),
    decideLater: decideOrOnce(decide),
    agentRan: (request, caller) => {
      const answer = agentAsks.ran(request.id, request.agent_mode ?? null);
      if (answer === null) return { scope: null };
      // The person switched the agent to accepting edits in its prompt: this session's edits and
      // writes that the same rule asks about are theirs already (agent-prompt-answers.ts).
      if (answer.scope === "session") {
        const now = (clock ?? systemClock).now();
        for (const name of EDIT_TOOLS) grants.grant({ serverId: AGENT_SOURCE, method: "tools/call", name, ruleId: answer.ask.ruleId }, `${request.id}-${name}`, "agent_prompt", now, grantHolder(AGENT_SOURCE, caller));
      }
      log.info(showInvisible(redactText(`${AGENT_SOURCE}.${answer.ask.name}: allowed in the agent's own prompt${answer.scope === "session" ? `, with its edits for this session (rule ${answer.ask.ruleId ?? "-"})` : ""}`)));
      return { scope: answer.scope, rule_id: answer.ask.ruleId };
    },
    dismissIsNo: options.dismissIsNo === true,
    ...(tracing ? { tracing } : {}),
  });
  // Decisions, audit and page requests so far: the heap is collected once they stop for a second.
  // Heartbeats are not traffic (every shim sends one each 5 s; counted, they would collect each time).
  let activity = 0;
  const channels = shimChannels(
    (method, path, body, caller) => {
      if (path !== HEARTBEAT_PATH) activity += 1;
      return api(method, path, body, caller);
    },
    MAX_BODY_BYTES,
    (caller) => {
      tasks.cancelOpenedBy(caller, "the shim that asked is gone (its channel closed)");
      grants.dropHolder(caller);
    },
  );

  /** `/healthz`, `/metrics` and `/governance/*`: what shims (session secret) call. */
  async function governance(request: Request, path: string): Promise<Response> {
    const method = request.method;
    if (path === "/healthz" && method === "GET") return json({ status: "ok", version: VERSION, profile: options.profile });
    if (path === "/metrics" && method === "GET") {
      return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
    }
    if (!path.startsWith("/governance/")) return failure(404, "not_found", `no such endpoint: ${method} ${path}`);
    const read = await readJson(request);
    return toResponse(read.ok ? await api(method, path, read.raw, HTTP_CALLER) : read.answer);
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
    // The one-time link `approvals --open` handed a browser carries its own credential.
    if (path === "/approvals/api/open" && request.method === "POST") {
      const refused = options.people(request, server, "open-link");
      return refused ? failure(403, "forbidden", refused) : approvals.redeem(request);
    }
    if (path.startsWith("/approvals/")) {
      const channel = personChannel(request);
      if (!channel) return unauthorized("approval key");
      const act = personAct(request.method, path, channel);
      const refused = act ? options.people(request, server, act) : null;
      if (refused) {
        log.warn(showInvisible(`${request.method} ${path} with the ${channel === "web" ? "page" : "CLI"} key refused: ${refused}`));
        return failure(403, "forbidden", refused);
      }
      return approvals.handle(request, path, channel);
    }
    if (path === SLACK_HANDOFF_PATH && request.method === "POST") return slackHandoff(request, server);
    if (!secretMatches(bearer(request), sessionDigest)) return unauthorized("session secret");
    if (path === CHANNEL_PATH && request.method === "GET") return channels.upgrade(request, server as Server<never>);
    return governance(request, path);
  }

  /**
   * A Slack click a sibling session got for a message this service posted (slack/handoff.ts). No
   * key: a key would be a file any process of the user's can read. The kernel says which process
   * holds the other end of this connection; only a sibling (this binary, untraced, clean
   * environment, one of the services beside this one) is heard, and the click is then checked as
   * one of this service's own.
   */
  async function slackHandoff(request: Request, server: Server<unknown>): Promise<Response> {
    const peer = server.requestIP(request);
    const candidates = options.siblings?.().map((s) => s.pid) ?? [];
    const pid = peer && /^(::ffff:)?127\.0\.0\.1$/.test(peer.address) ? pidOfConnection(peer.port, port, candidates) : null;
    const why = pid === null ? "the caller is not a ThoughtGate service running beside this one" : notSibling(pid);
    if (why) {
      metrics.unauthorized.inc();
      log.warn(`Slack handoff refused: ${why}`);
      return failure(403, "forbidden", why);
    }
    const body = await parseBody(request, slackHandoffRequest);
    if (!body.ok) return body.response;
    return json({ claimed: await slack.handedOn(body.value) });
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
  pageUrl = `${url}/approvals`;
  if (options.desktop) {
    notifier = new DesktopNotifier({
      tool: options.desktop,
      pageUrl: `${url}/approvals`,
      clock: clock ?? systemClock,
      decide: async (task, choice) => {
        const result = await decideOrOnce(decide)(task.id, { decision: choice.decision, digest: task.digest, scope: choice.scope, ...(choice.alwaysScope ? { alwaysScope: choice.alwaysScope } : {}) }, "desktop");
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

/**
 * What a person's request asks that only a person may (person-check.ts): a decision, the page's
 * link (which carries the page key), or, with the CLI key, the tasks (`approve` and `deny` read the
 * task they decide: part of the decision). Revoking a grant, and the page reading its tasks with
 * the page key only a person was given, are not held to it.
 */
function personAct(method: string, path: string, channel: Channel): PersonAct | null {
  if (method === "POST" && path.startsWith("/approvals/api/tasks/")) return channel === "web" ? "page-decision" : "cli-decision";
  if (method === "GET" && channel === "cli" && path.startsWith("/approvals/api/tasks/")) return "cli-decision";
  if (method === "GET" && channel === "cli" && path === "/approvals/api/tasks") return "task-list";
  if (path === "/approvals/api/page-link" || path === "/approvals/api/open-link") return "page-link";
  return null;
}

/** `thoughtgate serve on ada@laptop`: who asks, when the caller does not say. */
function defaultOrigin(): string {
  return `thoughtgate serve on ${userAtHost()}`;
}

/** `ada@laptop` (a user without a passwd entry, in a container say, by $USER). */
export function userAtHost(): string {
  return `${localUserName() ?? "unknown"}@${hostname()}`;
}


