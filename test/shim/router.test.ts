import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readEvents, tempDir } from "../support/harness.ts";
import { EventStream } from "../../src/telemetry/events.ts";
import type { Decider, Verdict } from "../../src/governance/verdict/decider.ts";
import { Framer } from "../../src/stdio/framer.ts";
import { Router, type Sink } from "../../src/shim/router.ts";

class Collect implements Sink {
  readonly lines: string[] = [];
  send(bytes: Uint8Array): void {
    this.lines.push(new TextDecoder().decode(bytes));
  }
  sendText(line: string): void {
    this.lines.push(line);
  }
  json(): Array<Record<string, any>> {
    return this.lines.map((line) => JSON.parse(line));
  }
}

function setup(decider: Decider, profile: "production" | "development" = "production", eventsPath: string | null = null, seedToolList = true) {
  const toAgent = new Collect();
  const toServer = new Collect();
  const events = EventStream.open(eventsPath, { run_id: "r", server_id: "s", profile });
  const router = new Router({ serverId: "s", profile, decider, events, toAgent, toServer });
  const framer = new Framer();
  const agent = (message: unknown) => {
    for (const unit of framer.push(new TextEncoder().encode(`${JSON.stringify(message)}\n`))) router.fromAgent(unit);
  };
  const serverFramer = new Framer();
  const server = (message: unknown) => {
    for (const unit of serverFramer.push(new TextEncoder().encode(`${JSON.stringify(message)}\n`))) router.fromServer(unit);
  };
  if (seedToolList) {
    // The agent listed the tools once, as agents do; the router now knows every annotation.
    agent({ jsonrpc: "2.0", id: "setup-list", method: "tools/list" });
    server({ jsonrpc: "2.0", id: "setup-list", result: { tools: [] } });
    toAgent.lines.length = 0;
    toServer.lines.length = 0;
  }
  return { router, toAgent, toServer, agent, server, events };
}

const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
const deny: Verdict = { action: "deny", gate: "rules", ruleId: "r1", reason: "no", error: { code: -32014, message: "denied by rule r1", data: { gate: "rules" } } };
const forward: Verdict = { action: "forward", gate: "rules", ruleId: "r0", reason: "ok" };

describe("Router decision point", () => {
  test("only governed methods are decided; everything else passes straight through", () => {
    const decided: string[] = [];
    const { agent, toServer } = setup({ policy: "test", decide: (m) => (decided.push(m.method), forward) });
    agent(call(1, "a"));
    agent({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "x" } });
    agent({ jsonrpc: "2.0", id: 3, method: "ping" });
    agent({ jsonrpc: "2.0", id: 4, method: "tools/list" });
    agent({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(decided).toEqual(["tools/call", "resources/read"]);
    expect(toServer.json().map((m) => m.id ?? m.method)).toEqual([1, 2, 3, 4, "notifications/initialized"]);
  });

  test("deny answers the agent with the verdict's error and never reaches the server", () => {
    const { agent, toAgent, toServer, router } = setup({ policy: "test", decide: () => deny });
    agent(call(7, "rm"));
    expect(toServer.lines).toEqual([]);
    expect(toAgent.json()).toEqual([{ jsonrpc: "2.0", id: 7, error: { code: -32014, message: "denied by rule r1", data: { gate: "rules" } } }]);
    expect(router.summary).toMatchObject({ calls_total: 1, calls_denied: 1, calls_forwarded: 0 });
  });

  test("a pending decision holds only its own request: others and pings keep flowing", async () => {
    let approve: (v: Verdict) => void = () => {};
    const { agent, toServer, router } = setup({
      policy: "test",
      decide: (m) => ((m.params as { name: string }).name === "slow" ? new Promise<Verdict>((resolve) => (approve = resolve)) : forward),
    });
    agent(call(1, "slow"));
    agent(call(2, "fast"));
    agent({ jsonrpc: "2.0", id: 3, method: "ping" });
    expect(toServer.json().map((m) => m.id)).toEqual([2, 3]);
    expect(router.decisionsInFlight).toBe(1);
    approve(forward);
    await Bun.sleep(0);
    expect(toServer.json().map((m) => m.id)).toEqual([2, 3, 1]);
    expect(router.decisionsInFlight).toBe(0);
  });

  test("notifications/cancelled for a pending request aborts it and is not forwarded", () => {
    let signal: AbortSignal | undefined;
    const { agent, toServer, toAgent, router } = setup({ policy: "test", decide: (_m, ctx) => ((signal = ctx.signal), new Promise<Verdict>(() => {})) });
    agent(call(5, "slow"));
    agent({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5, reason: "user" } });
    expect(signal?.aborted).toBe(true);
    expect(toServer.lines).toEqual([]);
    expect(toAgent.lines).toEqual([]);
    expect(router.decisionsInFlight).toBe(0);
    // A cancel for a request the server does have is forwarded as usual.
    agent({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } });
    expect(toServer.json()).toEqual([{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } }]);
  });

  test("a decider that throws or rejects fails closed", async () => {
    const throwing = setup({ policy: "test", decide: () => { throw new Error("cedar exploded"); } });
    throwing.agent(call(1, "x"));
    expect(throwing.toServer.lines).toEqual([]);
    expect(throwing.toAgent.json()[0]?.error).toMatchObject({ code: -32603, message: expect.stringContaining("cedar exploded") });

    const rejecting = setup({ policy: "test", decide: () => Promise.reject(new Error("service down")) });
    rejecting.agent(call(2, "x"));
    await Bun.sleep(0);
    expect(rejecting.toServer.lines).toEqual([]);
    expect(rejecting.toAgent.json()[0]).toMatchObject({ id: 2, error: { code: -32603 } });
  });

  test("a decision that arrives after the server died answers with server-unavailable", async () => {
    let approve: (v: Verdict) => void = () => {};
    const { agent, router, toAgent, toServer } = setup({ policy: "test", decide: () => new Promise<Verdict>((resolve) => (approve = resolve)) });
    agent(call(1, "slow"));
    router.serverGone("it exited (code 1)");
    approve(forward);
    await Bun.sleep(0);
    expect(toServer.lines).toEqual([]);
    expect(toAgent.json()).toHaveLength(1);
    expect(toAgent.json()[0]).toMatchObject({ id: 1, error: { code: -31001 } });
  });

  test("responses are correlated: a server response settles the agent's request once", () => {
    const { agent, server, router, toAgent } = setup({ policy: "test", decide: () => forward });
    agent(call(1, "a"));
    expect(router.agentRequests.size).toBe(1);
    server({ jsonrpc: "2.0", id: 1, result: { content: [] } });
    expect(router.agentRequests.size).toBe(0);
    server({ jsonrpc: "2.0", id: 1, result: { content: [] } }); // a duplicate: now unsolicited, dropped
    expect(toAgent.json()).toHaveLength(1);
  });

  test('ids 1 and "1" are different requests', () => {
    const { agent, server, toAgent } = setup({ policy: "test", decide: () => forward });
    agent({ jsonrpc: "2.0", id: 1, method: "ping" });
    server({ jsonrpc: "2.0", id: "1", result: {} });
    expect(toAgent.lines).toEqual([]);
    server({ jsonrpc: "2.0", id: 1, result: {} });
    expect(toAgent.json()).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  test("a call cancelled after it was forwarded ends as cancelled; a late answer passes quietly, nothing is answered at shutdown", async () => {
    using dir = tempDir();
    const path = join(dir.path, "events.jsonl");
    const { agent, server, router, toAgent, toServer, events } = setup({ policy: "test", decide: () => forward }, "production", path);
    agent(call(4, "slow"));
    agent({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 4 } });
    expect(toServer.json().map((m) => m.id ?? m.method)).toEqual([4, "notifications/cancelled"]);
    agent(call(5, "slow"));
    agent({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } });
    server({ jsonrpc: "2.0", id: 5, result: { late: true } });
    router.serverGone("it exited (code 0)");
    await events.close();
    expect(toAgent.json()).toEqual([{ jsonrpc: "2.0", id: 5, result: { late: true } }]);
    const ends = readEvents(path).filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => e.status)).toEqual(["cancelled", "cancelled"]);
    expect(readEvents(path).some((e) => e.type === "framing_error")).toBe(false);
    expect(router.summary.calls_errored).toBe(0);
  });

  test("a tools/call before any tools/list: the shim reads the list itself first, so annotations cannot be skipped", async () => {
    const seen: unknown[] = [];
    const { agent, server, toAgent, toServer } = setup({ policy: "test", decide: (_m, ctx) => (seen.push(ctx.annotations), forward) }, "production", null, false);
    agent(call(1, "write_file"));
    const [ask] = toServer.json();
    // Read the id first: bun's toMatchObject with an asymmetric matcher rewrites the matched field.
    const askId = String(ask?.id);
    expect(askId).toStartWith("thoughtgate-");
    expect(ask?.method).toBe("tools/list");
    expect(seen).toEqual([]);
    server({ jsonrpc: "2.0", id: askId, result: { tools: [{ name: "write_file", annotations: { destructiveHint: true } }], nextCursor: "p2" } });
    await Bun.sleep(0);
    const second = toServer.json()[1];
    const secondId = second?.id;
    expect(second).toMatchObject({ method: "tools/list", params: { cursor: "p2" } });
    server({ jsonrpc: "2.0", id: secondId, result: { tools: [{ name: "read_file", annotations: { readOnlyHint: true } }] } });
    await Bun.sleep(0);
    expect(seen).toEqual([{ destructiveHint: true }]);
    expect(toServer.json().at(-1)).toEqual(call(1, "write_file"));
    // The shim's own list responses never reach the agent.
    expect(toAgent.lines).toEqual([]);
    // list_changed makes the next call read the list again.
    server({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    agent(call(2, "read_file"));
    expect(toServer.json().at(-1)).toMatchObject({ method: "tools/list" });
  });
});

describe("secret scanning on the result path", () => {
  const token = ["gh", "p_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"].join("");
  const result = (id: number) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `token ${token}` }] } });

  test("production: a tool result reaches the agent with the credential redacted; a tools/list answer is not scanned", () => {
    const { agent, server, toAgent } = setup({ policy: "test", decide: () => forward });
    agent(call(1, "read"));
    server(result(1));
    agent({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    server({ jsonrpc: "2.0", id: 2, result: { tools: [{ name: "t", description: `example ${token}` }] } });
    expect(toAgent.json().map((m) => m.result.content?.[0].text ?? m.result.tools[0].description)).toEqual(["token [REDACTED:github_token]", `example ${token}`]);
  });

  test("the decider's policy applies: scanning off for this server, and development forwards unchanged", () => {
    const off = setup({ policy: "test", decide: () => forward, secretScan: () => ({ scan: false, kinds: {} }) });
    off.agent(call(1, "read"));
    off.server(result(1));
    const development = setup({ policy: "test", decide: () => forward }, "development");
    development.agent(call(1, "read"));
    development.server(result(1));
    for (const { toAgent } of [off, development]) expect(toAgent.json()[0]?.result.content[0].text).toBe(`token ${token}`);
  });
});
