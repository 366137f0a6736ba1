/**
 * How the compiled shim starts, stops and reaps its server
 * on every path, and that nothing it started outlives it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, isAlive, processesWith, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";

requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  // SIGTERM, not SIGKILL: a killed shim cannot stop its server, and a test must not leak one.
  for (const agent of agents.splice(0)) {
    agent.proc.kill("SIGTERM");
    await agent.exit();
  }
});

function start(args: string[], serverArgs: string[], env?: Record<string, string | undefined>) {
  const agent = new RawAgent([...args, "--", ...fixture("scripted-server-fixture.ts", ...serverArgs)], env);
  agents.push(agent);
  return agent;
}

async function serverPid(events: string): Promise<number> {
  const running = await waitFor(() => readEvents(events).find((e) => e.type === "server_state" && e.state === "running"), "server_state running");
  return running.pid as number;
}

const unique = () => `tg-marker-${crypto.randomUUID()}`;

describe("shutdown", () => {
  test("agent EOF: the server's stdin closes, it exits, the shim exits 0 and leaves nothing behind", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--events", events], []);
    await agent.request(1, "ping");
    const pid = await serverPid(events);
    expect(await agent.close()).toBe(0);
    expect(isAlive(pid)).toBe(false);
    const states = readEvents(events).filter((e) => e.type === "server_state").map((e) => e.state);
    expect(states).toEqual(["running", "exited"]);
  });

  test("a server that ignores stdin EOF and SIGTERM is killed after the graces and reaped", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const marker = unique();
    const agent = start(["--events", events, "--stdin-close-grace", "200ms", "--sigterm-grace", "300ms"], ["--ignore-sigterm", "--marker", marker]);
    await agent.request(1, "ping");
    const pid = await serverPid(events);
    expect(await agent.close()).toBe(0);
    expect(isAlive(pid)).toBe(false);
    expect(processesWith(marker)).toEqual([]);
    expect(readEvents(events).find((e) => e.type === "server_state" && e.state === "terminated")).toMatchObject({ signal: "SIGKILL" });
    expect(agent.stderr).toContain("ignored SIGTERM");
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to the shim stops the server through the staged shutdown`, async () => {
      using dir = tempDir();
      const events = join(dir.path, "events.jsonl");
      const agent = start(["--events", events], []);
      await agent.request(1, "ping");
      const pid = await serverPid(events);
      agent.proc.kill(signal);
      expect(await agent.exit()).toBe(0);
      expect(isAlive(pid)).toBe(false);
      expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end", status: "ok", exit_code: 0 });
    });
  }

  test("a signal during the stdin grace skips the rest of it, so a client's SIGKILL soon after cannot orphan the server", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    // Default graces: 5 s after stdin closes. The MCP SDK's close() sends SIGTERM 2 s after EOF
    // and SIGKILL 2 s after that; the shim must be done before then.
    const record = join(dir.path, "received.jsonl");
    const agent = start(["--events", events], ["--ignore-eof", "--record", record]);
    await agent.request(1, "ping");
    const pid = await serverPid(events);
    agent.proc.stdin.end();
    await waitFor(() => existsSync(record) && readFileSync(record, "utf8").includes("<EOF>"), "the server to see its stdin close");
    const signalled = performance.now();
    agent.proc.kill("SIGTERM");
    expect(await agent.exit()).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(4_000); // well inside the 5 s grace it skipped
    expect(isAlive(pid)).toBe(false);
    expect(readEvents(events).find((e) => e.type === "server_state" && e.state === "terminated")).toMatchObject({ signal: "SIGTERM" });
    expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end" });
  });

  test("processes the server started in its group are swept when it exits", async () => {
    const marker = unique();
    const agent = start([], ["--grandchild", marker]);
    await agent.request(1, "ping");
    // The grandchild's command line (the marker alone is also in the shim's and the server's).
    const grandchild = `sleep 600; echo ${marker}`;
    await waitFor(() => processesWith(grandchild).length === 1, "the grandchild to start");
    expect(await agent.close()).toBe(0);
    expect(processesWith(grandchild)).toEqual([]);
    expect(processesWith(marker)).toEqual([]);
  });
});

describe("server failures", () => {
  test("a server that crashes mid-request: the pending calls get an error and the shim exits with its code", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--server-id", "crashy", "--events", events], []);
    agent.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {} } });
    agent.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "crash", arguments: { code: 3 } } });
    const answers = [await agent.next(), await agent.next()];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    for (const answer of answers) {
      expect(answer.error).toMatchObject({ code: -31001, data: { server_id: "crashy" } });
      expect(answer.error?.message).toContain("exited (code 3)");
    }
    expect(await agent.exit()).toBe(3);
    const ends = readEvents(events).filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => e.status)).toEqual(["server_unavailable", "server_unavailable"]);
    expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end", status: "server_exited", exit_code: 3 });
  });

  test("a server that cannot start: every request gets a clear error and the shim stays up", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const agent = new RawAgent(["--server-id", "ghost", "--events", events, "--", "/nonexistent/mcp-server", "--flag"]);
    agents.push(agent);
    for (const [id, method] of [[1, "initialize"], [2, "tools/list"], [3, "tools/call"]] as const) {
      const answer = await agent.request(id, method, method === "tools/call" ? { name: "x", arguments: {} } : {});
      expect(answer.error?.code).toBe(-31001);
      expect(answer.error?.message).toContain('cannot start "/nonexistent/mcp-server"');
    }
    expect(await agent.close()).toBe(1);
    expect(agent.stderr).toContain("/nonexistent/mcp-server");
    expect(readEvents(events).find((e) => e.type === "server_state")).toMatchObject({ state: "failed_to_start" });
  });
});

describe("environment and audit", () => {
  test("THOUGHTGATE_* variables never reach the server", async () => {
    const agent = start([], [], { ...process.env, THOUGHTGATE_SECRET: "s3cret", THOUGHTGATE_RUN_ID: "run-1", KEEP_ME: "yes" });
    const answer = await agent.request(1, "tools/call", { name: "env", arguments: {} });
    const names = JSON.parse(answer.result.content[0].text) as string[];
    expect(names).toContain("KEEP_ME");
    expect(names.filter((n) => n.startsWith("THOUGHTGATE_"))).toEqual([]);
  });

  test("the event stream: envelope, seq from 1, one call's lifecycle, summary counts; stdout carries only JSON-RPC", async () => {
    using dir = tempDir();
    const events = join(dir.path, "nested", "events.jsonl");
    const agent = start(["--server-id", "scripted", "--events", events], [], { ...process.env, THOUGHTGATE_RUN_ID: "run-42" });
    await agent.request(1, "tools/call", { name: "echo", arguments: { b: 2, a: [1, { d: 4, c: 3 }] } });
    await agent.request(2, "tools/call", { name: "nope", arguments: {} });
    agent.write("not json\n");
    await agent.request(3, "ping");
    expect(await agent.close()).toBe(0);
    // Everything the agent saw was JSON-RPC (RawAgent parses every line; a log line would have thrown).
    const all = readEvents(events);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    for (const event of all) {
      expect(event).toMatchObject({ v: 1, run_id: "run-42", server_id: "scripted", profile: "production" });
      expect(new Date(event.ts as string).toISOString()).toBe(event.ts as string);
    }
    // No thoughtgate.yaml anywhere (HOME is a temp dir): the embedded default policy applies.
    expect(all[0]).toMatchObject({ type: "run_start", policy: "embedded-default" });
    const call = all.filter((e) => e.call_id === all.find((x) => x.type === "tool_call_start")?.call_id);
    expect(call.map((e) => e.type)).toEqual(["tool_call_start", "tool_call_decision", "tool_call_end"]);
    // args_hash is SHA-256 of canonical JSON: sorted keys, no whitespace.
    const canonical = '{"a":[1,{"c":3,"d":4}],"b":2}';
    expect(call[0]).toMatchObject({ tool: "echo", request_id: 1, args_hash: new Bun.CryptoHasher("sha256").update(canonical).digest("hex") });
    expect(call[1]).toMatchObject({ decision: "forward", gate: "rules", rule_id: "default-read-only", policy_id: null });
    expect(call[2]).toMatchObject({ status: "ok", bytes_out: expect.any(Number) });
    expect(call[2]?.latency_ms).toBeGreaterThan(0);
    const callIds = all.filter((e) => e.type === "tool_call_start").map((e) => e.call_id);
    expect(new Set(callIds).size).toBe(2);
    expect(all.at(-1)).toMatchObject({
      type: "run_end",
      // "nope" is not in the server's tool list: its annotations are unknown, so the embedded default
      // treats it as possibly destructive and, with no approval channel, denies it.
      summary: { calls_total: 2, calls_forwarded: 1, calls_denied: 1, calls_errored: 0, framing_errors: 1, events_dropped: 0, messages_agent_to_server: 3 },
    });
  });

  test("a request nobody answers is reported as orphaned after the timeout", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--events", events, "--orphan-timeout", "100ms"], []);
    agent.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "hang", arguments: {} } });
    const orphan = await waitFor(() => readEvents(events).find((e) => e.type === "orphaned_request"), "an orphaned_request event");
    expect(orphan).toMatchObject({ direction: "agent_to_server", request_id: 7, method: "tools/call" });
    expect(orphan.age_ms as number).toBeGreaterThanOrEqual(100);
  });
});

describe("command line", () => {
  const run = (...args: string[]) => Bun.spawnSync([process.env.TG_BINARY ?? join(import.meta.dir, "../../dist/thoughtgate"), ...args]);

  test("--version prints the version and target", () => {
    const result = run("--version");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.toString()).toMatch(/^thoughtgate \d+\.\d+\.\d+\S* \(bun-linux-x64\)\n$/);
  });

  test("usage errors exit 2 with a one-line message", () => {
    for (const args of [["shim"], ["shim", "--bogus", "--", "cat"], ["shim", "--profile", "staging", "--", "cat"], ["frobnicate"], ["shim", "--orphan-timeout", "soon", "--", "cat"]]) {
      const result = run(...args);
      expect(result.exitCode).toBe(2);
      expect(result.stdout.toString()).toBe("");
      const firstLine = result.stderr.toString().split("\n")[0] ?? "";
      expect(firstLine).toMatch(/^\[error\] \S/);
    }
  });

  test("--help lists the commands and the shim's flags", () => {
    expect(run("--help").stdout.toString()).toContain("shim");
    const shimHelp = run("shim", "--help").stdout.toString();
    for (const flag of ["--server-id", "--profile", "--events", "--orphan-timeout"]) expect(shimHelp).toContain(flag);
  });
});
