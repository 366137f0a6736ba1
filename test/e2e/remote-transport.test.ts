/**
 * `thoughtgate shim --url` against a Streamable HTTP server that misbehaves on request
 * (test/fixtures/hostile-http-server-fixture.ts): what the agent sees when the server fails, how
 * both eras' headers and sessions are kept, and how cancellation and timeouts reach the server.
 */
import { afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { fixture, readEvents, tempDir, waitFor } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";
import { RawAgent } from "../support/raw-agent.ts";

setDefaultTimeout(30_000);

const MODERN_META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
type Logged = { kind: string; method?: string; headers?: Record<string, string>; requestId?: unknown; id?: unknown };

let server: HttpFixture;
let dir: ReturnType<typeof tempDir>;
let agent: RawAgent | null = null;

beforeEach(async () => {
  dir = tempDir("thoughtgate-remote-");
  server = await startHttpFixture(fixture("hostile-http-server-fixture.ts"));
});

afterEach(async () => {
  if (agent) {
    agent.proc.kill("SIGKILL");
    await agent.exit();
    agent = null;
  }
  await server.stop();
  dir[Symbol.dispose]();
});

const eventsPath = () => join(dir.path, "events.jsonl");

function shim(...extra: string[]): RawAgent {
  agent = new RawAgent(["--server-id", "hostile", "--events", eventsPath(), "--url", server.url, ...extra]);
  return agent;
}

async function serverLog(): Promise<Logged[]> {
  return (await (await fetch(new URL("/log", server.url))).json()) as Logged[];
}

async function initialize(a: RawAgent): Promise<void> {
  const init = await a.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
  expect(init.result?.serverInfo?.name).toBe("hostile-http");
  a.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

describe("2025-11-25: the session the server gave", () => {
  test("later requests carry its Mcp-Session-Id and the negotiated MCP-Protocol-Version; the shim ends it with DELETE", async () => {
    const a = shim();
    await initialize(a);
    const echoed = await a.request(1, "tools/call", { name: "echo_headers", arguments: {} });
    const headers = JSON.parse(echoed.result.content[0].text) as Record<string, string>;
    expect(headers).toMatchObject({ "mcp-session-id": "hostile-session", "mcp-protocol-version": "2025-11-25", accept: "application/json, text/event-stream" });
    expect(await a.close()).toBe(0);
    expect((await serverLog()).filter((entry) => entry.kind === "delete")).toEqual([{ kind: "delete", session: "hostile-session" } as Logged]);
  });

  test("HTTP 404 on the session: the call gets a clear error and the shim stops (exit 1), so the agent reconnects", async () => {
    const a = shim();
    await initialize(a);
    const answer = await a.request(1, "tools/call", { name: "expire", arguments: {} });
    expect(answer.error).toMatchObject({ code: -31001, message: 'MCP server "hostile" did not answer: the server ended the session (HTTP 404)' });
    expect(await a.exit()).toBe(1);
  });
});

describe("2026-07-28: stateless requests", () => {
  test("each request carries MCP-Protocol-Version, Mcp-Method, Mcp-Name and the tool's Mcp-Param headers, and no session", async () => {
    const a = shim();
    await a.request(1, "tools/list", { _meta: MODERN_META });
    const echoed = await a.request(2, "tools/call", { name: "echo_headers", arguments: { tag: "caf\u00e9 au lait" }, _meta: MODERN_META });
    const headers = JSON.parse(echoed.result.content[0].text) as Record<string, string>;
    expect(headers).toMatchObject({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo_headers",
      "mcp-param-tag": `=?base64?${Buffer.from("caf\u00e9 au lait").toString("base64")}?=`,
    });
    expect(headers["mcp-session-id"]).toBeUndefined();
  });
});

describe("a server that fails answers the agent, never leaves it hanging", () => {
  test("HTTP 502: the call is answered -31001 naming the status, and the audit closes it as an error", async () => {
    const a = shim();
    await initialize(a);
    const answer = await a.request(1, "tools/call", { name: "crash", arguments: {} });
    expect(answer.error?.code).toBe(-31001);
    expect(answer.error?.message).toContain("HTTP 502 Bad Gateway");
    expect(await a.close()).toBe(0);
    expect(readEvents(eventsPath()).find((event) => event.type === "tool_call_end")).toMatchObject({ tool: "crash", status: "error" });
  });

  test("a stream that closes before the answer: what it carried is delivered, then the call gets an error", async () => {
    const a = shim();
    await initialize(a);
    a.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "drop", arguments: {} } });
    const { match, before } = await a.until(1);
    expect(before.map((message) => message.method)).toEqual(["notifications/progress"]);
    expect(match.error?.message).toBe('MCP server "hostile" did not answer: the server closed the stream before answering');
  });

  test("a stream the server closed after an event id is resumed with GET and Last-Event-ID", async () => {
    const a = shim();
    await initialize(a);
    const answer = await a.request(1, "tools/call", { name: "resume", arguments: {} });
    expect(answer.result?.content).toEqual([{ type: "text", text: "resumed" }]);
    expect((await serverLog()).some((entry) => entry.kind === "resumed")).toBe(true);
  });

  test("an unreachable server: each request is answered with the reason and the shim stays up", async () => {
    await server.stop();
    const a = shim();
    const first = await a.request(1, "tools/list", { _meta: MODERN_META });
    expect(first.error?.code).toBe(-31001);
    expect(first.error?.message).toContain("cannot reach http://127.0.0.1:");
    const second = await a.request(2, "tools/list", { _meta: MODERN_META });
    expect(second.error?.code).toBe(-31001);
    expect(await a.close()).toBe(0);
  });

  test("a pretty-printed JSON answer (CRLF between tokens) reaches the agent as one line with the same value", async () => {
    const a = shim();
    await initialize(a);
    const answer = await a.request(1, "tools/call", { name: "pretty", arguments: {} });
    expect(answer.result).toEqual({ content: [{ type: "text", text: "pretty" }] });
  });
});

describe("cancellation and timeouts reach the server in its era's way", () => {
  test("2025-11-25: the agent's notifications/cancelled is posted to the server", async () => {
    const a = shim();
    await initialize(a);
    a.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow", arguments: {} } });
    await waitFor(async () => (await serverLog()).some((entry) => entry.kind === "request" && entry.method === "tools/call"), "the slow call to reach the server");
    a.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user" } });
    await waitFor(async () => (await serverLog()).some((entry) => entry.kind === "cancelled" && entry.requestId === 7), "notifications/cancelled at the server");
    expect(await a.close()).toBe(0);
    expect(readEvents(eventsPath()).find((event) => event.type === "tool_call_end")).toMatchObject({ tool: "slow", status: "cancelled" });
  });

  test("2026-07-28: the agent's cancel closes the request's stream, and no notification is posted", async () => {
    const a = shim();
    a.send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "slow", arguments: {}, _meta: MODERN_META } });
    await waitFor(async () => (await serverLog()).some((entry) => entry.kind === "request" && entry.method === "tools/call"), "the slow call to reach the server");
    a.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 8 } });
    await waitFor(async () => (await serverLog()).some((entry) => entry.kind === "stream-closed" && entry.id === 8), "the server to see its stream closed");
    expect((await serverLog()).filter((entry) => entry.kind === "cancelled")).toEqual([]);
  });

  test("--request-timeout: the agent gets an error and a 2025-11-25 server is told the request is cancelled", async () => {
    const a = shim("--request-timeout", "300ms");
    await initialize(a);
    const answer = await a.request(9, "tools/call", { name: "slow", arguments: {} });
    expect(answer.error).toMatchObject({ code: -31001, message: 'MCP server "hostile" did not answer: no answer within 300 ms' });
    await waitFor(async () => (await serverLog()).some((entry) => entry.kind === "cancelled" && entry.requestId === 9), "notifications/cancelled at the server");
  });
});
