/**
 * The approvals page's answers in a real browser (Debian's Chromium, playwright-core), against
 * `thoughtgate serve` running on the user's policy file: "Allow once", "Allow this tool for this
 * session" (listed on the page with a Revoke button), "Always allow this tool in this project" and
 * "… everywhere" (a rule in the user's policy file, which the running service picks up) and "Deny",
 * with the person's reason; and what the page says when "always" cannot be done.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { waitFor } from "../support/harness.ts";
import { policyHome, type PolicyHome } from "../support/policy-home.ts";
import { ServeProcess } from "../support/serve.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const USER_POLICY = `# My policy.
schema: 1
governance:
  rules:
    # Deleting asks me.
    - { id: deletes, match: "delete_*", action: approve }
`;

let browser: Browser;
let home: PolicyHome;
let serve: ServeProcess;

beforeAll(async () => {
  home = policyHome();
  home.writeUser(USER_POLICY);
  home.writeProject(`schema: 1\ngovernance:\n  rules:\n    - { id: project-drops, match: "drop_*", action: approve }\n`);
  // USER: who decides on the page where the passwd database has no name for the uid (a container).
  serve = await ServeProcess.start([], { env: { ...home.env, THOUGHTGATE_DESKTOP_NOTIFY: "off", USER: process.env.USER || "ada" }, cwd: home.project });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  home?.[Symbol.dispose]();
});

async function pending(name: string, args: unknown = {}): Promise<string> {
  const answer = await serve.evaluate({ server_id: "fs", name, arguments: args });
  expect(answer.decision).toBe("pending_approval");
  return answer.task_id as string;
}

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(serve.approvalsUrl);
  return { page, errors };
}

test("every pending call offers the agent form's answers, in its words", async () => {
  const id = await pending("delete_one");
  const { page } = await openPage();
  const card = page.locator(`[data-task-id="${id}"]`);
  await card.waitFor();
  expect(await card.locator("button").allTextContents()).toEqual(["Allow once", "Allow this tool for this session", "Always allow this tool in this project", "Always allow this tool everywhere", "Deny"]);
  expect(await card.getByRole("button", { name: "Always allow this tool everywhere" }).getAttribute("title")).toBe(
    "Adds a rule to your policy file (~/.config/thoughtgate/thoughtgate.yaml): fs.delete_one runs without asking from now on, in every project",
  );
  await card.getByRole("button", { name: "Allow once" }).click();
  await waitFor(async () => (await serve.task(id)).status === "approved", "the approval");
  expect(await serve.task(id)).toMatchObject({ decided_by: "web", scope: "once" });
  // Once is once: the same call asks again.
  expect((await serve.task(await pending("delete_one"))).status).toBe("pending");
  await page.close();
});

test("Allow for this session: later calls of the tool pass unasked; the grant is listed, and Revoke makes the next call ask again", async () => {
  const id = await pending("delete_file", { path: "/tmp/a" });
  const { page, errors } = await openPage();
  await page.locator(`[data-task-id="${id}"]`).getByRole("button", { name: "Allow this tool for this session" }).click();
  await waitFor(async () => (await serve.task(id)).status === "approved", "the approval");
  const later = await serve.evaluate({ server_id: "fs", name: "delete_file", arguments: { path: "/tmp/b" } });
  expect(await serve.task(later.task_id)).toMatchObject({ status: "approved", decided_by: `session_grant:${id}` });

  const grant = page.locator(`[data-grant-id="grant-${id}"]`);
  await grant.waitFor();
  expect(await grant.locator(".call").textContent()).toBe("fs · delete_file");
  await waitFor(async () => (await grant.locator(".meta").textContent()) === `task ${id} · by web · 1 call since`, "the grant's use to show");
  await grant.getByRole("button", { name: "Revoke" }).click();
  await grant.waitFor({ state: "detached" });
  expect((await serve.task(await pending("delete_file", { path: "/tmp/c" }))).status).toBe("pending");
  expect(errors).toEqual([]);
  await page.close();
});

test("Always allow: a rule above the one that asked, in the user's policy file with its comments kept; the running service forwards the tool from then on", async () => {
  const id = await pending("delete_dir", { path: "/tmp/d" });
  const { page } = await openPage();
  await page.locator(`[data-task-id="${id}"]`).getByRole("button", { name: "Always allow this tool everywhere" }).click();
  await waitFor(async () => (await serve.task(id)).status === "approved", "the approval");
  expect(await serve.task(id)).toMatchObject({ decided_by: "web", scope: "always", always_scope: "everywhere", reason: `always allowed: rule always-allow-fs-delete_dir added to ${home.userFile}` });
  const text = readFileSync(home.userFile, "utf8");
  expect(text).toMatch(
    new RegExp(
      `^# My policy\\.\\nschema: 1\\ngovernance:\\n  rules:\\n    # Added \\S+ by "always allow" on the approvals page \\(thoughtgate serve, pid \\d+, task ${id}\\): fs\\.delete_dir runs without asking when the program under "server" serves it\\.\\n    - \\{ id: "always-allow-fs-delete_dir", match: "delete_dir", method: "tools/call", source: "fs", server: \\{ command: \\["node", "fs-server\\.js"\\] \\}, action: "forward" \\}\\n    # Deleting asks me\\.\\n    - \\{ id: deletes, match: "delete_\\*", action: approve \\}\\n$`,
    ),
  );
  const next = await serve.evaluate({ server_id: "fs", name: "delete_dir", arguments: { path: "/home" } });
  expect([next.decision, next.rule_id]).toEqual(["forward", "always-allow-fs-delete_dir"]);
  expect((await serve.evaluate({ server_id: "fs", name: "delete_tree" })).decision).toBe("pending_approval");
  await page.close();
});

test("where the project's policy asks, always is not offered and the card says why; asked for anyway, it is refused, the task waits and no file changes", async () => {
  const before = readFileSync(home.userFile, "utf8");
  const projectBefore = readFileSync(home.projectFile, "utf8");
  const id = await pending("drop_table");
  const { page } = await openPage();
  const card = page.locator(`[data-task-id="${id}"]`);
  await card.waitFor();
  expect(await card.locator("button").allTextContents()).toEqual(["Allow once", "Allow this tool for this session", "Deny"]);
  const why = `cannot always allow fs.drop_table: the approval is asked by the project's policy ${home.projectFile}, which ThoughtGate never edits`;
  expect(await card.locator(".meta", { hasText: "Always allow is not offered" }).textContent()).toBe(`Always allow is not offered: ${why}`);
  const asked = await serve.decideWithKey(id, "page", { decision: "approve", scope: "always" });
  expect(asked).toEqual({ status: 409, body: { code: "not_possible", error: why } });
  expect((await serve.task(id)).status).toBe("pending");
  expect([readFileSync(home.userFile, "utf8"), readFileSync(home.projectFile, "utf8")]).toEqual([before, projectBefore]);
  await card.getByRole("button", { name: "Deny" }).click();
  await waitFor(async () => (await serve.task(id)).status === "denied", "the deny");
  await page.close();
});

test("a reason typed on the page goes with the decision: kept with the task in the person's words, with who decided", async () => {
  const id = await pending("delete_branch", { branch: "main" });
  const { page } = await openPage();
  const card = page.locator(`[data-task-id="${id}"]`);
  await card.locator("input.reason").fill("never main; use a release branch");
  await card.getByRole("button", { name: "Deny" }).click();
  await waitFor(async () => (await serve.task(id)).status === "denied", "the deny");
  expect(await serve.task(id)).toMatchObject({ decided_by: "web", decided_by_who: expect.any(String), person_reason: "never main; use a release branch" });
  await page.close();
});

test("an edit's change shows as a unified diff, + and - lines marked", async () => {
  const id = await pending("delete_lines", { path: "/tmp/notes.md", edits: [{ oldText: "keep\nold line", newText: "keep\nnew line" }] });
  const { page } = await openPage();
  const change = page.locator(`[data-task-id="${id}"] pre.change`);
  await change.waitFor();
  expect(await change.textContent()).toBe("--- /tmp/notes.md\n+++ /tmp/notes.md\n@@ edit 1 of 1 @@\n keep\n-old line\n+new line\n");
  expect(await change.locator(".del").allTextContents()).toEqual(["-old line\n"]);
  expect(await change.locator(".add").allTextContents()).toEqual(["+new line\n"]);
  // The page shows the whole call besides: the arguments as they are.
  expect(await page.locator(`[data-task-id="${id}"] pre.arguments`).textContent()).toContain('"oldText": "keep\\nold line"');
  await page.close();
});
