/**
 * Attack family: what a desktop notification could leak or be made to say. A notifier's command
 * line is readable by every local user (/proc/<pid>/cmdline) and notification daemons keep what
 * they showed, so no credential and no call arguments may be in it; the names in it come from the
 * agent and the server, so markup, bidi and control characters must stay text; and a flood of
 * approvals must not become a flood of notifications. Through the compiled binary: `thoughtgate
 * serve` with a fake notify-send (test/support/fake-notify.ts) first on its PATH.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeNotifySend, type FakeNotifySend } from "../../support/fake-notify.ts";
import { tempDir, waitFor } from "../../support/harness.ts";
import { ServeProcess } from "../../support/serve.ts";

setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serveWithNotifications(): Promise<{ serve: ServeProcess; notify: FakeNotifySend }> {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  writeFileSync(join(dir.path, "thoughtgate.yaml"), `schema: 1\ngovernance:\n  rules:\n    - { id: ask, match: "*", action: approve }\n`);
  const notify = fakeNotifySend();
  cleanup.push(() => notify[Symbol.dispose]());
  const serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")], { env: { ...notify.env, THOUGHTGATE_DESKTOP_NOTIFY: "" } });
  cleanup.push(() => serve.stop());
  return { serve, notify };
}

test("the notification's command line holds no page key, CLI key, session secret or argument", async () => {
  const { serve, notify } = await serveWithNotifications();
  const pending = await serve.evaluate({ server_id: "db", name: "export", arguments: { password: "hunter2-in-args", table: "customers-secret-table" } });
  const [shown] = await waitFor(() => (notify.notifications().length > 0 ? notify.notifications() : null), "the notification");
  const argv = shown?.args.join("\n") ?? "";
  expect(argv).toContain(`Task ${pending.task_id}`);
  for (const secret of [serve.pageKey, serve.key, serve.secret, "hunter2-in-args", "customers-secret-table"]) expect(argv).not.toContain(secret);
  expect(argv).toContain(`${serve.endpoint}/approvals (open the link thoughtgate printed`);
});

test("names with markup, bidi or control characters are shown as text and escapes", async () => {
  const { serve, notify } = await serveWithNotifications();
  await serve.evaluate({ server_id: "db", name: "run\u202e<a href='https://evil.example'>click</a>\u001b[2J", arguments: {} });
  const [shown] = await waitFor(() => (notify.notifications().length > 0 ? notify.notifications() : null), "the notification");
  expect(shown?.title).toBe("ThoughtGate: allow db.run\\u202e<a href='https://evil.example'>click</a>\\u001b[2J?");
  // The title is plain text to notification servers; the body, which they render as markup, names no tool.
  expect(shown?.body).not.toContain("<a");
});

test("a flood of approvals shows three notifications at a time, not one per call", async () => {
  const { serve, notify } = await serveWithNotifications();
  const tasks = [];
  for (let i = 0; i < 20; i++) tasks.push((await serve.evaluate({ server_id: "db", name: `drop_${i}`, arguments: {} })).task_id);
  await waitFor(() => notify.notifications().length === 3, "three notifications");
  // The page and the CLI list all twenty; deciding one shows the next.
  const [first] = notify.notifications();
  await notify.click(first?.pid ?? 0, "deny");
  await waitFor(() => notify.notifications().length === 4, "the next notification");
  expect((await serve.task(tasks[0] ?? "")).status).toBe("denied");
  expect(notify.notifications()).toHaveLength(4);
});
