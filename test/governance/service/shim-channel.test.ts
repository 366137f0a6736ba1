import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../../src/core/config/load.ts";
import { GovernanceEngine } from "../../../src/governance/engine/engine.ts";
import { RemoteDecider } from "../../../src/governance/deciders/remote-decider.ts";
import { startGovernanceService, type GovernanceService } from "../../../src/governance/service/service.ts";
import type { JsonRpcRequest } from "../../../src/core/jsonrpc.ts";
import type { DecisionContext } from "../../../src/governance/verdict/decider.ts";
import { tempDir, waitFor } from "../../support/harness.ts";

const SESSION = "s".repeat(64);

const CONFIG = `schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: reads, match: "read_*", action: forward }
`;

const running: GovernanceService[] = [];
const dirs: Array<{ [Symbol.dispose](): void }> = [];
afterEach(async () => {
  for (const service of running.splice(0)) await service.stop();
  for (const dir of dirs.splice(0)) dir[Symbol.dispose]();
});

async function start(): Promise<GovernanceService> {
  const dir = tempDir();
  dirs.push(dir);
  writeFileSync(join(dir.path, "thoughtgate.yaml"), CONFIG);
  const loaded = loadConfig(join(dir.path, "thoughtgate.yaml"), {});
  if (!loaded) throw new Error("config not found");
  const service = startGovernanceService({
    // In-process: the test's own requests come from the service's own process, which is not under test here.
    people: () => null,
    engine: await GovernanceEngine.fromConfig(loaded.config, loaded.file ?? "test"),
    profile: "production",
    sessionSecret: SESSION,
    pageKey: "p".repeat(64),
    cliKey: "c".repeat(64),
  });
  running.push(service);
  return service;
}

/** A channel opened by hand, its messages collected. */
async function channel(service: GovernanceService, headers: Record<string, string> = { authorization: `Bearer ${SESSION}` }) {
  const socket = new WebSocket(`${service.url.replace("http", "ws")}/governance/channel`, { headers } as unknown as string[]);
  const messages: Array<Record<string, unknown>> = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.onclose = (event) => resolve({ code: event.code, reason: event.reason });
  });
  socket.onmessage = (event) => messages.push(JSON.parse(String(event.data)) as Record<string, unknown>);
  const opened = await new Promise<{ ok: true } | { ok: false; error: string }>((resolve) => {
    socket.onopen = () => resolve({ ok: true });
    socket.onerror = (event) => resolve({ ok: false, error: (event as ErrorEvent).message });
  });
  return { socket, messages, closed, opened };
}

const CONTEXT: DecisionContext = {
  serverId: "fs",
  awaitingApproval: () => {},
  signal: new AbortController().signal,
} as unknown as DecisionContext;

function toolCall(id: number, name: string): JsonRpcRequest {
  const params = { name, arguments: {} };
  return { kind: "request", id, method: "tools/call", params, body: { jsonrpc: "2.0", id, method: "tools/call", params } };
}

describe("the shims' channel to the governance service", () => {
  test("a decision over the channel is the HTTP endpoint's decision, answered by id", async () => {
    const service = await start();
    const { socket, messages } = await channel(service);
    const body = { server_id: "fs", direction: "agent_to_server", method: "tools/call", name: "read_file", arguments: {}, message_type: "request", profile: "production" };
    socket.send(JSON.stringify({ id: 7, method: "POST", path: "/governance/evaluate", body }));
    socket.send(JSON.stringify({ id: 8, method: "POST", path: "/governance/evaluate", body: { ...body, name: "write_file" } }));
    await waitFor(() => messages.length === 2, "two answers");
    const overHttp = await fetch(`${service.url}/governance/evaluate`, { method: "POST", headers: { authorization: `Bearer ${SESSION}` }, body: JSON.stringify(body) });
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect(byId.get(7)).toEqual({ id: 7, status: 200, body: await overHttp.json() });
    expect(byId.get(8)).toMatchObject({ id: 8, status: 200, body: { decision: "deny", gate: "rules" } });
    socket.close();
  });

  test("without the session secret, or from a browser (an Origin), the channel is refused and the refusal counted", async () => {
    const service = await start();
    const none = await channel(service, {});
    const wrong = await channel(service, { authorization: "Bearer wrong" });
    const browser = await channel(service, { authorization: `Bearer ${SESSION}`, origin: "http://evil.example" });
    expect([none.opened, wrong.opened, browser.opened]).toEqual([
      { ok: false, error: expect.stringContaining("401") },
      { ok: false, error: expect.stringContaining("401") },
      { ok: false, error: expect.stringContaining("403") },
    ]);
    expect(service.metrics.render()).toContain("thoughtgate_governance_unauthorized_total 2");
  });

  test("a message the service cannot read: with an id it gets a 400; without one the channel is closed", async () => {
    const service = await start();
    const { socket, messages, closed } = await channel(service);
    socket.send(JSON.stringify({ id: 1, method: "DELETE", path: "/governance/evaluate" }));
    socket.send(JSON.stringify({ id: 2, method: "GET", path: "/approvals/api/tasks" }));
    await waitFor(() => messages.length === 2, "two refusals");
    expect(messages.map((m) => [m.id, m.status])).toEqual([
      [1, 400],
      [2, 400],
    ]);
    socket.send("not json");
    expect(await closed).toEqual({ code: 1007, reason: "a channel message is not JSON" });
  });

  test("wrap stopping reaches every open channel at once, as a push, not at the next heartbeat", async () => {
    const service = await start();
    const first = await channel(service);
    const second = await channel(service);
    service.setShutdown();
    await waitFor(() => first.messages.length === 1 && second.messages.length === 1, "the push on both channels");
    expect([first.messages, second.messages]).toEqual([[{ push: "shutdown" }], [{ push: "shutdown" }]]);
    // A shim that connects afterwards hears it as it connects.
    const late = await channel(service);
    await waitFor(() => late.messages.length === 1, "the push to a late shim");
    for (const open of [first, second, late]) open.socket.close();
  });

  test("a shim's decider: decisions over the channel; when the service goes away, every decision fails closed with the reason", async () => {
    const service = await start();
    const decider = await RemoteDecider.connect({ endpoint: service.url, secret: SESSION, serverId: "fs", profile: "production" });
    expect(await decider.decide(toolCall(1, "read_file"), CONTEXT)).toMatchObject({ action: "forward", gate: "rules", ruleId: "reads" });
    expect(await decider.decide(toolCall(2, "write_file"), CONTEXT)).toMatchObject({ action: "deny", gate: "rules" });
    await service.stop();
    running.length = 0;
    const after = await decider.decide(toolCall(3, "read_file"), CONTEXT);
    expect(after).toMatchObject({ action: "deny", gate: "governance", reason: expect.stringContaining("governance service unavailable: the governance service closed the channel") });
    await decider.close();
  });

  test("a wrong secret is said at once, not waited out", async () => {
    const service = await start();
    const began = performance.now();
    const refused = RemoteDecider.connect({ endpoint: service.url, secret: "wrong", serverId: "fs", profile: "production", readyTimeoutMs: 10_000 });
    expect(refused).rejects.toThrow("HTTP 401 (wrong or missing THOUGHTGATE_GOVERNANCE_SECRET)");
    await refused.catch(() => {});
    expect(performance.now() - began).toBeLessThan(5_000);
  });
});
