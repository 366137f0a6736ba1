/**
 * The organisation's policy through the compiled binary: signed with `policy keygen` / `policy
 * sign`, fetched from a loopback HTTPS host whose self-signed certificate this test makes and the
 * binary trusts through NODE_EXTRA_CA_CERTS (the usual CA setting, which Bun's fetch honours).
 * Applied as the floor, a user rule that would loosen it reported and without effect, each refusal
 * case refused in one line with every call failing closed, the cache used offline within
 * max_stale, and a new version reaching a running shim within its refresh interval.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, requireBinary, tempDir, waitFor } from "../support/harness.ts";

const TIMEOUT_MS = 60_000;
const shared = tempDir("thoughtgate-org-");
const CERT = join(shared.path, "cert.pem");
const KEY = join(shared.path, "key.pem");

/** What the host answers next; tests swap it. */
let answer: (request: Request) => Response = () => new Response(null, { status: 503 });
let host: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  const made = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", KEY, "-out", CERT, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    { stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`);
  host = Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { cert: readFileSync(CERT, "utf8"), key: readFileSync(KEY, "utf8") }, fetch: (request) => answer(request) });
});
afterAll(() => {
  host.stop(true);
  shared[Symbol.dispose]();
});

type Run = { exitCode: number; stdout: string; stderr: string };

async function thoughtgate(args: string[], env: Record<string, string>, cwd?: string): Promise<Run> {
  await using proc = Bun.spawn([requireBinary(), ...args], { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

/** An administrator with a key and a policy directory, and a machine pointed at the host. */
async function setUp(userPolicy = "", organisation: Record<string, string> = {}) {
  const dir = tempDir("thoughtgate-org-");
  const admin = join(dir.path, "admin");
  const home = join(dir.path, "home");
  mkdirSync(join(admin, "policy"), { recursive: true });
  mkdirSync(join(home, ".config", "thoughtgate"), { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    NODE_EXTRA_CA_CERTS: CERT,
  };
  const keygen = await thoughtgate(["policy", "keygen", "--out", join(admin, "key.pem")], env);
  const publicKey = keygen.stdout.trim().split("\n").at(-1) as string;
  const path = `/org/${Bun.randomUUIDv7()}/bundle.json`;
  const url = `https://127.0.0.1:${host.port}${path}`;
  const settings = { url, public_key: publicKey, refresh: "1s", ...organisation };
  writeFileSync(join(home, ".config", "thoughtgate", "thoughtgate.yaml"), `schema: 1\npolicy:\n  organisation: ${JSON.stringify(settings)}\n${userPolicy}`);
  /** Sign `yaml` as `version` with the administrator's key (or another one) and serve it. */
  const publish = async (yaml: string, version: number, key = join(admin, "key.pem")) => {
    writeFileSync(join(admin, "policy", "thoughtgate.yaml"), yaml);
    const signed = await thoughtgate(["policy", "sign", join(admin, "policy"), "--key", key, "--version", String(version), "--out", join(admin, `v${version}.json`)], env);
    if (signed.exitCode !== 0) throw new Error(signed.stderr);
    return readFileSync(join(admin, `v${version}.json`), "utf8");
  };
  const serve = (bundle: string) => {
    answer = (request) => (new URL(request.url).pathname === path ? new Response(bundle, { headers: { etag: `"${Bun.hash(bundle)}"` } }) : new Response(null, { status: 404 }));
  };
  return { dir, admin, env, url, path, publish, serve, [Symbol.dispose]: () => dir[Symbol.dispose]() };
}

const NO_DELETES = 'schema: 1\ngovernance:\n  rules:\n    - { id: no-deletes, match: "delete_*", action: deny }\n';

/** A standalone shim in front of the scripted server (tools echo and delete_everything), with the machine's environment. */
async function shimSession(env: Record<string, string>) {
  const [command, ...args] = [requireBinary(), "shim", "--server-id", "notes", "--events", "none", "--", ...fixture("scripted-server-fixture.ts", "--with-destructive")] as [string, ...string[]];
  const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
  const client = new Client({ name: "org-e2e", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  const call = async (name: string) => {
    try {
      await client.callTool({ name, arguments: {} });
      return { ok: true as const };
    } catch (error) {
      return error instanceof McpError ? { code: error.code, reason: String((error.data as { reason?: unknown })?.reason) } : { error: String(error) };
    }
  };
  return { call, [Symbol.asyncDispose]: () => client.close() };
}

describe("the organisation's policy", () => {
  test("applied as the floor: its deny holds, a user rule that would loosen it is reported and changes nothing", async () => {
    await using org = await setUp('governance:\n  rules:\n    - { id: mine, match: delete_everything, action: forward }\n');
    org.serve(await org.publish(NO_DELETES, 3));
    const checked = await thoughtgate(["validate-config"], org.env);
    expect(checked.exitCode).toBe(0);
    expect(checked.stdout).toContain(`ok: organisation policy ${org.url} version 3\n`);
    expect(checked.stdout).toContain(`rule mine (tool delete_everything → forward) can never take effect where the organisation policy ${org.url} denies (rule no-deletes: tool delete_* → deny)`);
    await using session = await shimSession(org.env);
    expect(await session.call("echo")).toEqual({ ok: true });
    expect(await session.call("delete_everything")).toEqual({ code: -32014, reason: "organisation policy: rule no-deletes: deny" });
    const status = await thoughtgate(["policy", "status"], org.env);
    expect(status).toMatchObject({ exitCode: 0 });
    expect(status.stdout).toContain(`organisation policy: ${org.url}`);
    expect(status.stdout).toContain("  in force: version 3, signed ");
  }, TIMEOUT_MS);

  test("a new version on the host reaches a running session within its refresh interval, without a restart", async () => {
    await using org = await setUp();
    org.serve(await org.publish(NO_DELETES, 1));
    await using session = await shimSession(org.env);
    expect(await session.call("echo")).toEqual({ ok: true });
    org.serve(await org.publish('schema: 1\ngovernance:\n  rules:\n    - { id: frozen, match: "*", action: deny }\n', 2));
    // refresh: 1s in the machine's policy.organisation.
    await waitFor(async () => (await session.call("echo")).code === -32014, "version 2 to take effect in the running shim", 15_000);
    expect(await session.call("echo")).toEqual({ code: -32014, reason: "organisation policy: rule frozen: deny" });
  }, TIMEOUT_MS);

  describe("refused in one line, and every call fails closed", () => {
    async function refused(org: Awaited<ReturnType<typeof setUp>>, why: RegExp) {
      const status = await thoughtgate(["policy", "status"], org.env);
      expect(status.exitCode).toBe(1);
      const line = status.stdout.split("\n").find((l) => l.startsWith("  REFUSED: ")) ?? "";
      expect(line).toMatch(why);
      const checked = await thoughtgate(["validate-config"], org.env);
      expect(checked.exitCode).toBe(1);
      expect(checked.stdout).toMatch(why);
      await using session = await shimSession(org.env);
      const call = await session.call("echo");
      expect(call).toMatchObject({ code: -32013 });
      expect((call as { reason: string }).reason).toMatch(why);
    }

    test("a tampered bundle", async () => {
      await using org = await setUp();
      const bundle = JSON.parse(await org.publish(NO_DELETES, 1)) as { files: Record<string, string> };
      bundle.files["thoughtgate.yaml"] = "schema: 1\n";
      org.serve(JSON.stringify(bundle));
      await refused(org, /signature does not verify with the organisation's public key \(tampered, or signed with another key\)/);
    }, TIMEOUT_MS);

    test("a bundle signed with another key", async () => {
      await using org = await setUp();
      await thoughtgate(["policy", "keygen", "--out", join(org.admin, "other.pem")], org.env);
      org.serve(await org.publish(NO_DELETES, 1, join(org.admin, "other.pem")));
      await refused(org, /signature does not verify/);
    }, TIMEOUT_MS);

    test("a version older than the cached one (a rollback)", async () => {
      await using org = await setUp();
      const older = await org.publish(NO_DELETES, 4);
      org.serve(await org.publish(NO_DELETES, 5));
      expect((await thoughtgate(["policy", "pull"], org.env)).exitCode).toBe(0);
      org.serve(older);
      await refused(org, /the URL serves version 4, older than version 5 already seen \(a rollback\)/);
    }, TIMEOUT_MS);

    test("the same version again with other contents (the identical bundle again is accepted)", async () => {
      await using org = await setUp();
      const first = await org.publish(NO_DELETES, 5);
      org.serve(first);
      expect((await thoughtgate(["policy", "pull"], org.env)).exitCode).toBe(0);
      org.serve(first);
      expect((await thoughtgate(["policy", "status"], org.env)).stdout).toContain("  in force: version 5, signed ");
      // Properly signed, the same version number, a policy that lets the deletes through.
      org.serve(await org.publish("schema: 1\n", 5));
      await refused(org, /the URL serves version 5 again with other contents/);
    }, TIMEOUT_MS);

    test("a redirect to another origin", async () => {
      await using org = await setUp();
      const bundle = await org.publish(NO_DELETES, 1);
      answer = (request) => {
        const url = new URL(request.url);
        if (url.pathname === org.path) return new Response(null, { status: 302, headers: { location: `https://localhost:${host.port}/elsewhere.json` } });
        return new Response(bundle);
      };
      await refused(org, /redirects to another origin \(https:\/\/localhost:\d+\)/);
    }, TIMEOUT_MS);

    test("the URL unreachable and the cache older than max_stale", async () => {
      await using org = await setUp("", { max_stale: "1s" });
      org.serve(await org.publish(NO_DELETES, 1));
      expect((await thoughtgate(["policy", "pull"], org.env)).exitCode).toBe(0);
      answer = () => new Response(null, { status: 503 });
      // The cached copy serves until it is older than max_stale: wait for that, then it is refused.
      await waitFor(async () => (await thoughtgate(["policy", "status"], org.env)).exitCode === 1, "the cache to pass max_stale");
      await refused(org, /cannot reach .* \(HTTP 503\) and the cached copy was last confirmed .* ago, more than max_stale 1s/);
    }, TIMEOUT_MS);
  });

  test("max_stale and refresh in days and weeks, as docs/team.md writes them, from the file and from the environment", async () => {
    await using org = await setUp("", { max_stale: "7d", refresh: "5m" });
    org.serve(await org.publish(NO_DELETES, 1));
    const status = await thoughtgate(["policy", "status"], org.env);
    expect({ exitCode: status.exitCode, stderr: status.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(status.stdout).toContain("\n  fetched again every 5m; usable offline for 7d\n");
    const keyFile = join(org.dir.path, "org.pub");
    writeFileSync(keyFile, readFileSync(join(org.env.XDG_CONFIG_HOME as string, "thoughtgate", "thoughtgate.yaml"), "utf8").match(/ed25519:[A-Za-z0-9+/=]+/)?.[0] ?? "");
    const managed = { ...org.env, THOUGHTGATE_ORG_POLICY_URL: org.url, THOUGHTGATE_ORG_POLICY_KEY_FILE: keyFile, THOUGHTGATE_ORG_POLICY_MAX_STALE: "2w", THOUGHTGATE_ORG_POLICY_REFRESH: "1d" };
    expect((await thoughtgate(["policy", "status"], managed)).stdout).toContain("\n  fetched again every 1d; usable offline for 14d\n");
    const wrong = await thoughtgate(["policy", "status"], { ...managed, THOUGHTGATE_ORG_POLICY_MAX_STALE: "1y" });
    expect(wrong.stderr).toContain('$THOUGHTGATE_ORG_POLICY_MAX_STALE: expected a duration like 500ms, 30s, 5m, 1h, 7d or 2w (units ms, s, m, h, d, w), got "1y"');
  }, TIMEOUT_MS);

  test("a bundle made and signed with openssl and jq, as docs/team.md shows, is accepted and applied; one byte of whitespace in what was signed is not", async () => {
    await using org = await setUp();
    const dir = join(org.dir.path, "own-tools");
    mkdirSync(dir);
    const sh = (script: string) => {
      const run = Bun.spawnSync(["sh", "-c", script], { cwd: dir, env: org.env, stdout: "pipe", stderr: "pipe" });
      if (run.exitCode !== 0) throw new Error(`${script}: ${run.stderr.toString()}`);
      return run.stdout.toString().trim();
    };
    sh("openssl genpkey -algorithm ed25519 -out org-policy.key");
    const publicKey = sh("echo \"ed25519:$(openssl pkey -in org-policy.key -pubout -outform DER | tail -c 32 | base64)\"");
    const config = join(org.env.XDG_CONFIG_HOME as string, "thoughtgate", "thoughtgate.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace(/ed25519:[A-Za-z0-9+/=]+/, publicKey));
    writeFileSync(join(dir, "unsigned.json"), JSON.stringify({ format: "thoughtgate-policy-bundle", version: 7, issued_at: new Date().toISOString(), files: { "thoughtgate.yaml": NO_DELETES } }, null, 2));
    const sign = (canonical: string) => {
      sh(`${canonical} > signed.bin && sig=$(openssl pkeyutl -sign -inkey org-policy.key -rawin -in signed.bin | base64 -w0) && jq --arg sig "$sig" '. + {signature: $sig}' unsigned.json > policy-bundle.json`);
      return readFileSync(join(dir, "policy-bundle.json"), "utf8");
    };
    org.serve(sign("jq -cSj . unsigned.json"));
    const status = await thoughtgate(["policy", "status"], org.env);
    expect({ exitCode: status.exitCode, stderr: status.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(status.stdout).toContain("  in force: version 7, signed ");
    await using session = await shimSession(org.env);
    expect(await session.call("delete_everything")).toEqual({ code: -32014, reason: "organisation policy: rule no-deletes: deny" });

    // The same bytes with a newline at the end are not what the machine checks the signature over.
    await using other = await setUp();
    const otherConfig = join(other.env.XDG_CONFIG_HOME as string, "thoughtgate", "thoughtgate.yaml");
    writeFileSync(otherConfig, readFileSync(otherConfig, "utf8").replace(/ed25519:[A-Za-z0-9+/=]+/, publicKey));
    other.serve(sign("jq -cS . unsigned.json"));
    expect((await thoughtgate(["policy", "status"], other.env)).stdout).toContain("REFUSED: ");
  }, TIMEOUT_MS);

  test("offline within max_stale: the cached copy decides, and says so", async () => {
    await using org = await setUp("", { max_stale: "1h" });
    org.serve(await org.publish(NO_DELETES, 1));
    expect((await thoughtgate(["policy", "pull"], org.env)).exitCode).toBe(0);
    answer = () => new Response(null, { status: 503 });
    const status = await thoughtgate(["policy", "status"], org.env);
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toMatch(/\n {2}offline: the cached copy, confirmed .* ago \(HTTP 503\)\n/);
    await using session = await shimSession(org.env);
    expect(await session.call("delete_everything")).toEqual({ code: -32014, reason: "organisation policy: rule no-deletes: deny" });
    expect(await session.call("echo")).toEqual({ ok: true });
  }, TIMEOUT_MS);
});
