/**
 * Attack: another local user reads the command line of the browser `thoughtgate auth login` opens
 * (`ps`, `/proc/PID/cmdline` are readable by everyone). It held the whole authorization URL: the
 * login's `state`, its PKCE challenge and the loopback callback's port, enough to race the callback
 * or finish the login with another account. Now the opener is given a page in the user's own state
 * directory (0600) that sends the browser on; the page is gone once the login ends. Through the
 * compiled binary, against the loopback authorization server, with `$BROWSER` a recorder that keeps
 * its arguments and the page it was given (as the user's browser, it may read it) and then browses
 * it the way a browser follows a refresh.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, fixture, requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../../support/http-fixture.ts";

setDefaultTimeout(30_000);
requireBinary();

const fixtures: HttpFixture[] = [];
const dirs: Array<{ [Symbol.dispose](): void }> = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((server) => server.stop()));
  for (const dir of dirs.splice(0)) dir[Symbol.dispose]();
});

test("the browser's command line holds no part of the authorization URL; the page it opens is the user's alone and removed after", async () => {
  const server = await startHttpFixture(fixture("oauth-server-fixture.ts"));
  fixtures.push(server);
  const dir = tempDir("thoughtgate-oauth-browser-");
  dirs.push(dir);
  const argvFile = join(dir.path, "browser-argv");
  const pageCopy = join(dir.path, "browser-page.html");
  const browser = join(dir.path, "browser.sh");
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" > "${argvFile}.tmp"\npath="\${1#file://}"\nstat -c '%a' "$path" > "${pageCopy}.mode"\ncat "$path" > "${pageCopy}"\nmv "${argvFile}.tmp" "${argvFile}"\n`);
  chmodSync(browser, 0o700);
  const state = join(dir.path, "state");
  const proc = Bun.spawn([BINARY, "auth", "login", server.url], { env: { ...process.env, XDG_STATE_HOME: state, BROWSER: browser }, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const argv = await waitFor(() => (existsSync(argvFile) ? readFileSync(argvFile, "utf8") : null), "the browser to be started");
  const printed = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stderr)?.[1] ?? "";
  const authorize = new URL(printed);
  const callbackPort = new URL(authorize.searchParams.get("redirect_uri") ?? "").port;
  for (const secret of [authorize.searchParams.get("state"), authorize.searchParams.get("code_challenge"), callbackPort, "authorize?"]) {
    expect(secret).toBeTruthy();
    expect(argv).not.toContain(secret as string);
  }
  // The page: the user's alone, and it sends the browser to the authorization URL.
  expect(readFileSync(`${pageCopy}.mode`, "utf8").trim()).toBe("600");
  const page = readFileSync(pageCopy, "utf8");
  const target = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(page)?.[1]?.replaceAll("&amp;", "&");
  expect(target).toBe(printed);
  expect(statSync(join(state, "thoughtgate", "login")).mode & 0o777).toBe(0o700);
  // The browser follows it: consent, the redirect to the loopback callback, and the login ends.
  const consent = await fetch(target as string, { redirect: "manual" });
  await (await fetch(consent.headers.get("location") ?? "")).text();
  expect(await proc.exited).toBe(0);
  await reading;
  expect(readdirSync(join(state, "thoughtgate", "login"))).toEqual([]);
});
