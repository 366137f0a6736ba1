import * as v from "valibot";
import { ToolAnnotationsSchema } from "../../core/mcp-schema.ts";
import { SERVER_STATES } from "../../telemetry/metrics.ts";
import { MAX_ATTRIBUTE_CHARS, MAX_ATTRIBUTES, MAX_EVENT_ATTRIBUTES, MAX_EVENTS, MAX_LINKS, MAX_NAME_CHARS } from "../../telemetry/tracing/recorder.ts";

/**
 * The governance service's wire format: one valibot schema per body, shared by the service
 * (parses requests) and the shim (parses responses), so a change breaks both at compile time.
 *
 * Auth (docs/governance.md, Credentials): every `/governance/*` call carries `Authorization: Bearer
 * <session secret>` (shims get it in `THOUGHTGATE_GOVERNANCE_SECRET` or wrap's secret file). The
 * session secret asks for decisions; it decides none. A shim relays its user's elicitation answer
 * on its own channel, for a call it asked about on that channel (never over plain HTTP: no channel,
 * no elicitation). People's decisions go to
 * `/approvals/api/*` with the page key (the approvals page: channel web) or the CLI key (`thoughtgate
 * approve`: channel cli); the channel is the credential's, never the body's.
 */
export { APPROVAL_KEY_ENV, ENDPOINT_ENV, SESSION_SECRET_ENV } from "./env.ts";

// Numbers first: most ids are numbers, and a union's failed first branch costs an issue object.
const jsonRpcId = v.union([v.number(), v.string()]);


const finding = v.object({ rule: v.string(), severity: v.picklist(["low", "medium", "high"]), path: v.string(), start: v.number(), end: v.number(), excerpt: v.string(), message: v.string() });

/**
 * A definition a person must accept before the call runs (docs/governance.md, "Pinned
 * definitions"): sent with the evaluate request of that call; the service asks a person (a task
 * like an approval, bound to `served_digest`) and answers `forward` once they accept.
 */
const definitionChangeWire = v.object({
  kind: v.picklist(["tool", "prompt", "resource_template"]),
  name: v.string(),
  status: v.picklist(["changed", "flagged"]),
  changed: v.array(v.string()),
  pinned_digest: v.nullable(v.string()),
  served_digest: v.string(),
  diff: v.string(),
  findings: v.array(finding),
});
export type DefinitionChangeWire = v.InferOutput<typeof definitionChangeWire>;

/** POST /governance/evaluate */
export const evaluateRequest = v.object({
  server_id: v.string(),
  direction: v.picklist(["agent_to_server", "server_to_agent"]),
  method: v.string(),
  /** Tool name, prompt name or resource URI. */
  name: v.string(),
  arguments: v.optional(v.unknown()),
  annotations: v.optional(ToolAnnotationsSchema),
  /** The annotations are ThoughtGate's catalog hint for a definition that declares none: its name. */
  annotation_source: v.optional(v.pipe(v.string(), v.maxLength(200))),
  /** The shim's working directory and its project (docs/governance.md, "Rules that see arguments"): absolute paths. */
  cwd: v.optional(v.pipe(v.string(), v.maxLength(4096), v.startsWith("/"))),
  project: v.optional(v.pipe(v.string(), v.maxLength(4096), v.startsWith("/"))),
  /** What runs the server: the shim's command line (after `--`) or its URL without the query. */
  server: v.optional(v.object({ command: v.array(v.string()), url: v.nullable(v.string()) })),
  id: v.optional(v.nullable(jsonRpcId)),
  message_type: v.picklist(["request", "response", "notification"]),
  profile: v.picklist(["production", "development"]),
  /**
   * Approval channels this shim can offer itself (e.g. the agent declared `elicitation`);
   * `agent_prompt`: an agent's hook that can hand the question to the agent's own permission prompt
   * (Claude Code's `ask`), where the agent shows it to a person.
   */
  channels: v.optional(v.array(v.picklist(["elicitation", "agent_prompt"])), []),
  /** Decide whether a person accepts this changed or flagged definition, not the call. */
  definition_change: v.optional(definitionChangeWire),
  /** Tracing on: the W3C context of the shim's span for this decision (the service's span hangs under it). */
  traceparent: v.optional(v.pipe(v.string(), v.maxLength(256))),
  /** An agent's hook: the agent's permission mode as its hook input said (Claude Code's `permission_mode`). */
  agent_mode: v.optional(v.pipe(v.string(), v.maxLength(64))),
});
export type EvaluateRequest = v.InferOutput<typeof evaluateRequest>;

const rpcError = v.object({ code: v.number(), message: v.string(), data: v.optional(v.unknown()) });

export const evaluateResponse = v.object({
  /** `ask_agent`: a person must decide, and the caller offered `agent_prompt`: no task; the agent's prompt asks, with `prompt`. */
  decision: v.picklist(["forward", "deny", "pending_approval", "ask_agent"]),
  gate: v.nullable(v.string()),
  rule_id: v.nullable(v.string()),
  policy_id: v.nullable(v.string()),
  reason: v.string(),
  /** For `deny`: the JSON-RPC error the agent receives. */
  error: v.optional(rpcError),
  /** `WOULD_BLOCK` / `WOULD_REQUIRE_APPROVAL` in the development profile. */
  would: v.optional(v.picklist(["WOULD_BLOCK", "WOULD_REQUIRE_APPROVAL"])),
  auto_approved: v.optional(v.boolean()),
  /** For `pending_approval`: poll GET /governance/task/{task_id} at this interval. */
  task_id: v.optional(v.string()),
  poll_interval_ms: v.optional(v.number()),
  /** For `pending_approval`: channels the shim should run itself (elicitation), in order; its answer goes back on the same channel (POST …/decision). */
  shim_channels: v.optional(v.array(v.picklist(["elicitation"]))),
  /** Human-readable prompt for the approval ("Allow github.delete_repo with {…}?"). */
  prompt: v.optional(v.string()),
  /** With `shim_channels`: the form may offer "always" (a rule could be written into the user's policy for this call). */
  always: v.optional(v.boolean()),
  /**
   * An agent's shell call (`agent` source, tool `shell`): what the service's bash parser made of the
   * call's `command`, which the gates decided on (any `commands` or `unreadable` the caller sent is
   * dropped): the hook records the call with it.
   */
  shell: v.optional(v.union([v.object({ commands: v.array(v.string()) }), v.object({ unreadable: v.string() })])),
  shutdown: v.boolean(),
});
export type EvaluateResponse = v.InferOutput<typeof evaluateResponse>;

/**
 * POST /governance/agent-ran: an agent's hook says a call it handed to the agent's own prompt ran
 * (Claude Code's PostToolUse), and the agent's permission mode now. The answer says how far the
 * person's yes there reached, when the call was one the service handed to that prompt and still
 * waited for (agent-prompt-answers.ts); `null` otherwise.
 */
export const agentRanRequest = v.object({ id: v.pipe(v.string(), v.maxLength(512)), agent_mode: v.optional(v.pipe(v.string(), v.maxLength(64))) });
export type AgentRanRequest = v.InferOutput<typeof agentRanRequest>;
export const agentRanResponse = v.object({ scope: v.nullable(v.picklist(["once", "session"])), rule_id: v.optional(v.nullable(v.string())), shutdown: v.boolean() });
export type AgentRanResponse = v.InferOutput<typeof agentRanResponse>;

/** What an approval covers: this call, this tool for the session, or this tool from now on (a policy rule). */
const DECISION_SCOPES = ["once", "session", "always"] as const;
export type DecisionScope = (typeof DECISION_SCOPES)[number];

/** Where an "always" rule applies: the session's project only (the rule's `project:`), or every project. */
const ALWAYS_SCOPES = ["project", "everywhere"] as const;
export type AlwaysScope = (typeof ALWAYS_SCOPES)[number];

/** A call an earlier "allow for this session" let through is approved by `session_grant:<task id>` (the task that made the grant). */
export const SESSION_GRANT_PREFIX = "session_grant:";

/** The longest reason a person may give with a decision (it reaches the model and the audit). */
export const MAX_REASON_CHARS = 1_000;

const TASK_STATUSES = ["pending", "approved", "denied", "timed_out", "expired", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** GET /governance/task/{id}; also the items of GET /approvals/api/tasks. Arguments are redacted; the digest is of the real call. */
export const taskView = v.object({
  task_id: v.string(),
  status: v.picklist(TASK_STATUSES),
  server_id: v.string(),
  method: v.string(),
  name: v.string(),
  arguments: v.unknown(),
  rule_id: v.nullable(v.string()),
  workflow: v.string(),
  reason: v.string(),
  /** SHA-256 of (server, method, name, canonical arguments): what the approval is bound to. */
  digest: v.string(),
  created_at: v.string(),
  expires_at: v.string(),
  decided_by: v.optional(v.string()),
  /** Who decided, where known: the Slack member id, the local user for the page and the CLI. */
  decided_by_who: v.optional(v.string()),
  /** The person's own words with their decision (redacted, escaped), when they gave some. */
  person_reason: v.optional(v.string()),
  /** For `approved` with `scope: always`: whether the rule is kept to the session's project. */
  always_scope: v.optional(v.picklist(ALWAYS_SCOPES)),
  /** For `pending`: whether "always" can be offered (a rule could be written into the user's policy for this call). */
  always_possible: v.optional(v.boolean()),
  /** For `pending`, when "always" cannot be offered: why (a project's policy asks, an explicit policy file, a name a rule would read as a pattern). */
  always_refusal: v.optional(v.string()),
  /** What the call would change, as a unified diff (an edit's old and new text; a write over an existing file), redacted. */
  diff: v.optional(v.string()),
  /** The project directory the call was made in, when known. */
  project: v.optional(v.string()),
  /** For `approved`: what the person allowed (`once`, `session`: this tool on this server until the session ends, `always`: a rule in their policy file). */
  scope: v.optional(v.picklist(DECISION_SCOPES)),
  auto_approved: v.optional(v.boolean()),
  /** For `timed_out`: what the workflow's `on_timeout` made of it. */
  timeout_outcome: v.optional(v.picklist(["deny", "approve"])),
  /** A task to accept a changed or flagged definition (method `definitions/accept`): what changed, the diff, the findings. */
  definition: v.optional(v.object({ kind: v.string(), status: v.string(), changed: v.array(v.string()), diff: v.string(), findings: v.array(finding) })),
});
export type TaskView = v.InferOutput<typeof taskView>;

export const taskResponse = v.object({ task: taskView, shutdown: v.boolean() });

/** A session grant: this server's tool (or prompt, resource) allowed with any arguments until the session ends. */
const grantView = v.object({
  grant_id: v.string(),
  server_id: v.string(),
  method: v.string(),
  name: v.string(),
  /** The task whose "allow for this session" created it, and the channel that decided it. */
  task_id: v.string(),
  granted_by: v.string(),
  created_at: v.string(),
  /** How many calls it has let through since. */
  uses: v.number(),
});
export type GrantView = v.InferOutput<typeof grantView>;

/** The session a service serves, as people tell sessions apart: its agent, project directory and start (service-descriptor.ts, `sessionName`). */
const sessionView = v.object({
  kind: v.picklist(["wrap", "serve"]),
  agent: v.optional(v.string()),
  project: v.optional(v.string()),
  started_at: v.string(),
});
export type SessionView = v.InferOutput<typeof sessionView>;

export const tasksResponse = v.object({ tasks: v.array(taskView), grants: v.optional(v.array(grantView), []), session: v.optional(sessionView) });

/**
 * POST /approvals/api/tasks/{id} (page key or CLI key: a person on the approvals page or `thoughtgate
 * approve|deny`); answers `taskResponse`. GET /approvals/api/tasks/{id} and GET /approvals/api/tasks
 * answer `taskResponse` / `tasksResponse`. There is no `channel` field: the service records the
 * channel of the key that was used (a body that still sends one is accepted and the field dropped).
 */
export const decisionRequest = v.object({
  decision: v.picklist(["approve", "deny"]),
  /** Must equal the task's digest: a decision is bound to the exact call it was shown. */
  digest: v.string(),
  /** The person's own words: they reach the model (with a deny) and the audit. */
  reason: v.optional(v.pipe(v.string(), v.maxLength(MAX_REASON_CHARS, `a reason is at most ${MAX_REASON_CHARS} characters`))),
  /**
   * For `approve`: `once` (this call, the default), `session` (this tool on this server, any
   * arguments, until the session ends) or `always` (a rule in the user's policy file), on every
   * channel.
   */
  scope: v.optional(v.picklist(DECISION_SCOPES), "once"),
  /** With `scope: always`: the rule is kept to the session's project (the default) or applies everywhere. */
  always_scope: v.optional(v.picklist(ALWAYS_SCOPES), "project"),
});
export type DecisionRequest = v.InferOutput<typeof decisionRequest>;

/**
 * What `thoughtgate approve|deny|approvals|tasks` tell the service about the person behind them:
 * `terminal` (a person at the command's controlling terminal confirmed, or sits there), `none`
 * (it has no terminal). The service decides whether that is enough (person-check.ts).
 */
export const PERSON_HEADER = "thoughtgate-person";
export type PersonAtCli = "terminal" | "none";

/**
 * GET /approvals/api/page-link (CLI key): the approvals page with its key, for `thoughtgate
 * approvals` and `tasks` to print; POST /approvals/api/open-link: a one-time link (`#open=<code>`)
 * for `approvals --open` to hand a browser. Both only to a person at a terminal (docs/security.md).
 */
export const pageLink = v.object({ url: v.string() });
export type PageLink = v.InferOutput<typeof pageLink>;

/** POST /approvals/api/open (no key): the page redeems a one-time link's code for its key, once, within a minute. */
export const openRequest = v.object({ code: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "expected 64 hex characters")) });

/**
 * POST /governance/task/{id}/decision, on the shim's channel: the shim relays its user's answer to
 * the elicitation it ran for a call it asked about on that same channel, still waiting; recorded as
 * channel elicitation. Refused (401) from anywhere else: another channel, plain HTTP, a task not
 * offered for elicitation. `scope` as the person chose it in the form (`always` only where the
 * evaluate answer said the form may offer it); a session grant made so covers that shim's calls only.
 */
export const relayRequest = v.object({
  ...decisionRequest.entries,
});

/**
 * POST /governance/task/{id}/unanswered, on the shim's channel, for a call it asked about there:
 * the elicitation the shim ran got no decision (the agent cancelled it at once, as `claude -p`
 * does, or failed); the task stays pending and the service tells the person another way (a desktop
 * notification). Answers `taskResponse`.
 */
export const unansweredRequest = v.object({
  reason: v.optional(v.string()),
  /** The form was dismissed at a person's pace (Esc): the person's no where wrap knows the agent shows its forms to a person. */
  dismissed: v.optional(v.boolean()),
});

/** POST /governance/task/{id}/cancel (the agent sent notifications/cancelled); answers `taskResponse`. */
export const cancelRequest = v.object({ reason: v.optional(v.string()) });

/** POST /governance/pins: how this server's definitions are pinned; `enforce` is the stricter of the shim's and the service's profile. */
export const pinsRequest = v.object({ server_id: v.string(), profile: v.picklist(["production", "development"]) });
export const pinsResponse = v.object({
  mode: v.picklist(["strict", "warn", "off"]),
  block_severity: v.picklist(["low", "medium", "high", "none"]),
  enforce: v.boolean(),
  shutdown: v.boolean(),
});

/**
 * How the policy wants this server's results scanned for secrets (secret-policy.ts). Kinds are
 * keyed by string: a kind this shim does not know is ignored, not an error.
 */
const secretScanWire = v.object({
  scan: v.boolean(),
  kinds: v.record(v.string(), v.object({ action: v.picklist(["redact", "detect", "off"]), replacement: v.optional(v.string()) })),
});

/** POST /governance/heartbeat; the shim also sends one on connecting, for `secrets`. */
export const heartbeatRequest = v.object({ server_id: v.string(), pid: v.optional(v.number()) });
export const heartbeatResponse = v.object({
  shutdown: v.boolean(),
  secrets: v.optional(secretScanWire),
  /** What the audit records of a call's arguments (`audit.arguments` of the user's policy). */
  audit_arguments: v.optional(v.picklist(["redacted", "hash"])),
  /** The service traces: the shim's session span hangs under this one, and its spans go to POST /governance/spans. */
  tracing: v.optional(v.object({ traceparent: v.pipe(v.string(), v.maxLength(256)) })),
});

/** POST /governance/filter: which names of a list response the agent may see. */
export const filterRequest = v.object({
  server_id: v.string(),
  kind: v.picklist(["tools", "prompts", "resources"]),
  names: v.array(v.string()),
});
export const filterResponse = v.object({ visible: v.array(v.string()), shutdown: v.boolean() });

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

/**
 * POST /governance/events: shims report what the service should count (metrics); answers
 * `heartbeatResponse`. Label values are bounded by the service: known MCP methods, a few others per
 * server, the rest counted as `other`; every value at most 128 characters.
 */
export const metricsReport = v.object({
  server_id: v.string(),
  messages: v.optional(v.array(v.object({ direction: v.string(), method: v.string(), count })), []),
  framing_errors: v.optional(v.array(v.object({ error_type: v.string(), count })), []),
  /** The shim's MCP server: starting, running, exited or failed (docs/governance.md, Metrics). */
  server_state: v.optional(v.picklist(SERVER_STATES)),
});

/**
 * The shim's channel (`GET /governance/channel`, a WebSocket opened with the session secret): each
 * message asks what the HTTP endpoint of the same method and path would be asked, with its JSON body.
 */
export const channelRequest = v.object({
  id: v.pipe(v.number(), v.integer()),
  method: v.picklist(["GET", "POST"]),
  path: v.pipe(v.string(), v.startsWith("/governance/")),
  body: v.optional(v.unknown()),
});
export type ChannelRequest = v.InferOutput<typeof channelRequest>;

/** The service's messages on a channel: the answer to request `id` (the HTTP status and JSON body), or a push. */
export const channelAnswer = v.union([
  v.object({ id: v.pipe(v.number(), v.integer()), status: v.pipe(v.number(), v.integer()), body: v.unknown() }),
  v.object({ push: v.literal("shutdown") }),
]);
export type ChannelAnswer = v.InferOutput<typeof channelAnswer>;

export const healthResponse = v.object({ status: v.literal("ok"), version: v.string(), profile: v.string() });

const hex = (digits: number) => v.pipe(v.string(), v.regex(new RegExp(`^[0-9a-f]{${digits}}$`), `expected ${digits} lower-case hex digits`));
const time = v.pipe(v.number(), v.finite());
const attributes = (max: number) =>
  v.pipe(
    v.record(v.pipe(v.string(), v.maxLength(MAX_NAME_CHARS)), v.union([v.pipe(v.string(), v.maxLength(MAX_ATTRIBUTE_CHARS)), v.pipe(v.number(), v.finite()), v.boolean()])),
    v.check((value) => Object.keys(value).length <= max, `at most ${max} attributes`),
  );
const spanContext = v.object({ traceId: hex(32), spanId: hex(16) });

/** One finished span, as a shim records it (telemetry/tracing/tracer.ts, `SpanRecord`), within the recorder's bounds. */
const spanRecord = v.object({
  ...spanContext.entries,
  parentSpanId: v.nullable(hex(16)),
  name: v.pipe(v.string(), v.maxLength(MAX_NAME_CHARS)),
  kind: v.picklist(["internal", "server", "client"]),
  startMs: time,
  endMs: time,
  attributes: attributes(MAX_ATTRIBUTES),
  events: v.pipe(v.array(v.object({ name: v.pipe(v.string(), v.maxLength(MAX_NAME_CHARS)), timeMs: time, attributes: attributes(MAX_EVENT_ATTRIBUTES) })), v.maxLength(MAX_EVENTS)),
  links: v.pipe(v.array(spanContext), v.maxLength(MAX_LINKS)),
  status: v.object({ code: v.picklist(["unset", "error"]), message: v.optional(v.pipe(v.string(), v.maxLength(MAX_ATTRIBUTE_CHARS))) }),
});

/**
 * POST /governance/spans (session secret): a shim of a tracing service hands over its finished
 * spans, which the service exports with its own exporter, and what it lost since its last report
 * (counted in `/metrics`). Answers `{shutdown}`; 404 when the service does not trace. On the shim's
 * channel like every `/governance/*` call.
 */
export const spanRelay = v.object({
  server_id: v.string(),
  pid: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  spans: v.pipe(v.array(spanRecord), v.maxLength(128)),
  dropped: v.optional(v.object({ queue_full: v.optional(count), export_failed: v.optional(count), shutdown: v.optional(count) }), {}),
});

/**
 * Any non-2xx answer: 400 bad_request (the body failed its schema, or the request has no Host
 * header; one line), 401 unauthorized (missing or wrong secret, key or relay token), 403 forbidden
 * (foreign Host or cross-origin POST), 404 not_found (unknown task or endpoint), 409 not_pending
 * (already decided) or digest_mismatch (the decision names another call).
 */
export const errorResponse = v.object({
  error: v.string(),
  code: v.picklist(["bad_request", "unauthorized", "forbidden", "not_found", "not_pending", "digest_mismatch", "not_possible", "internal"]),
});

/** A JSON answer free of its transport: an HTTP response, or a message on a shim's channel. */
export type Answer = { status: number; body: unknown };

/**
 * POST /slack/handoff (no bearer: the service checks with the kernel that the caller is this
 * ThoughtGate binary running beside it, src/core/peer-process.ts): a Slack click that reached a
 * session that did not post its message, handed on as Slack sent it, with the Slack app it came
 * through (its Web API URL and a SHA-256 of its app token, never the token). Answers `{claimed}`:
 * whether this service posted that message (and so decided or refused the click itself).
 */
export const slackHandoffRequest = v.object({
  base_url: v.pipe(v.string(), v.maxLength(2048)),
  app_token_sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "expected 64 lower-case hex digits")),
  payload: v.unknown(),
});
export type SlackHandoffRequest = v.InferOutput<typeof slackHandoffRequest>;
export const slackHandoffResponse = v.object({ claimed: v.boolean() });
export const SLACK_HANDOFF_PATH = "/slack/handoff";
