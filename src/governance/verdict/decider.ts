import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import type { Place } from "../../core/project.ts";
import type { DefinitionChange, PinPolicy } from "../definitions/change.ts";
import type { TracingPlan } from "../../telemetry/tracing/start.ts";
import type { Span } from "../../telemetry/tracing/tracer.ts";
import type { SecretScanPolicy } from "./secret-policy.ts";
import type { ShellReading } from "./agent-tools.ts";

/**
 * The decision contract: the single point every governed agent→server message goes through
 * (docs/architecture.md, decision 4). A front end (the shim) asks a `Decider`: the in-process engine
 * (`LocalDecider`) or the governance service (`RemoteDecider`).
 */
/** The lists the visibility gate filters. */
export type ListKind = "tools" | "prompts" | "resources";

/**
 * Who decided a call a person was asked about (docs/events.md, `decided_by`): the channel, and who
 * where it is known (the Slack member id; the local user for the approvals page and the CLI).
 * `timeout` is the workflow's on_timeout, `session_grant` an earlier "allow for this session",
 * `always_rule` a rule "always allow" wrote, `agent_prompt` the agent's own permission prompt (the
 * call was handed to it: the person's answer there is the agent's to enforce, unseen by ThoughtGate).
 */
export const DECISION_CHANNELS = ["elicitation", "web", "cli", "desktop", "slack", "timeout", "session_grant", "always_rule", "agent_prompt"] as const;
type DecisionChannel = (typeof DECISION_CHANNELS)[number];
/**
 * How far a yes reaches (docs/events.md, `decided_by.scope`): this call `once`, the tool for the
 * `session`, or `always` (a rule written into the user's policy). Absent on a no, and where unknown.
 */
export type DecisionScope = "once" | "session" | "always";
export type DecidedBy = { channel: DecisionChannel; who?: string; scope?: DecisionScope };

export type Verdict =
  | {
      action: "forward";
      gate: string | null;
      ruleId: string | null;
      policyId?: string | null;
      reason: string;
      /** development: what production would have done instead. */
      would?: "WOULD_BLOCK" | "WOULD_REQUIRE_APPROVAL";
      autoApproved?: boolean;
      /** The channel a human approved it through. */
      approvedBy?: string;
      decidedBy?: DecidedBy;
      /** The person's own words with their decision (redacted, escaped), when they gave some. */
      personReason?: string;
    }
  | {
      action: "deny";
      gate: string;
      ruleId: string | null;
      policyId?: string | null;
      reason: string;
      /** The JSON-RPC error the agent receives. */
      error: { code: number; message: string; data?: unknown };
      /** A person's no: who said it, and their words (also in the error). */
      decidedBy?: DecidedBy;
      personReason?: string;
    };

/**
 * How far a person's yes through the agent reaches (docs/governance.md, "What an approval covers"):
 * this call, this tool on this server for the session, or always (a rule in the user's policy, kept
 * to the session's project or for every project).
 */
type AllowScope = { scope: "once" } | { scope: "session" } | { scope: "always"; alwaysScope: "project" | "everywhere" };

/**
 * What came back from asking the agent's user: a yes (with how far it reaches), a person's no, the
 * form dismissed at a person's pace (Esc: a no in an agent known to show the form to a person), or
 * no answer at all (the agent answered for no one, e.g. `cancel` from an agent that cannot show a
 * prompt, or any answer faster than a person can read): then the other approval channels still apply.
 */
export type ElicitOutcome = ({ kind: "approved" } & AllowScope) | { kind: "declined" } | { kind: "dismissed" } | { kind: "unanswered" };

/** What the form may offer besides once, session and deny: `always` when a rule could be written for this call. */
export type AskOptions = { always?: boolean };

/** What a person is asked through the agent: to allow a call (the default), or to accept a changed or flagged definition. */
export type AskPurpose = "call" | "definition";

export type DecisionContext = {
  /** Aborts when the agent cancels the request (`notifications/cancelled`) or the shim shuts down. */
  readonly signal: AbortSignal;
  serverId: string;
  /** What runs the server (the shim's own command line or URL). */
  server?: ServerProgram;
  /** The tool's annotations from the server's last tools/list, when known. */
  annotations: ToolAnnotations | undefined;
  /** Set when `annotations` are the catalog's hint for a definition that declares none (EvaluateInput). */
  annotationSource?: string | undefined;
  /**
   * Ask the human through the agent: an `elicitation/create` request (legacy era) or an
   * `input_required` answer the agent retries (modern era). null when this request's client did not
   * declare form elicitation. Rejects when `signal` aborts.
   */
  elicit: ((message: string, signal: AbortSignal, purpose?: AskPurpose, options?: AskOptions) => Promise<ElicitOutcome>) | null;
  /**
   * Set by a front end that can hand the question to the agent's own permission prompt (Claude
   * Code's hook, `ask`): where a person must decide and the agent shows its prompt to one, the
   * decision is to ask there, with `prompt` (what any channel would show, the change included),
   * instead of waiting on ThoughtGate's channels. The verdict is then a forward decided by
   * `agent_prompt`: the agent runs the call only on the person's yes.
   */
  askInAgent?: (prompt: string) => void;
  /**
   * With `askInAgent`: the agent's permission mode as its hook said (Claude Code's
   * `permission_mode`), so the service can tell the person's answer there by the mode it leaves
   * (governance/approval/agent-prompt-answers.ts).
   */
  agentMode?: string;
  /** The decider is now waiting for a human: recorded as a `pending` decision in the audit. */
  awaitingApproval(reason: string): void;
  /**
   * Set by the hooks front end for an agent's shell call whose line the session's service reads
   * (docs/governance.md, "Built-in tools"): told the service's reading, what the gates decided on,
   * before anything of the call is recorded, so the record shows what was judged.
   */
  shellRead?: (reading: ShellReading) => void;
  /**
   * Set when the decision is not about the call but about its target's definition, which changed
   * since it was pinned or was flagged (docs/governance.md, "Pinned definitions"): `forward` means a
   * person accepted the new definition (`approvedBy` says how); the call itself is decided after.
   */
  definitionChange?: DefinitionChange;
  /** Tracing on: the request's span, for the gates' events (or its context, for the service's span). */
  span?: Span | undefined;
};

export type Decider = {
  /** Shown in `run_start.policy`. */
  readonly policy: string;
  /** A verdict now, or a promise of one (pending: e.g. waiting for a human). */
  decide(request: JsonRpcRequest, context: DecisionContext): Verdict | Promise<Verdict>;
  /** How this server's definitions are pinned (`strict`, `warn`, `off`), what severity hides one, and whether production enforces; absent = off. */
  pinPolicy?(serverId: string): PinPolicy | Promise<PinPolicy>;
  /** The names of a list response the agent may see; absent = no filtering. */
  filterList?(serverId: string, kind: ListKind, names: string[]): string[] | Promise<string[]>;
  /** Called once when the shim stops. */
  close?(): Promise<void> | void;
  /** Resolves when governance asks the shim to shut down (the service's shutdown flag). */
  readonly stopRequested?: Promise<string>;
  /** How this server's results are scanned for secrets; absent: everything, redacted (secret-policy.ts). */
  secretScan?(serverId: string): SecretScanPolicy;
  /**
   * Whether the audit records each call's arguments (redacted) beside their hash: the user's
   * `audit.arguments` (docs/events.md); absent: recorded.
   */
  auditArguments?(): boolean;
  /** Given the router's running message counts, for the governance service's metrics. */
  attachCounts?(counts: () => { messages: Map<string, number>; framingErrors: Map<string, number> }): void;
  /** The MCP server's state changed, for the governance service's `thoughtgate_stdio_server_state`. */
  serverState?(state: ServerState): void;
  /**
   * How the shim traces, when it does: export itself (the standalone shim's own policy has
   * `telemetry.otlp`), or relay to the governance service (which said it traces).
   */
  readonly tracing?: TracingPlan | undefined;
};

/** The shim's MCP server, as `thoughtgate_stdio_server_state` reports it (docs/governance.md, Metrics). */
export type ServerState = "starting" | "running" | "exited" | "failed";

/** docs/architecture.md, decision 5: only these methods cost a decision; everything else is forwarded and audited. */
export const GOVERNED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "resources/subscribe",
  "prompts/get",
]);

/**
 * Why a governed request cannot be decided as sent, or null. What the gates decide on must be what
 * the server receives: a tool name that is not a string (`["delete_file"]`), positional params
 * (`["delete_file", {}]`) or arguments that are not an object would be decided as something else
 * (the empty name) and forwarded as they are. Such a request is refused with -32602.
 */
export function invalidGovernedParams(request: JsonRpcRequest): string | null {
  const params = request.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return `${request.method} needs its params as an object`;
  const { name, uri, arguments: args } = params as { name?: unknown; uri?: unknown; arguments?: unknown };
  if (request.method.startsWith("resources/")) {
    return typeof uri === "string" ? null : `${request.method} needs params.uri as a string`;
  }
  if (typeof name !== "string") return `${request.method} needs params.name as a string`;
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) return `${request.method} needs params.arguments as an object`;
  return null;
}

/** The name a governed request is about: tool or prompt name, resource URI. */
export function targetName(request: JsonRpcRequest): string {
  const params = (request.params ?? {}) as { name?: unknown; uri?: unknown };
  const value = request.method.startsWith("resources/") ? params.uri : params.name;
  return typeof value === "string" ? value : "";
}

/**
 * What runs a server: its command line as the shim starts it (what follows `--`), or a remote
 * server's URL without its query. With the id, the server's identity (definitions/identity.ts): a
 * rule written by "always allow" names it, so a repository's entry that reuses the id over another
 * program is not allowed by it.
 */
export type ServerProgram = { command: string[]; url: string | null };

/** One governed request, as every front end (shim, service, arbiter) describes it to the engine. */
export type EvaluateInput = {
  serverId: string;
  /** What runs the server, when the front end knows (a shim always does; the arbiter does not). */
  server?: ServerProgram;
  /** tools/call, resources/read, resources/subscribe or prompts/get. */
  method: string;
  /** Tool name, prompt name or resource URI. */
  name: string;
  arguments: unknown;
  /** The tool's annotations as the server listed them, when known. */
  annotations?: ToolAnnotations;
  /**
   * Where `annotations` came from when the server declared none: ThoughtGate's catalog of that
   * exact definition (definitions/annotation-catalog.ts), named in decisions that used a hint.
   */
  annotationSource?: string;
  /** Where the call is made from (the session's project, the shim's working directory); absent: the engine's own. */
  place?: Place;
};

/** What a call is, field by field, as a front end (or `validate-config --explain`) knows it. */
type CallFacts = {
  serverId: string;
  server?: ServerProgram | undefined;
  method: string;
  name: string;
  arguments: unknown;
  annotations?: ToolAnnotations | undefined;
  annotationSource?: string | undefined;
  place?: Place | undefined;
};

/**
 * The decision's input: the one place it is built, for a shim, the service and `validate-config
 * --explain` alike, so what `--explain` says a tool gets is what a session decides (a rule written
 * by "always allow" names the server's program: without it, no such rule matches).
 */
export function decisionInput(call: CallFacts): EvaluateInput {
  const input: EvaluateInput = { serverId: call.serverId, method: call.method, name: call.name, arguments: call.arguments };
  if (call.annotations) input.annotations = call.annotations;
  if (call.annotations && call.annotationSource) input.annotationSource = call.annotationSource;
  if (call.server) input.server = call.server;
  if (call.place) input.place = call.place;
  return input;
}

/** A governed request as the engine sees it. */
export function toInput(request: JsonRpcRequest, context: Pick<DecisionContext, "serverId" | "annotations" | "annotationSource" | "server">): EvaluateInput {
  const params = (request.params ?? {}) as { arguments?: unknown };
  return decisionInput({
    serverId: context.serverId,
    server: context.server,
    method: request.method,
    name: targetName(request),
    arguments: request.method === "tools/call" ? (params.arguments ?? {}) : request.params,
    annotations: context.annotations,
    annotationSource: context.annotationSource,
  });
}

/** What a deny error names: the call, and the JSON-RPC id that ties it to the audit events. */
export type CallRef = { serverId: string; method: string; name: string; correlationId: string };

export function callRef(request: JsonRpcRequest, serverId: string): CallRef {
  return { serverId, method: request.method, name: targetName(request), correlationId: String(request.id) };
}

const FORWARD_ALL: Verdict = { action: "forward", gate: null, ruleId: null, reason: "no policy loaded" };

/** Forwards everything: for tests and benchmarks of the bare proxy. */
export const forwardAll: Decider = {
  policy: "none",
  decide: () => FORWARD_ALL,
};
