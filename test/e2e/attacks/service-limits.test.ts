/**
 * Attack family: wearing down or leaking from the governance service. A shim (or whatever holds
 * its secret) reporting made-up method names must not grow /metrics without bound; a malformed
 * request must get a plain 400, not a crash page; and no key that approves calls ends up in a file
 * other than the CLI's own 0600 descriptor. Through the compiled binary.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import { ServeProcess } from "../../support/serve.ts";

setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serve(): Promise<ServeProcess> {
  const empty = tempDir();
  cleanup.push(() => empty[Symbol.dispose]());
  const s = await ServeProcess.start([], { cwd: empty.path });
  cleanup.push(() => s.stop());
  return s;
}

/** One raw HTTP exchange: fetch always sends a Host header. */
async function rawRequest(port: number, text: string): Promise<string> {
  let answer = "";
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_, chunk) => void (answer += chunk.toString()), close: () => resolve(), error: () => resolve() } });
  socket.write(text);
  await closed;
  return answer;
}

describe("the service's resources", () => {
  test("a flood of made-up method names does not grow /metrics: a few per server, the rest are `other`, every value cut to 128 characters", async () => {
    const s = await serve();
    const messages = Array.from({ length: 2_000 }, (_, i) => ({ direction: "agent_to_server", method: `junk/${i}/${"x".repeat(300)}`, count: 1 }));
    messages.push({ direction: "agent_to_server", method: "tools/call", count: 5 });
    const report = await fetch(`${s.endpoint}/governance/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ server_id: `flood-${"s".repeat(500)}`, messages }),
    });
    expect(report.status).toBe(200);
    const text = await (await fetch(`${s.endpoint}/metrics`, { headers: { authorization: `Bearer ${s.secret}` } })).text();
    const series = text.split("\n").filter((line) => line.startsWith("thoughtgate_stdio_messages_total{"));
    expect(series.length).toBeLessThanOrEqual(12);
    expect(series.some((line) => line.includes('method="tools/call"} 5'))).toBe(true);
    expect(series.some((line) => line.includes('method="other"} 1990'))).toBe(true);
    for (const line of series) {
      for (const [, value] of line.matchAll(/="([^"]*)"/g)) expect(value?.length ?? 0).toBeLessThanOrEqual(128);
    }
  });

  test("a request with no Host header is answered 400 with a one-line JSON error, not a 500 error page", async () => {
    const s = await serve();
    const answer = await rawRequest(Number(new URL(s.endpoint).port), `GET /healthz HTTP/1.0\r\nAuthorization: Bearer ${s.secret}\r\n\r\n`);
    expect(answer).toStartWith("HTTP/1.1 400 ");
    expect(answer).toEndWith('{"error":"the request has no Host header","code":"bad_request"}');
    expect(answer).not.toContain("<html");
    const emptyHost = await rawRequest(Number(new URL(s.endpoint).port), `GET /approvals HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n`);
    expect(emptyHost).toStartWith("HTTP/1.1 400 ");
  });
});

/** Every regular file under `root`, with its text (as bytes: latin1). */
function allFiles(root: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      // thoughtgate/bin/ holds the session's pin of the binary itself (src/wrap/shim-path.ts): the
      // program's own text (it names the page's URL shape), not a file anything was written to.
      if (stat.isDirectory()) {
        if (!path.endsWith(join("thoughtgate", "bin"))) walk(path);
      } else if (stat.isFile()) out.push({ path, text: readFileSync(path, "latin1") });
    }
  };
  walk(root);
  return out;
}

describe("keys stay out of files", () => {
  test("while wrap runs, only its 0600 service descriptor holds the CLI key; no file holds the page key or a URL with a key; at exit neither is anywhere", async () => {
    const root = tempDir();
    cleanup.push(() => root[Symbol.dispose]());
    const env = { ...process.env, HOME: root.path, XDG_STATE_HOME: join(root.path, "state"), XDG_CONFIG_HOME: join(root.path, "config"), TMPDIR: join(root.path, "tmp") };
    const work = join(root.path, "work");
    for (const dir of [env.TMPDIR, work]) Bun.spawnSync(["mkdir", "-p", dir]);
    const config = join(work, "mcp.json");
    const agentReport = join(work, "agent.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [fixture("scripted-server-fixture.ts")[1] ?? ""] } } }));
    const wrap = Bun.spawn([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("wrap-agent-fixture.ts", config, agentReport, "--wait")], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env,
      cwd: work,
    });
    cleanup.push(async () => {
      if (wrap.exitCode === null) wrap.kill("SIGKILL");
      await wrap.exited;
    });
    const stderr = new Response(wrap.stderr).text();
    await waitFor(() => existsSync(agentReport), "the agent to be connected");

    const services = join(env.XDG_STATE_HOME, "thoughtgate", "services");
    const [descriptorName] = readdirSync(services);
    const descriptor = join(services, descriptorName ?? "");
    expect(statSync(descriptor).mode & 0o777).toBe(0o600);
    const cliKey = (JSON.parse(readFileSync(descriptor, "utf8")) as { cli_key: string }).cli_key;
    expect(cliKey).toMatch(/^[0-9a-f]{64}$/);

    const during = allFiles(root.path);
    expect(during.filter((f) => f.text.includes(cliKey)).map((f) => f.path)).toEqual([descriptor]);
    expect(during.filter((f) => /approvals[#?]key=/.test(f.text)).map((f) => f.path)).toEqual([]);

    wrap.kill("SIGTERM");
    expect(await wrap.exited).toBe(0);
    const printed = await stderr;
    const pageKey = /\/approvals#key=([0-9a-f]{64})/.exec(printed)?.[1] ?? "";
    expect(pageKey).toMatch(/^[0-9a-f]{64}$/);
    expect(printed).not.toContain(cliKey);
    const after = allFiles(root.path);
    expect(after.length).toBeGreaterThan(2);
    expect(after.filter((f) => f.text.includes(pageKey) || f.text.includes(cliKey) || /approvals[#?]key=/.test(f.text)).map((f) => f.path)).toEqual([]);
    expect(existsSync(descriptor)).toBe(false);
  });

  test("the demo (a full wrap with an approval by elicitation) leaves no key in any file it wrote", async () => {
    const root = tempDir();
    cleanup.push(() => root[Symbol.dispose]());
    const env = { ...process.env, HOME: root.path, XDG_STATE_HOME: join(root.path, "state"), XDG_CONFIG_HOME: join(root.path, "config"), TMPDIR: root.path };
    const demo = Bun.spawnSync([requireBinary(), "demo"], { env, cwd: root.path, stdout: "pipe", stderr: "pipe" });
    const printed = demo.stderr.toString();
    expect(demo.exitCode).toBe(0);
    expect(printed).toContain("approved");
    const pageKey = /\/approvals#key=([0-9a-f]{64})/.exec(printed)?.[1] ?? "";
    expect(pageKey).toMatch(/^[0-9a-f]{64}$/);
    const written = allFiles(root.path);
    expect(written.some((f) => f.path.endsWith("events.jsonl"))).toBe(true);
    expect(written.filter((f) => f.text.includes(pageKey) || /approvals[#?]key=/.test(f.text)).map((f) => f.path)).toEqual([]);
  });
});
