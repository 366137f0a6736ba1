/**
 * The desktop notifier on its own, with a fake notify-send (test/support/fake-notify.ts) and a
 * clock the test moves: when a task is announced, how many at once, what the words say, and what
 * a workflow that asks elsewhere gets.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Workflow } from "../../../src/core/config/schema.ts";
import { DesktopNotifier, ELICITATION_GRACE_MS, MAX_LIVE_NOTIFICATIONS, notificationText, type DesktopDecision, type NotifyTool } from "../../../src/governance/approval/desktop-notifier.ts";
import { TaskStore, type Task } from "../../../src/governance/approval/tasks.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { fakeNotifySend } from "../../support/fake-notify.ts";
import { tempDir, waitFor } from "../../support/harness.ts";

const ANY: Workflow = { destination: { type: "any" }, timeout: 300_000, on_timeout: "deny" };
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function setup(tool: NotifyTool) {
  const clock = new FakeClock();
  const store = new TaskStore({ clock });
  const decided: Array<{ id: string } & DesktopDecision> = [];
  const notifier = new DesktopNotifier({ tool, pageUrl: "http://127.0.0.1:4321/approvals", clock, decide: (task, choice) => void decided.push({ id: task.id, ...choice }) });
  closers.push(() => notifier.close());
  const task = (name: string, workflow: Workflow = ANY): Task => {
    const created = store.create({ serverId: "fs", method: "tools/call", name, arguments: { path: "/tmp/x" }, ruleId: "deletes", workflowName: "default", workflow, reason: "rule deletes: approval required" });
    if (!created.ok) throw new Error("task store full");
    return created.task;
  };
  return { clock, store, notifier, task, decided };
}

const notifySend = (env: Record<string, string>): NotifyTool => ({ kind: "notify-send", path: join(env.PATH?.split(":")[0] ?? "", "notify-send"), env: { ...process.env, ...env } });

describe("when a task is announced", () => {
  test("at once when the agent is not asking; after the grace when it is, unless the shim says its prompt went unanswered", async () => {
    using fake = fakeNotifySend();
    const { clock, notifier, task } = setup(notifySend(fake.env));
    notifier.pending(task("delete_a"), false);
    await waitFor(() => fake.notifications().length === 1, "the first notification");
    const asked = task("delete_b");
    notifier.pending(asked, true);
    const unanswered = task("delete_c");
    notifier.pending(unanswered, true);
    notifier.unanswered(unanswered);
    await waitFor(() => fake.notifications().length === 2, "the unanswered task's notification");
    expect(fake.notifications().map((n) => n.title)).toEqual(["ThoughtGate: allow fs.delete_a?", "ThoughtGate: allow fs.delete_c?"]);
    clock.advance(ELICITATION_GRACE_MS);
    await waitFor(() => fake.notifications().length === 3, "the notification after the grace");
    expect(fake.notifications()[2]?.title).toBe("ThoughtGate: allow fs.delete_b?");
  });

  test(`at most ${MAX_LIVE_NOTIFICATIONS} at once: the next waits until one is decided or dismissed`, async () => {
    using fake = fakeNotifySend();
    const { notifier, store, task, decided } = setup(notifySend(fake.env));
    const tasks = ["delete_1", "delete_2", "delete_3", "delete_4", "delete_5"].map((name) => task(name));
    for (const t of tasks) notifier.pending(t, false);
    await waitFor(() => fake.notifications().length === MAX_LIVE_NOTIFICATIONS, "three notifications");
    // Decided elsewhere: withdrawn, and the next one shows.
    const [first, second] = fake.notifications();
    store.decide(tasks[0]?.id ?? "", { decision: "deny", digest: tasks[0]?.digest ?? "" }, "web");
    notifier.finished(tasks[0] as Task);
    await waitFor(() => fake.ended(first?.pid ?? 0) === "signal" && fake.notifications().length === 4, "the fourth notification");
    // A click decides through the notifier's callback; the slot goes to the fifth.
    await fake.click(second?.pid ?? 0, "once");
    await waitFor(() => fake.notifications().length === 5, "the fifth notification");
    expect(decided).toEqual([{ id: tasks[1]?.id ?? "", decision: "approve", scope: "once" }]);
  });
});

describe("its actions", () => {
  test("the form's words; always (in this project) only where a rule could be written, and a click on it decides always", async () => {
    using fake = fakeNotifySend();
    const { notifier, task, decided } = setup(notifySend(fake.env));
    const plain = task("delete_a");
    const writable = Object.assign(task("delete_b"), { alwaysPossible: true });
    notifier.pending(plain, false);
    notifier.pending(writable, false);
    const [first, second] = await waitFor(() => (fake.notifications().length === 2 ? fake.notifications() : null), "two notifications");
    const actions = (args: string[] | undefined) => (args ?? []).filter((arg) => arg.startsWith("--action="));
    expect(actions(first?.args)).toEqual(["--action=once=Allow once", "--action=session=Allow this tool for this session", "--action=deny=Deny"]);
    expect(actions(second?.args)).toEqual(["--action=once=Allow once", "--action=session=Allow this tool for this session", "--action=always_project=Always allow this tool in this project", "--action=deny=Deny"]);
    // An action the notification did not offer decides nothing.
    await fake.click(first?.pid ?? 0, "always_project");
    await waitFor(() => fake.ended(first?.pid ?? 0) !== null, "the first notification to end");
    await fake.click(second?.pid ?? 0, "always_project");
    await waitFor(() => decided.length === 1, "the click on always");
    expect(decided).toEqual([{ id: writable.id, decision: "approve", scope: "always", alwaysScope: "project" }]);
  });
});

describe("what it says", () => {
  test("names are redacted and escaped, markup stays text, and the page is named without a key", () => {
    const { task } = setup({ kind: "notify-send", path: "/bin/false" });
    const hostile = task("delete\u202e<a href='https://evil'>x</a> Bearer sk-live-123456");
    const { title, body } = notificationText(hostile, "http://127.0.0.1:4321/approvals");
    expect(title).toBe("ThoughtGate: allow fs.delete\\u202e<a href='https://evil'>x</a> Bearer [REDACTED:bearer_token]?");
    expect(body).toBe(
      `Task ${hostile.id}, rule deletes.\nDecide with the approvals page http://127.0.0.1:4321/approvals (open the link thoughtgate printed: it carries the key), or thoughtgate approve ${hostile.id} [--session | --always].`,
    );
  });

  test("a workflow for the page only names the page and offers no actions; one for the agent only is not announced", async () => {
    using fake = fakeNotifySend();
    const { notifier, task } = setup(notifySend(fake.env));
    notifier.pending(task("agent_only", { ...ANY, destination: { type: "elicitation" } }), false);
    notifier.pending(task("page_only", { ...ANY, destination: { type: "web" } }), false);
    const [shown] = await waitFor(() => (fake.notifications().length > 0 ? fake.notifications() : null), "a notification");
    expect(fake.notifications()).toHaveLength(1);
    expect(shown?.waiting).toBe(false);
    expect(shown?.body).toContain("approvals page");
    expect(shown?.body).not.toContain("thoughtgate approve");
  });

  test("osascript gets its script on stdin, never on its command line", async () => {
    using dir = tempDir();
    const script = join(dir.path, "osascript");
    writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir.path}/argv"\ncat > "${dir.path}/stdin"\n`);
    chmodSync(script, 0o755);
    const { notifier, task } = setup({ kind: "osascript", path: script });
    const t = task('delete "quoted" \\ name');
    notifier.pending(t, false);
    await waitFor(() => {
      try {
        return readFileSync(join(dir.path, "stdin"), "utf8").endsWith("\n");
      } catch {
        return false;
      }
    }, "the script on stdin");
    expect(readFileSync(join(dir.path, "argv"), "utf8")).toBe("-\n");
    expect(readFileSync(join(dir.path, "stdin"), "utf8")).toBe(
      `display notification "Task ${t.id}, rule deletes. Decide with the approvals page http://127.0.0.1:4321/approvals (open the link thoughtgate printed: it carries the key), or thoughtgate approve ${t.id} [--session | --always]." with title "ThoughtGate" subtitle "ThoughtGate: allow fs.delete \\"quoted\\" \\\\ name?"\n`,
    );
  });
});
