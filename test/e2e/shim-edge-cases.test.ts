/**
 * The shim's edge cases that only happen when something else misbehaves, through the compiled
 * binary: a server whose tools change under the agent (`notifications/tools/list_changed`), and a
 * governance service that never gets ready, never answers an evaluate, or asks an idle shim to
 * shut down. Each fails closed and says so; none leaves a server running.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, isAlive, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { closedPort, fakeGovernance } from "../support/fake-governance.ts";
import { RawAgent, type Received } from "../support/raw-agent.ts";
import { runBinary } from "../support/serve.ts";

setDefaultTimeout(60_000);
requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    if (agent.proc.exitCode === null) agent.proc.kill("SIGTERM");
    await agent.exit();
  }
});

function start(shimArgs: string[], server: string[], env: Record<string, string | undefined> = process.env): RawAgent {
  const agent = new RawAgent([...shimArgs, "--", ...server], env);
  agents.push(agent);
  return agent;
}

/** An agent that cannot be asked for approval (no elicitation capability). */
const INITIALIZE = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "edge-cases", version: "1" } };

async function initialize(agent: RawAgent): Promise<void> {
  expect((await agent.request(0, "initialize", INITIALIZE)).result).toBeDefined();
  agent.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });

describe("notifications/tools/list_changed", () => {
  test("reaches the agent, and the shim reads the tools again: a tool that turned destructive is refused as changed, and once accepted needs approval", async () => {
    using dir = tempDir();
    const record = join(dir.path, "server-received.jsonl");
    const events = join(dir.path, "events.jsonl");
    // No policy file anywhere (HOME is a temp dir): the embedded default forwards read-only tools
    // and asks a person for destructive ones; this agent cannot be asked, so that is -32007.
    const agent = start(["--server-id", "plugins", "--events", events], fixture("list-changed-server-fixture.ts", "--record", record));
    await initialize(agent);
    const listed = await agent.request(1, "tools/list");
    expect(listed.result.tools.find((t: { name: string }) => t.name === "archive").annotations).toEqual({ readOnlyHint: true });
    expect((await agent.request(2, "tools/call", call("archive"))).result.content).toEqual([{ type: "text", text: "archive done" }]);

    agent.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: call("flip") });
    const { match: flipped, before } = await agent.until(3);
    expect(flipped.result.content).toEqual([{ type: "text", text: "flip done" }]);
    expect(before).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);

    // The agent does not list again; the shim must not decide on the annotations it read before.
    // Its definition changed since it was pinned: refused until a person accepts it.
    const again = await agent.request(4, "tools/call", call("archive"));
    expect(again.error).toMatchObject({ code: -32011, data: { gate: "definitions", reason: "definition_changed", changed: ["annotations"], tool: "archive" } });
    const accepted = await runBinary(["pins", "accept", "plugins", "archive"]);
    expect(accepted.exitCode).toBe(0);
    // Accepted, it is decided on its new annotations: destructive, so a person is asked (and cannot be).
    const asked = await agent.request(5, "tools/call", call("archive"));
    expect(asked.error).toMatchObject({ code: -32007, data: { gate: "approval", tool: "archive" } });
    const received = readFileSync(record, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Received);
    const afterFlip = received.slice(received.findIndex((m) => m.id === 3) + 1);
    // The shim's own tools/list (an id the agent never used), and the second archive never reached the server.
    expect(afterFlip.filter((m) => m.method === "tools/list").map((m) => m.id)).toEqual([expect.not.stringMatching(/^[0-9]+$/)]);
    expect(afterFlip.some((m) => m.method === "tools/call")).toBe(false);
    expect(await agent.close()).toBe(0);
    const decisions = readEvents(events).filter((e) => e.type === "tool_call_decision" && e.tool === "archive");
    expect(decisions.map((e) => [e.decision, e.gate, e.rule_id])).toEqual([
      ["forward", "rules", "default-read-only"],
      ["deny", "definitions", null],
      ["deny", "approval", "default-destructive"],
    ]);
  });
});

describe("a governance service that never becomes ready", () => {
  const cases = [
    { what: "nobody listens on its port", endpoint: async () => `http://127.0.0.1:${await closedPort()}`, ready: true },
    { what: "it accepts the connection and never answers", endpoint: null, ready: false },
  ] as const;
  for (const { what, endpoint, ready } of cases) {
    test(`${what}: the shim gives up at its readiness budget with one clear line, and never starts the server`, async () => {
      using dir = tempDir();
      await using service = fakeGovernance({ ready });
      const url = endpoint ? await endpoint() : service.url;
      const started = join(dir.path, "server-started");
      const began = performance.now();
      const agent = start(["--governance-endpoint", url, "--governance-ready-timeout", "1s", "--events", join(dir.path, "events.jsonl")], ["touch", started], {
        ...process.env,
        THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
      });
      agent.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
      const code = await agent.exit();
      const elapsed = performance.now() - began;
      expect(code).toBe(1);
      const errors = agent.stderr.split("\n").filter((line) => line.startsWith("[error]"));
      expect(errors).toEqual([expect.stringContaining(`governance service ${url} did not become ready within 1s`)]);
      // The budget is the whole wait, a hanging /healthz included (its own timeout is cut to what is left).
      expect(elapsed).toBeGreaterThanOrEqual(1_000);
      expect(elapsed).toBeLessThan(5_000);
      expect(agent.remaining()).toEqual([]);
      expect(existsSync(started)).toBe(false);
    });
  }
});

describe("a governance service that stops answering", () => {
  test("an evaluate that never returns: that call is denied -32013 after the evaluate timeout; other calls keep flowing", async () => {
    using dir = tempDir();
    await using service = fakeGovernance({ answers: (body) => body.arguments?.hang !== true });
    const agent = start(["--server-id", "scripted", "--governance-endpoint", service.url, "--events", join(dir.path, "events.jsonl")], fixture("scripted-server-fixture.ts"), {
      ...process.env,
      THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
    });
    await initialize(agent);
    await agent.request(1, "tools/list");
    const sent = performance.now();
    agent.send({ jsonrpc: "2.0", id: 10, method: "tools/call", params: call("echo", { hang: true }) });
    agent.send({ jsonrpc: "2.0", id: 11, method: "tools/call", params: call("echo", { n: 2 }) });
    agent.send({ jsonrpc: "2.0", id: 12, method: "ping" });
    const { match: hung, before } = await agent.until(10);
    const waited = performance.now() - sent;
    expect(before.map((m) => m.id).sort()).toEqual([11, 12]);
    expect(before.find((m) => m.id === 11)?.result.content).toEqual([{ type: "text", text: '{"n":2}' }]);
    expect(hung.error).toMatchObject({ code: -32013, data: { gate: "governance", tool: "echo", server_id: "scripted" } });
    expect(hung.error?.data.reason).toContain("governance service unavailable");
    // The evaluate timeout is 2 s (docs/governance.md, "The governance service").
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(10_000);
    // The shim is still fine afterwards.
    expect((await agent.request(13, "tools/call", call("echo", { n: 3 }))).result.content).toEqual([{ type: "text", text: '{"n":3}' }]);
  });

  test("an idle shim sees the shutdown flag in a heartbeat and exits, stopping its server, with no traffic at all", async () => {
    using dir = tempDir();
    await using service = fakeGovernance();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--server-id", "idle", "--governance-endpoint", service.url, "--events", events], fixture("scripted-server-fixture.ts"), {
      ...process.env,
      THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
    });
    const running = await waitFor(() => readEvents(events).find((e) => e.type === "server_state" && e.state === "running"), "the server to run");
    service.shutdown = true;
    const heard = service.seen.length;
    const code = await agent.exit();
    expect(code).toBe(0);
    // Only the shim's own heartbeats (and its server-state reports) reached the service after the flag.
    const after = service.seen.slice(heard);
    expect(after).toContain("POST /governance/heartbeat");
    expect(after.filter((path) => path !== "POST /governance/heartbeat" && path !== "POST /governance/events")).toEqual([]);
    expect(agent.stderr).toContain("the governance service asked the shim to shut down");
    expect(isAlive(running.pid as number)).toBe(false);
    expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end" });
  });

  test("the service pushes shutdown on the channel (wrap stopping): the shim stops at once, stopping its server, without waiting for a heartbeat", async () => {
    using dir = tempDir();
    await using service = fakeGovernance();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--server-id", "gone", "--governance-endpoint", service.url, "--events", events], fixture("scripted-server-fixture.ts"), {
      ...process.env,
      THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
    });
    const running = await waitFor(() => readEvents(events).find((e) => e.type === "server_state" && e.state === "running"), "the server to run");
    const heartbeats = () => service.seen.filter((path) => path === "POST /governance/heartbeat").length;
    const before = heartbeats();
    service.pushShutdown();
    expect(await agent.exit()).toBe(0);
    expect(heartbeats()).toBe(before);
    expect(agent.stderr).toContain("the governance service asked the shim to shut down");
    expect(isAlive(running.pid as number)).toBe(false);
    expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end" });
  });

  test("the service's channel closes (the service died): every call is denied -32013 with the reason, and the shim stops at its next heartbeat", async () => {
    using dir = tempDir();
    await using service = fakeGovernance();
    const events = join(dir.path, "events.jsonl");
    const agent = start(["--server-id", "gone", "--governance-endpoint", service.url, "--events", events], fixture("scripted-server-fixture.ts"), {
      ...process.env,
      THOUGHTGATE_GOVERNANCE_SECRET: service.secret,
    });
    await initialize(agent);
    const running = await waitFor(() => readEvents(events).find((e) => e.type === "server_state" && e.state === "running"), "the server to run");
    service.dropChannels();
    await waitFor(() => agent.stderr.includes("the governance service closed the channel"), "the shim to see the channel close");
    const denied = await agent.request(20, "tools/call", call("echo", { n: 1 }));
    expect(denied.error).toMatchObject({ code: -32013, data: { gate: "governance", tool: "echo" } });
    expect(denied.error?.data.reason).toContain("the governance service closed the channel: the fake service went away");
    expect(await agent.exit()).toBe(0);
    expect(agent.stderr).toContain("the governance service stopped answering");
    expect(isAlive(running.pid as number)).toBe(false);
    expect(readEvents(events).at(-1)).toMatchObject({ type: "run_end" });
  });
});
