import * as v from "valibot";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { taggedLog, type Logger } from "../../core/log.ts";
import type { Profile } from "../../core/profile.ts";
import type { Place } from "../../core/project.ts";
import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import type { RelayBody, TracingPlan } from "../../telemetry/tracing/start.ts";
import type { SendOutcome } from "../../telemetry/tracing/span-queue.ts";
import { formatTraceparent, parseTraceparent } from "../../telemetry/tracing/trace-context.ts";
import { approvalPrompt } from "../verdict/approval-prompt.ts";
import { callRef, toInput, type DecisionContext, type Decider, type ListKind, type ServerState, type Verdict } from "../verdict/decider.ts";
import { deniedVerdict } from "../verdict/deny-error.ts";
import type { PinPolicy } from "../definitions/change.ts";
import { toWire } from "../wire/definition-change.ts";
import {
  evaluateResponse,
  filterResponse,
  heartbeatResponse,
  pinsResponse,
  type EvaluateResponse,
} from "../wire/api.ts";
import { GOVERNANCE_ERROR, isGate } from "../verdict/errors.ts";
import type { Answer } from "../wire/api.ts";
import { ENDED_SESSION_FIX } from "./ended-session.ts";
import { ServiceChannel } from "./service-channel.ts";
import { awaitApproval, isOk, REQUEST_TIMEOUT_MS, type ServiceCalls } from "./task-wait.ts";
import { SCAN_EVERYTHING, type SecretScanPolicy } from "../verdict/secret-policy.ts";
import { isSecretKind } from "../../core/secret-kinds.ts";

/** Readiness: poll /healthz with a doubling delay before the first decision, for at most the budget. */
const READY_FIRST_DELAY_MS = 50;
const READY_MAX_DELAY_MS = 2_000;
/** The whole wait for readiness (`shim --governance-ready-timeout`), a /healthz that never answers included. */
const READY_TIMEOUT_MS = 30_000;
/** Per-call timeouts (Bun's fetch has one deadline; connect failures on loopback are immediate). */
const HEARTBEAT_MS = 5_000;

export type MessageCounts = Map<string, number>;

export type RemoteOptions = {
  endpoint: string;
  secret: string;
  serverId: string;
  profile: Profile;
  /** Where this shim's calls are made from: sent with each evaluate request. */
  place?: Place;
  /** How long to wait for the service to answer /healthz before giving up (default READY_TIMEOUT_MS). */
  readyTimeoutMs?: number;
  /**
   * For a wrap session's service: why the session is over, or null while its wrap runs. Asked after
   * each failed attempt, so a service whose wrap was killed is given up at once (SessionEnded), not
   * waited for until the budget runs out.
   */
  sessionGone?: () => string | null;
};

/** The service of the shim's wrap session is gone with its wrap: the caller fails closed at once. */
export class SessionEnded extends Error {}

/**
 * The shim's side of the governance service (`--governance-endpoint`): every governed call is
 * decided by the service. When the service cannot be reached the call fails closed (production)
 * or is forwarded with WOULD_BLOCK (development). Waiting on an approval task is task-wait.ts; this
 * class keeps the channel, its heartbeat and the reports, which share one lifetime.
 */
export class RemoteDecider implements Decider {
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private channel: ServiceChannel | null = null;
  private requestStop: (reason: string) => void = () => {};
  /** Resolves when the service asks the shim to shut down (wrap is exiting) or stops answering. */
  readonly stopRequested: Promise<string>;
  private counts: (() => { messages: MessageCounts; framingErrors: MessageCounts }) | null = null;
  private reported = { messages: new Map<string, number>(), framingErrors: new Map<string, number>() };
  /** The server state not yet delivered to the service (a failed report is sent again with the next one). */
  private unreportedState: ServerState | null = null;
  /** Reports go one after another, so the service sees states in the order they happened. */
  private reporting: Promise<void> = Promise.resolve();
  /** The service's answer for this server, refreshed with every heartbeat; until then, scan everything. */
  private secrets: SecretScanPolicy = SCAN_EVERYTHING;
  /** Until the service says otherwise, the record keeps hashes only: the user may have asked for that. */
  private recordArguments = false;

  private readonly log: Logger;
  /** What waiting on an approval task (task-wait.ts) asks of this decider. */
  private readonly service: ServiceCalls;
  /** The service traces (its heartbeat said so): this shim's spans go to it (docs/governance.md, Traces). */
  tracing: TracingPlan | undefined;

  private constructor(private readonly options: RemoteOptions) {
    this.log = taggedLog(options.serverId);
    this.stopRequested = new Promise((resolve) => {
      this.requestStop = resolve;
    });
    this.service = {
      serverId: options.serverId,
      log: this.log,
      json: (method, path, body, schema, timeoutMs) => this.json(method, path, body, schema, timeoutMs),
      call: (method, path, body, timeoutMs) => this.call(method, path, body, timeoutMs),
      requestStop: (reason) => this.requestStop(reason),
      unavailable: (request, reason) => this.unavailable(request, reason),
    };
  }

  get policy(): string {
    return `service ${this.options.endpoint}`;
  }

  /**
   * Open the channel to the service (service-channel.ts), waiting for the service to be ready; else
   * GovernanceUnavailable. The budget bounds the whole wait: a service that accepts connections and
   * never answers costs it, not a timeout per attempt. A refused channel is asked about over HTTP
   * (`/healthz`), so a wrong secret is said at once rather than waited out.
   */
  static async connect(options: RemoteOptions): Promise<RemoteDecider> {
    const decider = new RemoteDecider({ ...options, endpoint: options.endpoint.replace(/\/+$/, "") });
    const budgetMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
    const deadline = performance.now() + budgetMs;
    const attempt = () => Math.max(1, Math.min(REQUEST_TIMEOUT_MS, deadline - performance.now()));
    let delay = READY_FIRST_DELAY_MS;
    for (;;) {
      let why: string;
      try {
        decider.channel = await ServiceChannel.open(decider.options.endpoint, options.secret, attempt(), {
          onShutdown: () => decider.requestStop("the governance service asked the shim to shut down"),
          // The service is gone (it died uncleanly: wrap stopping pushes shutdown first). Every call
          // from now on is denied, with the reason, and the next heartbeat stops the shim.
          onClose: (reason) => decider.log.error(`${reason}: every governed call is denied until the shim stops at its next heartbeat`),
        });
        await decider.fetchSecretScan();
        decider.startHeartbeat();
        // Connected: the shim starts its server next.
        decider.serverState("starting");
        return decider;
      } catch (error) {
        why = messageOf(error);
        const status = await healthStatus(decider.options.endpoint, options.secret, attempt());
        if (status === 401) throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `governance service ${options.endpoint} is not available: HTTP 401 (wrong or missing THOUGHTGATE_GOVERNANCE_SECRET)`);
        const gone = options.sessionGone?.() ?? null;
        if (gone !== null) throw new SessionEnded(gone);
      }
      const left = deadline - performance.now();
      if (left <= 0) throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `governance service ${options.endpoint} did not become ready within ${formatBudget(budgetMs)} (last: ${why})`);
      await Bun.sleep(Math.min(delay, left));
      delay = Math.min(delay * 2, READY_MAX_DELAY_MS);
    }
  }

  async decide(request: JsonRpcRequest, context: DecisionContext): Promise<Verdict> {
    const input = toInput(request, context);
    let answer: EvaluateResponse;
    try {
      answer = await this.json(
        "POST",
        "/governance/evaluate",
        {
          server_id: this.options.serverId,
          direction: "agent_to_server",
          method: input.method,
          name: input.name,
          arguments: input.arguments,
          ...(input.annotations ? { annotations: input.annotations } : {}),
          ...(input.annotationSource ? { annotation_source: input.annotationSource } : {}),
          ...(this.options.place ? { cwd: this.options.place.cwd, project: this.options.place.project } : {}),
          ...(input.server ? { server: input.server } : {}),
          id: request.id,
          message_type: "request",
          profile: this.options.profile,
          channels: [...(context.elicit ? (["elicitation"] as const) : []), ...(context.askInAgent ? (["agent_prompt"] as const) : [])],
          ...(context.askInAgent && context.agentMode !== undefined ? { agent_mode: context.agentMode } : {}),
          ...(context.definitionChange ? { definition_change: toWire(context.definitionChange) } : {}),
          // The service's span for this decision hangs under the shim's.
          ...(context.span?.context ? { traceparent: formatTraceparent(context.span.context) } : {}),
        },
        evaluateResponse,
        REQUEST_TIMEOUT_MS,
      );
    } catch (error) {
      return this.unavailable(request, `governance service unavailable: ${messageOf(error)}`);
    }
    if (answer.shutdown) this.requestStop("the governance service is shutting down");
    if (answer.shell) context.shellRead?.("commands" in answer.shell ? { ok: true, commands: answer.shell.commands } : { ok: false, why: answer.shell.unreadable });
    if (answer.decision === "forward") {
      return {
        action: "forward",
        gate: answer.gate,
        ruleId: answer.rule_id,
        policyId: answer.policy_id,
        reason: answer.reason,
        ...(answer.would ? { would: answer.would } : {}),
        ...(answer.auto_approved ? { autoApproved: true } : {}),
      };
    }
    if (answer.decision === "deny") {
      // The service builds the agent's error with the one deny-error builder; without one, build it here.
      if (answer.error) return { action: "deny", gate: answer.gate ?? "governance", ruleId: answer.rule_id, policyId: answer.policy_id, reason: answer.reason, error: answer.error };
      const gate = isGate(answer.gate) ? answer.gate : "governance";
      return deniedVerdict({ gate, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: answer.rule_id, policyId: answer.policy_id, reason: answer.reason }, callRef(request, this.options.serverId));
    }
    if (answer.decision === "ask_agent") {
      if (!context.askInAgent) return this.unavailable(request, "the service handed the question to an agent prompt this caller did not offer");
      context.askInAgent(answer.prompt ?? approvalPrompt(input, answer.reason));
      return { action: "forward", gate: answer.gate ?? "approval", ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: asked in the agent's own prompt`, decidedBy: { channel: "agent_prompt" } };
    }
    if (!answer.task_id) return this.unavailable(request, "the service asked for approval without a task id");
    context.awaitingApproval(`${answer.reason} (task ${answer.task_id})`);
    // The signal only now: made for a call that waits (most never do).
    return awaitApproval(this.service, answer, answer.task_id, request, context.signal, context, answer.prompt ?? approvalPrompt(input, answer.reason));
  }

  secretScan(): SecretScanPolicy {
    return this.secrets;
  }

  auditArguments(): boolean {
    return this.recordArguments;
  }

  attachCounts(counts: () => { messages: MessageCounts; framingErrors: MessageCounts }): void {
    this.counts = counts;
  }

  /** Sent at once (a scrape should see a server fail when it does), and again with the next report if that failed. */
  serverState(state: ServerState): void {
    this.unreportedState = state;
    void this.report().catch(() => {});
  }

  private report(): Promise<void> {
    const next = this.reporting.then(() => this.reportCounts());
    this.reporting = next.catch(() => {});
    return next;
  }

  async pinPolicy(serverId: string): Promise<PinPolicy> {
    const answer = await this.json("POST", "/governance/pins", { server_id: serverId, profile: this.options.profile }, pinsResponse, REQUEST_TIMEOUT_MS);
    if (answer.shutdown) this.requestStop("the governance service is shutting down");
    return { mode: answer.mode, blockSeverity: answer.block_severity, enforce: answer.enforce };
  }

  async filterList(serverId: string, kind: ListKind, names: string[]): Promise<string[]> {
    let answer: v.InferOutput<typeof filterResponse>;
    try {
      answer = await this.json("POST", "/governance/filter", { server_id: serverId, kind, names }, filterResponse, REQUEST_TIMEOUT_MS);
    } catch (error) {
      throw new Error(this.sessionEnded() ?? messageOf(error));
    }
    if (answer.shutdown) this.requestStop("the governance service is shutting down");
    return answer.visible;
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.report().catch(() => {});
    this.channel?.close();
  }

  /** docs/architecture.md, decision 3: no answer from governance → deny in production, WOULD_BLOCK in development. */
  private unavailable(request: JsonRpcRequest, reason: string): Verdict {
    const ended = this.sessionEnded();
    if (ended !== null) {
      // As an ended session's decider (ended-session.ts): production or not, no policy is left to apply.
      return deniedVerdict({ gate: "governance", code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason: ended }, callRef(request, this.options.serverId));
    }
    this.log.error(`${reason}`);
    if (this.options.profile === "development") {
      return { action: "forward", gate: "governance", ruleId: null, reason: `WOULD_BLOCK: ${reason}`, would: "WOULD_BLOCK" };
    }
    const block = { gate: "governance" as const, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason };
    return deniedVerdict(block, callRef(request, this.options.serverId));
  }

  private startHeartbeat(): void {
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** One heartbeat before the first message, so results are scanned as the service's policy says from the start. */
  private async fetchSecretScan(): Promise<void> {
    try {
      await this.heartbeatOnce();
    } catch (error) {
      // Scanning everything is the strict default; the next heartbeat tries again.
      this.log.warn(`could not read the secret scanning settings from the governance service (${messageOf(error)}): scanning every result until it answers`);
    }
  }

  private async heartbeatOnce(): Promise<void> {
    const answer = await this.json("POST", "/governance/heartbeat", { server_id: this.options.serverId, pid: process.pid }, heartbeatResponse, REQUEST_TIMEOUT_MS);
    if (answer.shutdown) this.requestStop("the governance service asked the shim to shut down");
    if (answer.secrets) {
      const kinds: SecretScanPolicy["kinds"] = {};
      for (const [kind, setting] of Object.entries(answer.secrets.kinds)) if (isSecretKind(kind)) kinds[kind] = setting;
      this.secrets = { scan: answer.secrets.scan, kinds };
    }
    if (answer.audit_arguments) this.recordArguments = answer.audit_arguments === "redacted";
    // A service that traces says so, with the span this shim's session span hangs under (its first
    // heartbeat comes before the shim starts, so the shim knows before its first message).
    const parent = this.tracing ? null : parseTraceparent(answer.tracing?.traceparent);
    if (parent) this.tracing = { kind: "relay", parent, target: `span relay to the governance service ${this.options.endpoint}`, send: (spans) => this.relaySpans(spans) };
  }

  private async beat(): Promise<void> {
    try {
      await this.heartbeatOnce();
      await this.report();
    } catch (error) {
      const ended = this.sessionEnded();
      if (ended !== null) {
        // The session's wrap is gone (kill -9) while its agent runs on: the shim stays, refusing
        // each governed call with the fix, as a shim started by that agent now would
        // (ended-session.ts); exiting would show the agent a dead server and no reason.
        if (this.heartbeat) clearInterval(this.heartbeat);
        this.heartbeat = null;
        this.log.error(`${ended}; every governed call is refused from now on`);
        return;
      }
      // The service is gone (wrap died uncleanly): shut down rather than run ungoverned.
      this.requestStop(`the governance service stopped answering (${messageOf(error)})`);
    }
  }

  /** Why the wrap session this shim belongs to is over, with the fix; null while it runs (or outside a session). */
  private sessionEnded(): string | null {
    const gone = this.options.sessionGone?.() ?? null;
    return gone === null ? null : `${gone}: ${ENDED_SESSION_FIX}`;
  }

  /** Send what changed since the last report (for the service's Prometheus metrics). */
  private async reportCounts(): Promise<void> {
    const source = this.counts?.() ?? { messages: new Map<string, number>(), framingErrors: new Map<string, number>() };
    const delta = (now: MessageCounts, before: Map<string, number>) => {
      const out: Array<[string, number]> = [];
      for (const [key, count] of now) {
        const change = count - (before.get(key) ?? 0);
        if (change > 0) out.push([key, change]);
        before.set(key, count);
      }
      return out;
    };
    const messages = delta(source.messages, this.reported.messages).map(([key, count]) => {
      const [direction, method] = key.split(" ", 2) as [string, string];
      return { direction, method, count };
    });
    const framing = delta(source.framingErrors, this.reported.framingErrors).map(([error_type, count]) => ({ error_type, count }));
    const state = this.unreportedState;
    if (messages.length === 0 && framing.length === 0 && state === null) return;
    const response = await this.call("POST", "/governance/events", { server_id: this.options.serverId, messages, framing_errors: framing, ...(state ? { server_state: state } : {}) }, REQUEST_TIMEOUT_MS);
    // A newer state may have been set while this one was on its way.
    if (isOk(response) && this.unreportedState === state) this.unreportedState = null;
  }

  private async relaySpans(body: RelayBody): Promise<SendOutcome> {
    try {
      const answer = await this.call("POST", "/governance/spans", { server_id: this.options.serverId, pid: process.pid, ...body }, REQUEST_TIMEOUT_MS);
      return isOk(answer) ? { ok: true } : { ok: false, error: `HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}` };
    } catch (error) {
      return { ok: false, error: messageOf(error) };
    }
  }

  private async json<S extends v.GenericSchema>(method: "GET" | "POST", path: string, body: unknown, schema: S, timeoutMs: number): Promise<v.InferOutput<S>> {
    const answer = await this.call(method, path, body, timeoutMs);
    if (!isOk(answer)) throw new Error(`${method} ${path}: HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    const parsed = v.safeParse(schema, answer.body);
    if (!parsed.success) throw new Error(`${method} ${path}: unexpected answer: ${parsed.issues[0]?.message ?? "invalid"}`);
    return parsed.output;
  }

  /** Every call to the service goes over the one channel. */
  private call(method: "GET" | "POST", path: string, body: unknown, timeoutMs: number): Promise<Answer> {
    if (!this.channel) return Promise.reject(new Error("no channel to the governance service"));
    return this.channel.request(method, path, body, timeoutMs);
  }
}

/** `/healthz`'s HTTP status, or null when the service did not answer at all. */
async function healthStatus(endpoint: string, secret: string, timeoutMs: number): Promise<number | null> {
  try {
    const response = await fetch(`${endpoint}/healthz`, { headers: { authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return null;
  }
}

/** 30000 → "30s", 1500 → "1500ms": as the flag takes it. */
function formatBudget(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}
