import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { canonicalJson, sha256Hex } from "../../../src/core/canonical-json.ts";
import { taskView } from "../../../src/governance/wire/api.ts";
import { DEFAULT_WORKFLOW } from "../../../src/governance/engine/engine.ts";
import { callDigest, TaskStore, type NewTask } from "../../../src/governance/approval/tasks.ts";
import { FakeClock } from "../../support/fake-clock.ts";

const call = (extra: Partial<NewTask> = {}): NewTask => ({
  serverId: "github",
  method: "tools/call",
  name: "delete_repo",
  arguments: { repo: "acme/site", force: true },
  ruleId: "deletes",
  workflowName: "default",
  workflow: DEFAULT_WORKFLOW,
  reason: "rule deletes: approval required",
  ...extra,
});

function store(options: { capacity?: number; retentionMs?: number } = {}) {
  const clock = new FakeClock();
  const finished: string[] = [];
  const tasks = new TaskStore({ clock, ...options, onFinish: (task) => finished.push(`${task.id}:${task.status}`) });
  return { clock, tasks, finished };
}

function created(tasks: TaskStore, extra: Partial<NewTask> = {}) {
  const result = tasks.create(call(extra));
  if (!result.ok) throw new Error("store refused the task");
  return result.task;
}

describe("approval tasks", () => {
  test("a task is bound to the digest of [server, method, name, canonical arguments] and expires after the workflow timeout", () => {
    const { clock, tasks } = store();
    const task = created(tasks);
    expect(task.digest).toBe(sha256Hex(canonicalJson(["github", "tools/call", "delete_repo", { force: true, repo: "acme/site" }])));
    // Key order does not change the digest; a different argument does.
    expect(callDigest("github", "tools/call", "delete_repo", { force: true, repo: "acme/site" })).toBe(task.digest);
    expect(callDigest("github", "tools/call", "delete_repo", { repo: "acme/other", force: true })).not.toBe(task.digest);
    expect(task.expiresAt - clock.now()).toBe(15 * 60_000);
    const view = tasks.toView(task);
    expect(v.is(taskView, view)).toBe(true);
    expect(view).toMatchObject({ task_id: task.id, status: "pending", server_id: "github", name: "delete_repo", rule_id: "deletes", workflow: "default", digest: task.digest });
    expect(task.id).toMatch(/^[0-9a-f]{12}$/);
  });

  test("a decision with the task's digest settles it; a wrong digest or a second decision is refused", () => {
    const { tasks, finished } = store();
    const task = created(tasks);
    expect(tasks.decide(task.id, { decision: "approve", digest: "0".repeat(64) }, "web")).toEqual({ ok: false, error: "digest_mismatch", task });
    expect(tasks.get(task.id)?.status).toBe("pending");
    expect(tasks.decide(task.id, { decision: "approve", digest: task.digest }, "web")).toMatchObject({ ok: true, task: { status: "approved", decidedBy: "web" } });
    expect(tasks.decide(task.id, { decision: "deny", digest: task.digest }, "cli")).toMatchObject({ ok: false, error: "not_pending" });
    expect(tasks.decide("nope", { decision: "deny", digest: task.digest }, "cli")).toEqual({ ok: false, error: "not_found" });
    expect(finished).toEqual([`${task.id}:approved`]);
    expect(tasks.toView(task)).toMatchObject({ status: "approved", decided_by: "web" });
  });

  test("a deny carries its reason; cancel settles a pending task once", () => {
    const { tasks } = store();
    const denied = created(tasks);
    tasks.decide(denied.id, { decision: "deny", digest: denied.digest, reason: "not today" }, "cli");
    expect(tasks.toView(denied)).toMatchObject({ status: "denied", decided_by: "cli", reason: "not today" });
    const cancelled = created(tasks);
    expect(tasks.cancel(cancelled.id, "agent cancelled")).toMatchObject({ ok: true, task: { status: "cancelled" } });
    expect(tasks.cancel(cancelled.id)).toMatchObject({ ok: false, error: "not_pending" });
    expect(tasks.cancel("unknown")).toEqual({ ok: false, error: "not_found" });
  });

  test("when the timeout passes the task is timed_out with the workflow's on_timeout", async () => {
    const { clock, tasks } = store();
    const denies = created(tasks);
    const approves = created(tasks, { workflowName: "lenient", workflow: { destination: { type: "any" }, timeout: 30_000, on_timeout: "approve" } });
    const waiting = tasks.wait(approves.id);
    clock.advance(29_999);
    expect(tasks.get(approves.id)?.status).toBe("pending");
    clock.advance(1);
    expect(await waiting).toMatchObject({ status: "timed_out", timeoutOutcome: "approve", decidedBy: "timeout" });
    expect(tasks.get(denies.id)?.status).toBe("pending");
    clock.advance(15 * 60_000 - 30_000);
    expect(tasks.toView(denies)).toMatchObject({ status: "timed_out", timeout_outcome: "deny", decided_by: "timeout" });
    // A decision after the timeout is too late.
    expect(tasks.decide(denies.id, { decision: "approve", digest: denies.digest }, "web")).toMatchObject({ ok: false, error: "not_pending" });
  });

  test("wait resolves when the task leaves pending, at once for a finished or unknown task, and rejects on abort", async () => {
    const { tasks } = store();
    const task = created(tasks);
    const waiting = tasks.wait(task.id);
    tasks.decide(task.id, { decision: "deny", digest: task.digest }, "elicitation");
    expect(await waiting).toMatchObject({ status: "denied" });
    expect(await tasks.wait(task.id)).toMatchObject({ status: "denied" });
    expect(await tasks.wait("unknown")).toBeUndefined();
    const other = created(tasks);
    const controller = new AbortController();
    const aborted = tasks.wait(other.id, controller.signal);
    controller.abort(new Error("agent went away"));
    await expect(aborted).rejects.toThrow("agent went away");
  });

  test("pending tasks are listed first (oldest first), then finished ones (newest first)", () => {
    const { clock, tasks } = store();
    const a = created(tasks, { name: "a" });
    clock.advance(1);
    const b = created(tasks, { name: "b" });
    clock.advance(1);
    const c = created(tasks, { name: "c" });
    clock.advance(1);
    const d = created(tasks, { name: "d" });
    tasks.decide(a.id, { decision: "approve", digest: a.digest }, "web");
    clock.advance(1);
    tasks.decide(c.id, { decision: "deny", digest: c.digest }, "web");
    expect(tasks.list().map((t) => t.name)).toEqual(["b", "d", "c", "a"]);
    expect(tasks.pendingCount).toBe(2);
    expect(b.status).toBe("pending");
    expect(d.status).toBe("pending");
  });

  test("finished tasks stay visible for the retention time, then are pruned", () => {
    const { clock, tasks } = store({ retentionMs: 60_000 });
    const task = created(tasks);
    tasks.decide(task.id, { decision: "approve", digest: task.digest }, "web");
    clock.advance(59_000);
    expect(tasks.list().map((t) => t.id)).toEqual([task.id]);
    clock.advance(1_000);
    expect(tasks.list()).toEqual([]);
    expect(tasks.get(task.id)).toBeUndefined();
  });

  test("bounded: when full, the oldest finished task makes room; with every slot pending, a new task is refused", () => {
    const { tasks } = store({ capacity: 3 });
    const first = created(tasks, { name: "first" });
    created(tasks, { name: "second" });
    created(tasks, { name: "third" });
    expect(tasks.create(call({ name: "fourth" }))).toEqual({ ok: false, error: "full" });
    tasks.decide(first.id, { decision: "deny", digest: first.digest }, "web");
    expect(tasks.create(call({ name: "fourth" })).ok).toBe(true);
    expect(tasks.get(first.id)).toBeUndefined();
    expect(tasks.list().map((t) => t.name)).toEqual(["second", "third", "fourth"]);
  });

  test("cancelAll settles every pending task (the service is stopping)", () => {
    const { tasks, finished } = store();
    const a = created(tasks);
    const b = created(tasks);
    tasks.decide(a.id, { decision: "approve", digest: a.digest }, "web");
    tasks.cancelAll("stopping");
    expect(tasks.get(b.id)).toMatchObject({ status: "cancelled", decidedBy: "service" });
    expect(finished).toEqual([`${a.id}:approved`, `${b.id}:cancelled`]);
  });
});
