/**
 * The approvals page in a real browser (Debian's Chromium driven by playwright-core; no browser
 * download): it shows pending calls with their arguments as text, approves and denies, refreshes
 * on its own, and shows nothing but an error for a wrong key. The key is in the URL's fragment:
 * the browser sends it only as the API calls' bearer token.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";
import { runInTerminal } from "../support/terminal.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const XSS = "<img src=x onerror=alert(1)>";
const SCREENSHOT = "/tmp/thoughtgate-approvals.png";

const dir = tempDir();
let browser: Browser;
let serve: ServeProcess;

beforeAll(async () => {
  writeFileSync(
    join(dir.path, "thoughtgate.yaml"),
    `schema: 1
governance:
  rules:
    - { id: deletes, match: "delete_*", action: approve }
    - { id: pushes, match: "push_*", action: approve, approval: careful }
approval:
  careful: { timeout: 10m, on_timeout: deny }
`,
  );
  serve = await ServeProcess.start(["--thoughtgate-config", join(dir.path, "thoughtgate.yaml")]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  dir[Symbol.dispose]();
});

/** A page that records every dialog (alert) and script error, so a test can prove none happened. */
async function openPage(url: string): Promise<{ page: Page; dialogs: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(url);
  return { page, dialogs, errors };
}

async function pending(name: string, args: unknown): Promise<string> {
  const answer = await serve.evaluate({ server_id: "github", name, arguments: args });
  expect(answer.decision).toBe("pending_approval");
  return answer.task_id as string;
}

test("pending calls show with their arguments as text; Allow once and Deny decide them; new tasks appear live", async () => {
  const first = await pending("delete_repo", { repo: "acme/site", note: XSS });
  const second = await pending("push_force", { branch: "main", commits: 3 });
  const { page, dialogs, errors } = await openPage(serve.approvalsUrl);

  const firstCard = page.locator(`[data-task-id="${first}"]`);
  await firstCard.waitFor();
  expect(await firstCard.locator(".call").textContent()).toBe("github · delete_repo");
  // Which session this is, and where each call comes from: with several sessions side by side, a person tells them apart.
  await waitFor(async () => ((await page.locator("#session").textContent()) ?? "") !== "", "the page's session line");
  expect(await page.locator("#session").textContent()).toMatch(/^thoughtgate serve, started \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  expect(await firstCard.locator(".where").textContent()).toMatch(/^thoughtgate serve in \/\S+$/);
  const shownArgs = (await firstCard.locator("pre").textContent()) ?? "";
  expect(JSON.parse(shownArgs)).toEqual({ repo: "acme/site", note: XSS });
  expect(shownArgs).toContain(XSS);
  expect(await firstCard.locator(".meta").first().textContent()).toContain("rule deletes");
  expect(await firstCard.locator(".left").textContent()).toMatch(/^1[45]m \d\ds left$/);
  // The argument stayed text: no element was made from it and nothing ran.
  expect(await page.locator("img").count()).toBe(0);

  await firstCard.getByRole("button", { name: "Allow once" }).click();
  await waitFor(async () => (await serve.task(first)).status === "approved", "the task to be approved");
  expect(await serve.task(first)).toMatchObject({ decided_by: "web" });
  await page.locator(`#recent [data-task-id="${first}"].done`).waitFor();
  expect(await page.locator(`#recent [data-task-id="${first}"] .badge`).textContent()).toBe("approved");

  await page.locator(`[data-task-id="${second}"]`).getByRole("button", { name: "Deny" }).click();
  await waitFor(async () => (await serve.task(second)).status === "denied", "the task to be denied");

  // No reload: the page polls and shows a task created after it opened.
  const third = await pending("delete_branch", { branch: "release/1.0" });
  await page.locator(`#pending [data-task-id="${third}"]`).waitFor();
  expect(await page.locator("#pending .task").count()).toBe(1);
  expect(await page.title()).toBe("(1) ThoughtGate approvals");

  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  expect(dialogs).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
});

test("the key travels only in the fragment and the bearer token; arguments are redacted, escaped and shown whole", async () => {
  const tail = "; rm -rf ~/important";
  const id = await pending("delete_files", { api_key: "sk-live-SECRET123", path: "/tmp/\u202Egpj.exe", command: `echo ${"x".repeat(20_000)}${tail}` });
  const requests: Array<{ url: string; referer: string | undefined; authorization: string | undefined }> = [];
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("request", (request) => {
    const headers = request.headers();
    requests.push({ url: request.url(), referer: headers.referer, authorization: headers.authorization });
  });
  await page.goto(serve.approvalsUrl);
  const card = page.locator(`[data-task-id="${id}"]`);
  await card.waitFor();

  expect(requests[0]?.url).toBe(`${serve.endpoint}/approvals`);
  for (const request of requests) {
    expect(request.url).not.toContain(serve.pageKey);
    expect(request.referer ?? "").not.toContain(serve.pageKey);
  }
  const api = requests.filter((r) => r.url.includes("/approvals/api/"));
  expect(api.length).toBeGreaterThan(0);
  expect(api.every((r) => r.authorization === `Bearer ${serve.pageKey}`)).toBe(true);

  const shown = (await card.locator("pre").textContent()) ?? "";
  expect(shown).toContain('"api_key": "[REDACTED:secret_field]"');
  expect(await page.content()).not.toContain("sk-live-SECRET123");
  // The right-to-left override is shown as an escape, not obeyed; the same value when parsed.
  expect(shown).toContain("/tmp/\\u202egpj.exe");
  expect(shown).not.toContain("\u202E");
  expect(JSON.parse(shown).path).toBe("/tmp/\u202Egpj.exe");
  // The whole call is there, its end included, in a box that scrolls.
  expect(shown).toContain(tail);
  // Runs in the page: the browser's getComputedStyle (this project's TypeScript has no DOM library).
  const box = await card.locator("pre").evaluate((pre) => ({
    scroll: pre.scrollHeight,
    client: pre.clientHeight,
    overflow: (globalThis as unknown as { getComputedStyle(node: unknown): { overflowY: string } }).getComputedStyle(pre).overflowY,
  }));
  expect(box.scroll).toBeGreaterThan(box.client);
  expect(box.overflow).toBe("auto");
  await card.getByRole("button", { name: "Deny" }).click();
  await waitFor(async () => (await serve.task(id)).status === "denied", "the task to be denied");
  await page.close();
});

test("the page without its key shows how to open it, and no tasks", async () => {
  // A task is pending whatever ran before, so "no tasks" means the page showed none, not that there were none.
  const id = await pending("delete_branch", { branch: "main" });
  const { page } = await openPage(`${serve.endpoint}/approvals?key=${serve.pageKey}`);
  await page.locator("#error:not([hidden])").waitFor();
  expect(await page.locator("#error").textContent()).toContain("it ends in #key=");
  expect(await page.locator(".task").count()).toBe(0);
  expect(await page.content()).not.toContain("delete_branch");
  // The same page with its key in the fragment shows that very task.
  const { page: keyed } = await openPage(serve.approvalsUrl);
  await keyed.locator(`.task[data-task-id="${id}"]`).waitFor();
  await keyed.close();
  await page.close();
});

test("a wrong key shows an error, not tasks", async () => {
  await pending("delete_everything", { really: true });
  const { page } = await openPage(`${serve.endpoint}/approvals#key=${"0".repeat(64)}`);
  expect(await page.locator("body").textContent()).toContain("wrong or old key");
  expect(await page.locator(".task").count()).toBe(0);
  expect(await page.content()).not.toContain("delete_everything");
  await page.close();
});

test("an open page whose key stops working (the service restarted) clears its tasks and says so", async () => {
  const { page } = await openPage(serve.approvalsUrl);
  await page.locator("#pending .task").first().waitFor();
  // What an open tab meets after `serve` restarted with a new key: the service refuses the old one.
  await page.route("**/approvals/api/tasks", (route) => route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${"1".repeat(64)}` } }));
  await page.locator("#error:not([hidden])").waitFor();
  expect(await page.locator("#error").textContent()).toContain("wrong or old key");
  expect(await page.locator(".task").count()).toBe(0);
  await page.close();
});

test("the one-time link `thoughtgate approvals --open` hands the browser opens the page with its key; used once, it is spent", async () => {
  const task = await pending("delete_tag", { tag: "v1" });
  // The opener records the link it was given (its command line, which every local user can read).
  const opener = join(dir.path, "record-link");
  const link = join(dir.path, "link");
  writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${link}'\n`, { mode: 0o755 });
  const cli = runInTerminal([requireBinary(), "approvals", "--open"], { cwd: dir.path, outDir: dir.path, env: { ...serve.cliEnv, BROWSER: opener } });
  expect(await cli.exited).toBe(0);
  const url = await waitFor(() => (existsSync(link) ? readFileSync(link, "utf8") : null), "the opener to be given the link");
  expect(url).toMatch(/\/approvals#open=[0-9a-f]{64}$/);
  expect(url).not.toContain(serve.pageKey);

  const { page, errors } = await openPage(url);
  await page.locator(`[data-task-id="${task}"]`).waitFor();
  // The code became the key in the address: a reload keeps working.
  expect(new URL(page.url()).hash).toBe(`#key=${serve.pageKey}`);
  const again = await openPage(url);
  await again.page.locator("#error:not([hidden])").waitFor();
  expect(await again.page.locator("#error").textContent()).toContain("this approvals link was used already or is too old");
  expect(await again.page.locator(".task").count()).toBe(0);
  expect(errors).toEqual([]);
  await page.close();
  await again.page.close();
});
