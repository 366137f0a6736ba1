import * as v from "valibot";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { log, taggedLog, type Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import { approvalPrompt } from "./approval-prompt.ts";
import { callRef, toInput, type DecisionContext, type Decider, type Verdict } from "./decider.ts";
import { deniedVerdict } from "./deny-error.ts";
import {
  evaluateResponse,
  filterResponse,
  heartbeatResponse,
  taskResponse,
  type EvaluateResponse,
  type TaskView,
} from "./api.ts";
import { GOVERNANCE_ERROR, isGate } from "./errors.ts";
import { SCAN_EVERYTHING, type SecretScanPolicy } from "./secret-policy.ts";
import { isSecretKind } from "../core/secret-kinds.ts";
import type { ListKind } from "./visibility.ts";

/** Readiness: poll /healthz with a doubling delay before the first decision. */
const READY_FIRST_DELAY_MS = 50;
const READY_MAX_DELAY_MS = 2_000;
const READY_ATTEMPTS = 20;
/** Per-call timeouts (Bun's fetch has one deadline; connect failures on loopback are immediate). */
const EVALUATE_TIMEOUT_MS = 2_000;
const POLL_TIMEOUT_MS = 5_000;
const HEARTBEAT_MS = 5_000;

export type MessageCounts = Map<string, number>;

export type RemoteOptions = {
  endpoint: string;
  secret: string;
  serverId: string;
  profile: Profile;
};

/**
 * The shim's side of the governance service (`--governance-endpoint`): every governed call is
 * decided by the service. When the service cannot be reached the call fails closed (production)
 * or is forwarded with WOULD_BLOCK (development).
 */
export class RemoteDecider implements Decider {
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private requestStop: (reason: string) => void = () => {};
  /** Resolves when the service asks the shim to shut down (wrap is exiting) or stops answering. */
  readonly stopRequested: Promise<string>;
  private counts: (() => { messages: MessageCounts; framingErrors: MessageCounts }) | null = null;
  private reported = { messages: new Map<string, number>(), framingErrors: new Map<string, number>() };
  /** The service's answer for this server, refreshed with every heartbeat; until then, scan everything. */
  private secrets: SecretScanPolicy = SCAN_EVERYTHING;

  private readonly log: Logger;

  private constructor(private readonly options: RemoteOptions) {
    this.log = taggedLog(options.serverId);
    this.stopRequested = new Promise((resolve) => {
      this.requestStop = resolve;
    });
  }

  get policy(): string {
    return `service ${this.options.endpoint}`;
  }

  /** Wait until the service answers /healthz; else GovernanceUnavailable. */
  static async connect(options: RemoteOptions): Promise<RemoteDecider> {
    const decider = new RemoteDecider({ ...options, endpoint: options.endpoint.replace(/\/+$/, "") });
    let delay = READY_FIRST_DELAY_MS;
    let lastError = "";
    for (let attempt = 1; attempt <= READY_ATTEMPTS; attempt++) {
      try {
        const response = await decider.call("GET", "/healthz", undefined, EVALUATE_TIMEOUT_MS);
        if (response.ok) {
          await decider.fetchSecretScan();
          decider.startHeartbeat();
          return decider;
        }
        lastError = `HTTP ${response.status}${response.status === 401 ? " (wrong or missing THOUGHTGATE_GOVERNANCE_SECRET)" : ""}`;
        if (response.status === 401) break;
      } catch (error) {
        lastError = messageOf(error);
      }
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, READY_MAX_DELAY_MS);
    }
    throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `governance service ${options.endpoint} is not available: ${lastError}`);
  }

  async decide(request: JsonRpcRequest, context: DecisionContext): Promise<Verdict> {
    const signal = context.signal;
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
          id: request.id,
          message_type: "request",
          profile: this.options.profile,
          channels: context.elicit ? ["elicitation"] : [],
        },
        evaluateResponse,
        EVALUATE_TIMEOUT_MS,
      );
    } catch (error) {
      return this.unavailable(request, `governance service unavailable: ${messageOf(error)}`);
    }
    if (answer.shutdown) this.requestStop("the governance service is shutting down");
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
    if (!answer.task_id) return this.unavailable(request, "the service asked for approval without a task id");
    context.awaitingApproval(`${answer.reason} (task ${answer.task_id})`);
    return this.awaitApproval(answer, answer.task_id, request, signal, context, answer.prompt ?? approvalPrompt(input, answer.reason));
  }

  secretScan(): SecretScanPolicy {
    return this.secrets;
  }

  attachCounts(counts: () => { messages: MessageCounts; framingErrors: MessageCounts }): void {
    this.counts = counts;
  }

  async filterList(serverId: string, kind: ListKind, names: string[]): Promise<string[]> {
    const answer = await this.json("POST", "/governance/filter", { server_id: serverId, kind, names }, filterResponse, EVALUATE_TIMEOUT_MS);
    if (answer.shutdown) this.requestStop("the governance service is shutting down");
    return answer.visible;
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await this.reportCounts().catch(() => {});
  }

  /**
   * Wait for the task: run the channels the service handed to the shim (elicitation) and poll the
   * task until someone decides, it times out, or the agent cancels the call.
   */
  private async awaitApproval(
    answer: EvaluateResponse,
    taskId: string,
    request: JsonRpcRequest,
    signal: AbortSignal,
    context: DecisionContext,
    prompt: string,
  ): Promise<Verdict> {
    const path = `/governance/task/${encodeURIComponent(taskId)}`;
    const done = new AbortController();
    const onCancel = () => {
      void this.call("POST", `${path}/cancel`, { reason: "the agent cancelled the request" }, EVALUATE_TIMEOUT_MS).catch(() => {});
    };
    signal.addEventListener("abort", onCancel, { once: true });
    try {
      if (answer.shim_channels?.includes("elicitation") && answer.relay_token && context.elicit) {
        void this.elicitFor(path, answer.relay_token, prompt, context.elicit, AbortSignal.any([signal, done.signal]));
      }
      const interval = Math.max(50, answer.poll_interval_ms ?? 250);
      for (;;) {
        if (signal.aborted) return this.blocked(request, answer, GOVERNANCE_ERROR.taskCancelled, "cancelled by the agent");
        let task: TaskView;
        try {
          const polled = await this.json("GET", path, undefined, taskResponse, POLL_TIMEOUT_MS);
          if (polled.shutdown) this.requestStop("the governance service is shutting down");
          task = polled.task;
        } catch (error) {
          return this.unavailable(request, `lost the governance service while waiting for approval: ${messageOf(error)}`);
        }
        if (task.status !== "pending") return this.settled(task, request, answer);
        await Bun.sleep(interval);
      }
    } finally {
      done.abort();
      signal.removeEventListener("abort", onCancel);
    }
  }

  /** Ask the agent's user, then relay the answer with the task's relay token (the session secret alone decides nothing). */
  private async elicitFor(path: string, relayToken: string, prompt: string, elicit: NonNullable<DecisionContext["elicit"]>, signal: AbortSignal): Promise<void> {
    try {
      const approved = await elicit(prompt, signal);
      const { task } = await this.json("GET", path, undefined, taskResponse, POLL_TIMEOUT_MS);
      if (task.status !== "pending") return;
      const relayed = await this.call("POST", `${path}/decision`, { decision: approved ? "approve" : "deny", digest: task.digest, relay_token: relayToken }, EVALUATE_TIMEOUT_MS);
      if (!relayed.ok && relayed.status !== 409) log.warn(`the governance service refused the elicitation answer: HTTP ${relayed.status} (other channels still apply)`);
    } catch (error) {
      if (!signal.aborted) log.warn(`approval through the agent failed: ${messageOf(error)} (other channels still apply)`);
    }
  }

  private settled(task: TaskView, request: JsonRpcRequest, answer: EvaluateResponse): Verdict {
    const by = task.decided_by ?? "unknown";
    switch (task.status) {
      case "approved":
        return { action: "forward", gate: "approval", ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: approved (${by})`, approvedBy: by };
      case "timed_out":
        if (task.timeout_outcome === "approve") {
          return { action: "forward", gate: "approval", ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: approved by on_timeout`, approvedBy: "timeout" };
        }
        return this.blocked(request, answer, GOVERNANCE_ERROR.approvalTimeout, "no answer before the approval timed out");
      case "expired":
        return this.blocked(request, answer, GOVERNANCE_ERROR.taskExpired, "the approval task expired");
      case "cancelled":
        return this.blocked(request, answer, GOVERNANCE_ERROR.taskCancelled, "the approval task was cancelled");
      default:
        return this.blocked(request, answer, GOVERNANCE_ERROR.approvalRejected, `rejected (${by})`);
    }
  }

  private blocked(request: JsonRpcRequest, answer: EvaluateResponse, code: number, why: string): Verdict {
    const block = { gate: "approval" as const, code, ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: ${why}` };
    return deniedVerdict(block, callRef(request, this.options.serverId), answer.task_id);
  }

  /** docs/architecture.md, decision 3: no answer from governance → deny in production, WOULD_BLOCK in development. */
  private unavailable(request: JsonRpcRequest, reason: string): Verdict {
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
    const answer = await this.json("POST", "/governance/heartbeat", { server_id: this.options.serverId, pid: process.pid }, heartbeatResponse, EVALUATE_TIMEOUT_MS);
    if (answer.shutdown) this.requestStop("the governance service asked the shim to shut down");
    if (answer.secrets) {
      const kinds: SecretScanPolicy["kinds"] = {};
      for (const [kind, setting] of Object.entries(answer.secrets.kinds)) if (isSecretKind(kind)) kinds[kind] = setting;
      this.secrets = { scan: answer.secrets.scan, kinds };
    }
  }

  private async beat(): Promise<void> {
    try {
      await this.heartbeatOnce();
      await this.reportCounts();
    } catch (error) {
      // The service is gone (wrap died uncleanly): shut down rather than run ungoverned.
      this.requestStop(`the governance service stopped answering (${messageOf(error)})`);
    }
  }

  /** Send what changed since the last report (for the service's Prometheus metrics). */
  private async reportCounts(): Promise<void> {
    const source = this.counts?.();
    if (!source) return;
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
    if (messages.length === 0 && framing.length === 0) return;
    await this.call("POST", "/governance/events", { server_id: this.options.serverId, messages, framing_errors: framing }, EVALUATE_TIMEOUT_MS);
  }

  private async json<S extends v.GenericSchema>(method: string, path: string, body: unknown, schema: S, timeoutMs: number): Promise<v.InferOutput<S>> {
    const response = await this.call(method, path, body, timeoutMs);
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${(await response.text()).slice(0, 200)}`);
    const parsed = v.safeParse(schema, await response.json());
    if (!parsed.success) throw new Error(`${method} ${path}: unexpected answer: ${parsed.issues[0]?.message ?? "invalid"}`);
    return parsed.output;
  }

  private call(method: string, path: string, body: unknown, timeoutMs: number): Promise<Response> {
    return fetch(`${this.options.endpoint}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  }
}
