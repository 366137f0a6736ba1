import { randomBytes } from "node:crypto";
import { callDigest } from "../../core/canonical-json.ts";
import type { Workflow } from "../../core/config/schema.ts";
import { redact, redactText } from "../../telemetry/redact.ts";
import type { DecisionScope, TaskStatus, TaskView } from "../wire/api.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import type { ServerProgram } from "../decision/decider.ts";
import { newSecret, secretDigest, secretMatches } from "../wire/secrets.ts";

/**
 * Approval tasks (docs/architecture.md, decision 9): one per call waiting for a human, bound to a digest of the
 * exact call and expiring after its workflow's timeout. In memory and bounded: a service restart
 * forgets them, and their shims deny (fail closed).
 */
export type Task = {
  id: string;
  status: TaskStatus;
  serverId: string;
  method: string;
  name: string;
  arguments: unknown;
  /** The tool's annotations as the server listed them, when known (an `always` rule is checked with them). */
  annotations?: ToolAnnotations;
  /** What runs the server, as its shim said: a session grant and an `always` rule are bound to it. */
  server?: ServerProgram;
  ruleId: string | null;
  workflowName: string;
  workflow: Workflow;
  reason: string;
  digest: string;
  createdAt: number;
  expiresAt: number;
  /** When it left `pending`. */
  finishedAt?: number;
  /** The channel that decided it (elicitation, web, cli, desktop, slack), `session_grant:<task>`, or "timeout", "agent", "service". */
  decidedBy?: string;
  /** For an approval: what the person allowed (docs/governance.md, Approvals). */
  scope?: DecisionScope;
  decisionReason?: string;
  timeoutOutcome?: Workflow["on_timeout"];
  /** SHA-256 of the relay token given to the shim that was offered this task for elicitation. */
  relayDigest?: Buffer;
  /** A task to accept a changed or flagged definition: what a person is shown besides the call. */
  definition?: NonNullable<TaskView["definition"]>;
};

export type NewTask = Pick<Task, "serverId" | "method" | "name" | "arguments" | "ruleId" | "workflowName" | "workflow" | "reason"> & Pick<Partial<Task>, "annotations" | "server" | "definition">;

export type Decision = { decision: "approve" | "deny"; digest: string; reason?: string; scope?: DecisionScope };

/**
 * Who decided, as the service knows it from the credential that came with the decision (never from
 * the request body): the page key is "web", the CLI key "cli", a task's relay token "elicitation";
 * "slack" is a listed approver's click or reaction on the message the service posted.
 */
export type Channel = "elicitation" | "web" | "cli" | "desktop" | "slack";

/** `relayToken`: only when the task was created for elicitation; goes to the shim that asked, and nowhere else. */
export type CreateResult = { ok: true; task: Task; relayToken?: string } | { ok: false; error: "full" };
export type ChangeResult =
  | { ok: true; task: Task }
  | { ok: false; error: "not_found" }
  | { ok: false; error: "digest_mismatch" | "not_pending" | "relay_refused"; task: Task };

/** Time, injectable so tests run timeouts without waiting. */
export type Clock = {
  now(): number;
  /** Run `fn` after `ms`; returns a cancel function. */
  schedule(ms: number, fn: () => void): () => void;
};

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, fn) {
    const timer = setTimeout(fn, ms);
    // A pending approval must not keep a process alive on its own (the server does that).
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

export const MAX_TASKS = 1_000;
/** Finished tasks stay readable this long, so a shim polling GET /governance/task/{id} sees the outcome. */
export const FINISHED_RETENTION_MS = 10 * 60_000;

// Defined with canonical JSON, where the shim's own approval asks use it without loading the task store.
export { callDigest };

export class TaskStore {
  private readonly tasks = new Map<string, Task>();
  private readonly timers = new Map<string, () => void>();
  private readonly waiters = new Map<string, Set<(task: Task) => void>>();
  private readonly clock: Clock;
  private readonly capacity: number;
  private readonly retentionMs: number;
  private readonly onFinish: ((task: Task) => void) | undefined;
  private readonly onCreate: ((task: Task) => void) | undefined;

  /** `onCreate` / `onFinish`: a task was created / left `pending` (channels that reach people on their own, e.g. Slack). */
  constructor(options: { clock?: Clock; capacity?: number; retentionMs?: number; onCreate?: (task: Task) => void; onFinish?: (task: Task) => void } = {}) {
    this.clock = options.clock ?? systemClock;
    this.capacity = options.capacity ?? MAX_TASKS;
    this.retentionMs = options.retentionMs ?? FINISHED_RETENTION_MS;
    this.onFinish = options.onFinish;
    this.onCreate = options.onCreate;
  }

  /**
   * `options.relay`: the asking shim runs elicitation for this task and gets a relay token for its
   * answer. `options.approvedBy`: the task is approved as it is made (a session grant covers the
   * call), so the call keeps its own task, audit trail and shim protocol.
   */
  create(input: NewTask, options: { relay?: boolean; approvedBy?: { by: string; reason: string } } = {}): CreateResult {
    this.prune();
    if (this.tasks.size >= this.capacity) this.evictOldestFinished();
    // Every slot holds a pending call: refuse, and the caller denies (fail closed).
    if (this.tasks.size >= this.capacity) return { ok: false, error: "full" };
    const now = this.clock.now();
    const task: Task = {
      ...input,
      id: this.newId(),
      status: "pending",
      digest: callDigest(input.serverId, input.method, input.name, input.arguments),
      createdAt: now,
      expiresAt: now + input.workflow.timeout,
    };
    const relayToken = options.relay ? newSecret() : undefined;
    if (relayToken !== undefined) task.relayDigest = secretDigest(relayToken);
    this.tasks.set(task.id, task);
    if (options.approvedBy) {
      this.finish(task, "approved", options.approvedBy.by, options.approvedBy.reason);
      return { ok: true, task };
    }
    this.timers.set(task.id, this.clock.schedule(input.workflow.timeout, () => this.timeOut(task)));
    this.onCreate?.(task);
    return relayToken === undefined ? { ok: true, task } : { ok: true, task, relayToken };
  }

  get(id: string): Task | undefined {
    const task = this.tasks.get(id);
    if (task) this.timeOutIfDue(task);
    return task;
  }

  /** Pending first (oldest first), then finished ones (most recent first). */
  list(): Task[] {
    this.prune();
    const all = [...this.tasks.values()];
    for (const task of all) this.timeOutIfDue(task);
    const pending = all.filter((t) => t.status === "pending").sort((a, b) => a.createdAt - b.createdAt);
    const finished = all.filter((t) => t.status !== "pending").sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0));
    return [...pending, ...finished];
  }

  get pendingCount(): number {
    let count = 0;
    for (const task of this.tasks.values()) if (task.status === "pending") count += 1;
    return count;
  }

  /** A person's answer through `channel`; refused unless it names the exact call. */
  decide(id: string, decision: Decision, channel: Channel): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (task.status !== "pending") return { ok: false, error: "not_pending", task };
    if (decision.digest !== task.digest) return { ok: false, error: "digest_mismatch", task };
    // A definition is accepted as shown, once: a later change of it is asked about again.
    if (decision.decision === "approve") task.scope = task.definition ? "once" : (decision.scope ?? "once");
    this.finish(task, decision.decision === "approve" ? "approved" : "denied", channel, decision.reason);
    return { ok: true, task };
  }

  /**
   * The agent's user answered the elicitation a shim ran for this task: accepted only with the
   * task's relay token, which only the shim that was offered the task received. The session secret
   * alone (which every shim, and anything that can read a shim's argv or environment, has) decides nothing.
   */
  relay(id: string, relayToken: string, decision: Decision): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (!task.relayDigest || !secretMatches(relayToken, task.relayDigest)) return { ok: false, error: "relay_refused", task };
    return this.decide(id, decision, "elicitation");
  }

  /** The agent cancelled the call (notifications/cancelled) or its shim went away. */
  cancel(id: string, reason?: string): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (task.status !== "pending") return { ok: false, error: "not_pending", task };
    this.finish(task, "cancelled", "agent", reason);
    return { ok: true, task };
  }

  /** Resolves with the task once it leaves `pending` (undefined for an unknown id); rejects on abort. */
  wait(id: string, signal?: AbortSignal): Promise<Task | undefined> {
    const task = this.get(id);
    if (!task || task.status !== "pending") return Promise.resolve(task);
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      const onAbort = () => {
        set.delete(done);
        reject(signal?.reason);
      };
      const done = (finished: Task) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(finished);
      };
      set.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Cancel every pending task (the service is stopping): their shims see `cancelled` and deny. */
  cancelAll(reason: string): void {
    for (const task of this.tasks.values()) if (task.status === "pending") this.finish(task, "cancelled", "service", reason);
  }

  toView(task: Task): TaskView {
    return {
      task_id: task.id,
      status: task.status,
      server_id: task.serverId,
      method: task.method,
      // What people are shown: credentials redacted. The digest stays the one of the real call.
      name: redactText(task.name),
      arguments: redact(task.arguments ?? null),
      rule_id: task.ruleId,
      workflow: task.workflowName,
      reason: task.decisionReason ?? task.reason,
      digest: task.digest,
      created_at: new Date(task.createdAt).toISOString(),
      expires_at: new Date(task.expiresAt).toISOString(),
      ...(task.decidedBy !== undefined ? { decided_by: task.decidedBy } : {}),
      ...(task.scope !== undefined ? { scope: task.scope } : {}),
      ...(task.timeoutOutcome !== undefined ? { timeout_outcome: task.timeoutOutcome } : {}),
      // The diff and findings come from the server: redacted like arguments (escaped where shown).
      ...(task.definition !== undefined ? { definition: { ...task.definition, diff: redactText(task.definition.diff) } } : {}),
    };
  }

  private timeOut(task: Task): void {
    if (task.status !== "pending") return;
    task.timeoutOutcome = task.workflow.on_timeout;
    this.finish(task, "timed_out", "timeout", `no decision within ${task.workflow.timeout / 1000}s: ${task.workflow.on_timeout} (on_timeout)`);
  }

  /** Timers can fire late (a busy loop, a suspended laptop): reading a task settles it first. */
  private timeOutIfDue(task: Task): void {
    if (task.status === "pending" && this.clock.now() >= task.expiresAt) this.timeOut(task);
  }

  private finish(task: Task, status: TaskStatus, by: string, reason: string | undefined): void {
    task.status = status;
    task.finishedAt = this.clock.now();
    task.decidedBy = by;
    if (reason !== undefined) task.decisionReason = reason;
    this.timers.get(task.id)?.();
    this.timers.delete(task.id);
    this.onFinish?.(task);
    const waiting = this.waiters.get(task.id);
    this.waiters.delete(task.id);
    for (const resolve of waiting ?? []) resolve(task);
  }

  /** Drop finished tasks past their retention. */
  private prune(): void {
    const now = this.clock.now();
    for (const [id, task] of this.tasks) {
      this.timeOutIfDue(task);
      if (task.finishedAt !== undefined && now - task.finishedAt >= this.retentionMs) this.tasks.delete(id);
    }
  }

  private evictOldestFinished(): void {
    let oldest: Task | undefined;
    for (const task of this.tasks.values()) {
      if (task.finishedAt !== undefined && (oldest === undefined || task.finishedAt < (oldest.finishedAt ?? 0))) oldest = task;
    }
    if (oldest) this.tasks.delete(oldest.id);
  }

  /** 48 random bits as 12 hex characters: short enough to type in `thoughtgate approve`. */
  private newId(): string {
    for (;;) {
      const id = randomBytes(6).toString("hex");
      if (!this.tasks.has(id)) return id;
    }
  }
}
