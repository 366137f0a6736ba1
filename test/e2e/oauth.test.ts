/**
 * OAuth 2.1 for a remote MCP server through the compiled binary, against a loopback authorization
 * server speaking the real wire formats (test/fixtures/oauth-server-fixture.ts): the first login
 * with the browser step played by the test, the token file's mode, the shim using the token, a
 * refresh when the access token has expired, a revoked token, a server that refuses registration.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { BINARY, fixture, requireBinary, tempDir } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";
import { RawAgent } from "../support/raw-agent.ts";

setDefaultTimeout(30_000);
requireBinary();

const fixtures: HttpFixture[] = [];
const dirs: Array<{ [Symbol.dispose](): void }> = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((server) => server.stop()));
  for (const dir of dirs.splice(0)) dir[Symbol.dispose]();
});

async function setup(...flags: string[]) {
  const server = await startHttpFixture(fixture("oauth-server-fixture.ts", ...flags));
  fixtures.push(server);
  const dir = tempDir("thoughtgate-oauth-");
  dirs.push(dir);
  const env = { ...process.env, XDG_STATE_HOME: join(dir.path, "state"), BROWSER: "none" };
  const admin = (path: string, method = "GET") => fetch(new URL(path, server.url), { method });
  const log = async () => (await (await admin("/admin/log")).json()) as Array<Record<string, any>>;
  return { server, dir: dir.path, env, admin, log, oauthDir: join(dir.path, "state", "thoughtgate", "oauth") };
}

/** `auth login`, with the test as the user's browser: open the printed URL, follow the redirect to the loopback callback. */
async function login(url: string, env: Record<string, string | undefined>, ...extra: string[]): Promise<{ code: number; stderr: string }> {
  const proc = Bun.spawn([BINARY, "auth", "login", url, ...extra], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let stderr = "";
  const decoder = new TextDecoder();
  let browsed = false;
  for await (const chunk of proc.stderr) {
    stderr += decoder.decode(chunk, { stream: true });
    const authorizeUrl = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stderr)?.[1];
    if (authorizeUrl && !browsed) {
      browsed = true;
      const consent = await fetch(authorizeUrl, { redirect: "manual" });
      const callback = consent.headers.get("location");
      if (consent.status === 302 && callback) await (await fetch(callback)).text();
    }
  }
  return { code: await proc.exited, stderr };
}

function shim(url: string, env: Record<string, string | undefined>, dir: string): RawAgent {
  return new RawAgent(["--server-id", "notes", "--events", join(dir, "events.jsonl"), "--url", url], env);
}

async function whoami(agent: RawAgent, id: number) {
  return agent.request(id, "tools/call", { name: "whoami", arguments: {} });
}

async function initialize(agent: RawAgent) {
  return agent.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
}

describe("auth login, then shim --url with the stored token", () => {
  test("first login: discovery, dynamic registration, PKCE and the resource parameter; a 0600 token file the shim uses", async () => {
    const t = await setup();
    const { code, stderr } = await login(t.server.url, t.env);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(stderr).toContain(`thoughtgate: logged in to ${t.server.url} (issuer http://127.0.0.1:`);

    const log = await t.log();
    const authorize = log.find((entry) => entry.kind === "authorize")?.params as Record<string, string>;
    expect(authorize).toMatchObject({ response_type: "code", code_challenge_method: "S256", resource: t.server.url, scope: "notes:read offline_access" });
    expect(authorize.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(log.filter((entry) => entry.kind === "register").map((entry) => entry.body.token_endpoint_auth_method)).toEqual(["none"]);
    expect(log.filter((entry) => entry.kind === "token")).toEqual([{ kind: "token", grant_type: "authorization_code", resource: t.server.url }]);

    const [file] = readdirSync(t.oauthDir);
    expect(file).toBeDefined();
    expect({ dir: statSync(t.oauthDir).mode & 0o777, file: statSync(join(t.oauthDir, file as string)).mode & 0o777 }).toEqual({ dir: 0o700, file: 0o600 });
    const list = Bun.spawnSync([BINARY, "auth", "list"], { env: t.env });
    expect(list.stdout.toString()).toMatch(new RegExp(`^${t.server.url.replaceAll("/", "\\/")}  issuer http://127\\.0\\.0\\.1:\\d+  expires \\S+, refreshable  scope notes:read`, "m"));

    const agent = shim(t.server.url, t.env, t.dir);
    expect((await initialize(agent)).result?.serverInfo?.name).toBe("oauth-notes");
    expect((await whoami(agent, 1)).result?.content?.[0]?.text).toMatch(/^client client-/);
    expect(await agent.close()).toBe(0);
  });

  test("an expired access token is refreshed on the 401, the call retried, and the new tokens saved", async () => {
    const t = await setup();
    expect((await login(t.server.url, t.env)).code).toBe(0);
    const [file] = readdirSync(t.oauthDir);
    const before = await Bun.file(join(t.oauthDir, file as string)).json();
    await t.admin("/admin/expire", "POST");
    const agent = shim(t.server.url, t.env, t.dir);
    expect((await initialize(agent)).result?.serverInfo?.name).toBe("oauth-notes");
    expect((await whoami(agent, 1)).result?.content?.[0]?.text).toMatch(/^client client-/);
    expect(await agent.close()).toBe(0);
    expect((await t.log()).filter((entry) => entry.kind === "token").map((entry) => entry.grant_type)).toEqual(["authorization_code", "refresh_token"]);
    const after = await Bun.file(join(t.oauthDir, file as string)).json();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(statSync(join(t.oauthDir, file as string)).mode & 0o777).toBe(0o600);
  });

  test("a revoked token: the call fails with one line saying to log in again", async () => {
    const t = await setup();
    expect((await login(t.server.url, t.env)).code).toBe(0);
    await t.admin("/admin/revoke", "POST");
    const agent = shim(t.server.url, t.env, t.dir);
    const answer = await initialize(agent);
    expect(answer.error?.code).toBe(-31001);
    expect(answer.error?.message).toBe(
      `MCP server "notes" did not answer: HTTP 401: ${new URL(t.server.url).origin} requires authorization; the stored token was refused and could not be refreshed (invalid_grant: the refresh token is not valid): run \`thoughtgate auth login ${t.server.url}\``,
    );
    expect(await agent.close()).toBe(0);
  });

  test("no login stored: the agent is told to run auth login", async () => {
    const t = await setup();
    const agent = shim(t.server.url, t.env, t.dir);
    const answer = await initialize(agent);
    expect(answer.error?.message).toContain(`no login is stored for it: run \`thoughtgate auth login ${t.server.url}\``);
    expect(await agent.close()).toBe(0);
  });

  test("auth logout forgets the tokens", async () => {
    const t = await setup();
    expect((await login(t.server.url, t.env)).code).toBe(0);
    const out = Bun.spawnSync([BINARY, "auth", "logout", t.server.url], { env: t.env });
    expect(out.exitCode).toBe(0);
    expect(readdirSync(t.oauthDir)).toEqual([]);
  });
});

describe("an authorization server that refuses registration", () => {
  test("login fails with the server's reason and what to do; with a client id registered beforehand it works", async () => {
    const t = await setup("--refuse-registration");
    const refused = await login(t.server.url, t.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused to register ThoughtGate as a client \(invalid_client_metadata: registration is closed for this server\); register one with it and pass --client-id/);
    expect(existsSync(t.oauthDir)).toBe(false);

    const preregistered = await login(t.server.url, t.env, "--client-id", "preregistered-client");
    expect(preregistered.code).toBe(0);
    const agent = shim(t.server.url, t.env, t.dir);
    await initialize(agent);
    expect((await whoami(agent, 1)).result?.content?.[0]?.text).toBe("client preregistered-client");
    expect(await agent.close()).toBe(0);
  });
});
