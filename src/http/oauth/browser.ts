import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeAll } from "../../core/atomic-write.ts";
import { bestEffort } from "../../core/errors.ts";
import { stateDir } from "../../core/paths.ts";
import { createExclusive } from "../../core/safe-open.ts";

/**
 * Open the authorization URL in the user's browser without putting it on a command line. A
 * process's arguments are readable by every local user (`/proc/PID/cmdline`, `ps`), and this URL
 * carries the login's `state`, its PKCE challenge and the loopback callback's port: enough for
 * another user to race the callback or complete the login with their own account. So the opener
 * ($BROWSER, `xdg-open`, `open`) is given a page in the user's state directory (0600, in a 0700
 * directory) that sends the browser on to the URL; the page's name says nothing, and it is removed
 * when the login ends (`close`). With no opener (or `BROWSER=none`) nothing is written: the caller
 * prints the URL for the user to open.
 */
export type BrowserLaunch = { opened: boolean; close(): void };

export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): BrowserLaunch {
  const configured = env.BROWSER;
  const opener = configured === "none" ? null : configured || (process.platform === "darwin" ? Bun.which("open") : Bun.which("xdg-open"));
  if (!opener) return { opened: false, close: () => {} };
  let page: string | null = null;
  try {
    page = writePage(url, env);
    const child = Bun.spawn([opener, `file://${page}`], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    child.unref();
    const written = page;
    return { opened: true, close: () => bestEffort(() => unlinkSync(written)) };
  } catch {
    // The URL is printed for the user: they open it by hand.
    if (page !== null) bestEffort(() => unlinkSync(page as string));
    return { opened: false, close: () => {} };
  }
}

function writePage(url: string, env: NodeJS.ProcessEnv): string {
  const dir = join(stateDir(env), "login");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = join(dir, `${randomBytes(12).toString("hex")}.html`);
  const fd = createExclusive(path, "the login page");
  if (fd === null) throw new Error(`${path} already exists`);
  try {
    const href = escapeAttribute(url);
    const html = `<!doctype html>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}">
<title>ThoughtGate: authorize</title>
<p><a href="${href}">Continue to authorize ThoughtGate</a></p>
`;
    writeAll(fd, Buffer.from(html, "utf8"));
  } finally {
    closeSync(fd);
  }
  return path;
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
