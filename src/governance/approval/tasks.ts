import { randomBytes } from "node:crypto";
import { callDigest } from "../../core/canonical-json.ts";
import type { Workflow } from "../../core/config/schema.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redact, redactText } from "../../telemetry/redact.ts";
import { MAX_REASON_CHARS, type AlwaysScope, type DecisionScope, type TaskStatus, type TaskView } from "../wire/api.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import { visibleDiff } from "../verdict/approval-prompt.ts";
import type { ChangePreview } from "../verdict/change-preview.ts";
import type { ServerProgram } from "../verdict/decider.ts";

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
  /** For `scope: always`: the rule is kept to the project, or everywhere. */
  alwaysScope?: AlwaysScope;
  /** ThoughtGate's words on the outcome (`approved in Slack by U…`, `no decision within 5m`). */
  decisionReason?: string;
  /** Who decided, where known: the Slack member id, the local user for the page and the CLI. */
  decidedByWho?: string;
  /** The person's own words with their decision (redacted, invisible characters escaped), when they gave some. */
  personReason?: string;
  /** Whether "always" can be offered for it: a rule could be written into the user's policy (checked when it was made). */
  alwaysPossible?: boolean;
  /** Why not, when it cannot (shown on the page beside the choices it does offer). */
  alwaysRefusal?: string;
  /** The project the call was made in (an "always … in this project" rule is kept to it). */
  project?: string;
  /** What the call would change (an edit, a write over an existing file), computed when it was made, redacted. */
  change?: ChangePreview;
  timeoutOutcome?: Workflow["on_timeout"];
  /**
   * Who asked: the shim channel the call came in on (`channel:<n>`), or `http` for a shim without
   * one. Only that caller relays an answer for the task, cancels it or reads it, and a session grant
   * made from it covers that caller's later calls only (docs/security.md, Only a person approves).
   */
  openedBy?: string;
  /** The asking shim was offered the task for elicitation: its agent's form may answer it. */
  relayOffered?: boolean;
  /** A task to accept a changed or flagged definition: what a person is shown besides the call. */
  definition?: NonNullable<TaskView["definition"]>;
};

export type NewTask = Pick<Task, "serverId" | "method" | "name" | "arguments" | "ruleId" | "workflowName" | "workflow" | "reason"> &
  Pick<Partial<Task>, "annotations" | "server" | "definition" | "alwaysPossible" | "alwaysRefusal" | "project" | "change">;

/**
 * A decision on a task. `reason`: ThoughtGate's words on it; `personReason`: the person's own (a
 * CLI `--reason`, the page's reason box, Slack's); `who`: the Slack member id, the local user.
 */
export type TaskAnswer = { decision: "approve" | "deny"; digest: string; reason?: string; personReason?: string; who?: string; scope?: DecisionScope; alwaysScope?: AlwaysScope };

/**
 * Who decided, as the service knows it from the credential that came with the decision (never from
 * the request body): the page key is "web", the CLI key "cli", the asking shim's own channel "elicitation";
 * "slack" is a listed approver's click or reaction on the message the service posted.
 */
export type Channel = "elicitation" | "web" | "cli" | "desktop" | "slack";

export type CreateResult = { ok: true; task: Task } | { ok: false; error: "full" };
export type ChangeResult =
  | { ok: true; task: Task }
  | { ok: false; error: "not_found" }
  | { ok: false; error: "digest_mismatch" | "not_pending" | "relay_refused"; task: Task };

/**
 * A person's words as they are kept and shown (docs/events.md, `person_reason`): credentials
 * redacted, invisible and control characters as escapes, at most MAX_REASON_CHARS; blank is none.
 */
function personWords(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const shown = showInvisible(redactText(trimmed));
  return shown.length > MAX_REASON_CHARS ? `${shown.slice(0, MAX_REASON_CHARS)}…` : shown;
}

/** A decision through a channel (the service's decide-task.ts): the store's outcome, or an "always" whose rule could not be written (the task still waits). */
export type DecideResult = ChangeResult | { ok: false; error: "not_possible"; reason: string; task: Task };

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

const MAX_TASKS = 1_000;
/** Finished tasks stay readable this long, so a shim polling GET /governance/task/{id} sees the outcome. */
const FINISHED_RETENTION_MS = 10 * 60_000;

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
   * `options.openedBy`: who asked (its shim channel). `options.relay`: that shim runs elicitation
   * for this task, and may relay its agent's answer. `options.approvedBy`: the task is approved as
   * it is made (a session grant covers the call), so the call keeps its own task, audit trail and
   * shim protocol.
   */
  create(input: NewTask, options: { openedBy?: string; relay?: boolean; approvedBy?: { by: string; reason: string } } = {}): CreateResult {
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
    if (options.openedBy !== undefined) task.openedBy = options.openedBy;
    if (options.relay === true && options.openedBy !== undefined) task.relayOffered = true;
    this.tasks.set(task.id, task);
    if (options.approvedBy) {
      this.finish(task, "approved", options.approvedBy.by, options.approvedBy.reason);
      return { ok: true, task };
    }
    this.timers.set(task.id, this.clock.schedule(input.workflow.timeout, () => this.timeOut(task)));
    this.onCreate?.(task);
    return { ok: true, task };
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
  decide(id: string, decision: TaskAnswer, channel: Channel): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (task.status !== "pending") return { ok: false, error: "not_pending", task };
    if (decision.digest !== task.digest) return { ok: false, error: "digest_mismatch", task };
    // A definition is accepted as shown, once: a later change of it is asked about again.
    if (decision.decision === "approve") {
      task.scope = task.definition ? "once" : (decision.scope ?? "once");
      if (task.scope === "always") task.alwaysScope = decision.alwaysScope ?? "project";
    }
    if (decision.who !== undefined) task.decidedByWho = decision.who;
    const words = personWords(decision.personReason);
    if (words !== undefined) task.personReason = words;
    this.finish(task, decision.decision === "approve" ? "approved" : "denied", channel, decision.reason);
    return { ok: true, task };
  }

  /**
   * The agent's user answered the elicitation a shim ran for this task: accepted only from the very
   * shim channel the call came in on, while the call is still waiting, and only when that shim was
   * offered the task for elicitation. Nothing a server or the agent's shell can read (argv,
   * environment, files) is that channel: whatever plays a shim of its own answers only its own calls.
   */
  relay(id: string, caller: string, decision: TaskAnswer): ChangeResult {
    const checked = this.checkRelay(id, caller);
    return checked.ok ? this.decide(id, decision, "elicitation") : checked;
  }

  /**
   * Whether `caller` may relay an answer for task `id`: the shim that asked, on its channel, for a
   * task offered for elicitation (an answer the service decides later, such as "always", is checked first).
   */
  checkRelay(id: string, caller: string): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (task.relayOffered !== true || task.openedBy !== caller) return { ok: false, error: "relay_refused", task };
    return { ok: true, task };
  }

  /** Whether `caller` asked for this task (a shim reads, cancels or relays only its own). */
  openedBy(task: Task, caller: string): boolean {
    return task.openedBy === caller;
  }

  /** The agent cancelled the call (notifications/cancelled) or its shim went away. */
  cancel(id: string, reason?: string, caller?: string): ChangeResult {
    const task = this.get(id);
    if (!task) return { ok: false, error: "not_found" };
    if (caller !== undefined && task.openedBy !== caller) return { ok: false, error: "relay_refused", task };
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

  /** A shim's channel closed: the calls it asked about are no longer waiting for anyone. */
  cancelOpenedBy(caller: string, reason: string): void {
    for (const task of this.tasks.values()) if (task.status === "pending" && task.openedBy === caller) this.finish(task, "cancelled", "agent", reason);
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
      ...(task.decidedByWho !== undefined ? { decided_by_who: task.decidedByWho } : {}),
      ...(task.personReason !== undefined ? { person_reason: task.personReason } : {}),
      ...(task.scope !== undefined ? { scope: task.scope } : {}),
      ...(task.alwaysScope !== undefined ? { always_scope: task.alwaysScope } : {}),
      ...(task.status === "pending" && task.alwaysPossible !== undefined ? { always_possible: task.alwaysPossible } : {}),
      ...(task.status === "pending" && task.alwaysRefusal !== undefined ? { always_refusal: task.alwaysRefusal } : {}),
      ...(task.change !== undefined ? { diff: visibleDiff(task.change.diff) } : {}),
      ...(task.project !== undefined ? { project: task.project } : {}),
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
