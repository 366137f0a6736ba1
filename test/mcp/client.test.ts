import { describe, expect, test } from "bun:test";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { McpClient, type Notification } from "../../src/mcp/client.ts";
import { ConnectionClosedError, RequestTimeoutError, RpcError } from "../../src/mcp/rpc-errors.ts";
import { fixture, isAlive, processesWith, waitFor } from "../support/harness.ts";

// Short graces: the fixtures that stop at EOF do so at once, and the stubborn one must reach SIGKILL.
const QUICK = { stdinCloseMs: 500, sigtermMs: 500 };
const TEST_TIMEOUT_MS = 30_000;

function scripted(options: { maxLineBytes?: number; env?: NodeJS.ProcessEnv } = {}): McpClient {
  return McpClient.start({ command: fixture("client-scripted-fixture.ts"), ...options });
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

function collectNotifications(client: McpClient): Notification[] {
  const seen: Notification[] = [];
  client.onNotification((notification) => seen.push(notification));
  return seen;
}

describe("requests", () => {
  test("responses that arrive out of order reach the request they answer", async () => {
    await using client = scripted();
    const settled: string[] = [];
    const track = (value: string) =>
      client.request("gather", { count: 3, value }).then((result) => {
        settled.push(value);
        return result;
      });
    const results = await Promise.all([track("a"), track("b"), track("c")]);
    expect(results).toEqual([{ value: "a" }, { value: "b" }, { value: "c" }]);
    // The fixture answered c, b, a: each promise settled when its own answer came.
    expect(settled).toEqual(["c", "b", "a"]);
  }, TEST_TIMEOUT_MS);

  test("many concurrent requests each get their own result", async () => {
    await using client = scripted();
    const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
    const gathers = values.map((value) => client.request("gather", { count: values.length, value }));
    const echoes = values.map((value) => client.request("echo", { value }));
    expect(await Promise.all(gathers)).toEqual(values.map((value) => ({ value })));
    expect(await Promise.all(echoes)).toEqual(values.map((value) => ({ value })));
  }, TEST_TIMEOUT_MS);

  test("a JSON-RPC error response rejects with its code, message and data", async () => {
    await using client = scripted();
    const error = await rejectionOf(client.request("fail", { code: -32602, message: "bad params", data: { field: "path" } }));
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).rpc).toEqual({ code: -32602, message: "bad params", data: { field: "path" } });
    expect((error as RpcError).message).toBe("fail: bad params (JSON-RPC error -32602)");
  }, TEST_TIMEOUT_MS);

  test("a request without an answer times out, and the server is told it was cancelled", async () => {
    await using client = scripted();
    const seen = collectNotifications(client);
    const started = performance.now();
    const error = await rejectionOf(client.request("never", {}, 300));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ code: "TIMEOUT", method: "never", timeoutMs: 300 });
    const cancelled = await waitFor(() => seen.find((n) => n.method === "fixture/cancelled"), "the cancellation to reach the server");
    expect(cancelled.params).toMatchObject({ requestId: 1 });
    // The connection is still good.
    expect(await client.request("echo", { after: "timeout" })).toEqual({ after: "timeout" });
  }, TEST_TIMEOUT_MS);

  test("a response that breaks the framing rules rejects its request at once", async () => {
    await using client = scripted();
    const error = await rejectionOf(client.request("malformed", {}));
    expect(error).toBeInstanceOf(ThoughtGateError);
    expect((error as ThoughtGateError).code).toBe("PROTOCOL");
    expect((error as Error).message).toContain("InvalidJson");
    expect(await client.request("echo", { still: "works" })).toEqual({ still: "works" });
  }, TEST_TIMEOUT_MS);

  test("a response longer than the line limit is rejected without being buffered", async () => {
    await using client = scripted({ maxLineBytes: 4_096 });
    const error = await rejectionOf(client.request("big", { bytes: 20_000 }));
    expect((error as ThoughtGateError).code).toBe("PROTOCOL");
    expect((error as Error).message).toContain("MessageTooLarge");
    expect(await client.request("big", { bytes: 100 })).toEqual({ pad: "x".repeat(100) });
  }, TEST_TIMEOUT_MS);
});

describe("server-initiated messages", () => {
  test("a server request is answered by the handler registered for its method", async () => {
    await using client = scripted();
    client.setRequestHandler("sampling/createMessage", async (params) => ({ model: "test-model", received: params }));
    const result = await client.request("ask", { method: "sampling/createMessage", params: { maxTokens: 5 } });
    expect(result).toEqual({ reply: { result: { model: "test-model", received: { maxTokens: 5 } } } });
  }, TEST_TIMEOUT_MS);

  test("a handler's RpcError is the server's error; anything else it throws is -32603", async () => {
    await using client = scripted();
    client.setRequestHandler("elicitation/create", () => {
      throw new RpcError({ code: -32007, message: "declined", data: { by: "user" } });
    });
    client.setRequestHandler("roots/list", () => {
      throw new Error("disk on fire");
    });
    expect(await client.request("ask", { method: "elicitation/create" })).toEqual({
      reply: { error: { code: -32007, message: "declined", data: { by: "user" } } },
    });
    expect(await client.request("ask", { method: "roots/list" })).toEqual({
      reply: { error: { code: -32603, message: "disk on fire" } },
    });
  }, TEST_TIMEOUT_MS);

  test("a server request for a method without a handler gets -32601", async () => {
    await using client = scripted();
    const result = await client.request("ask", { method: "sampling/createMessage", params: {} });
    expect(result).toEqual({ reply: { error: { code: -32601, message: "Method not found: sampling/createMessage" } } });
  }, TEST_TIMEOUT_MS);

  test("a server ping is answered without any handler", async () => {
    await using client = scripted();
    expect(await client.request("ask", { method: "ping" })).toEqual({ reply: { result: {} } });
  }, TEST_TIMEOUT_MS);

  test("notifications flow both ways, in order", async () => {
    await using client = scripted();
    const seen = collectNotifications(client);
    expect(await client.request("notify", { count: 5 })).toEqual({ sent: 5 });
    // Sent before the response on the same stream, so all delivered by the time it resolves.
    expect(seen.filter((n) => n.method === "fixture/tick").map((n) => n.params)).toEqual([1, 2, 3, 4, 5].map((n) => ({ n })));

    client.notify("fixture/poke", { from: "client" });
    const poked = await waitFor(() => seen.find((n) => n.method === "fixture/poked"), "the server to get our notification");
    expect(poked.params).toEqual({ from: "client" });
  }, TEST_TIMEOUT_MS);

  test("an unsubscribed handler hears nothing more", async () => {
    await using client = scripted();
    const heard: string[] = [];
    const unsubscribe = client.onNotification((n) => heard.push(n.method));
    await client.request("notify", { count: 1 });
    unsubscribe();
    await client.request("notify", { count: 1 });
    expect(heard).toEqual(["fixture/tick"]);
  }, TEST_TIMEOUT_MS);
});

describe("initialize", () => {
  test("does the MCP handshake: protocol 2025-06-18, clientInfo thoughtgate, then notifications/initialized", async () => {
    await using client = scripted();
    const seen = collectNotifications(client);
    const result = await client.initialize();
    expect(result).toEqual({
      protocolVersion: "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "client-scripted-fixture", version: "1.0.0" },
    });
    const initialized = await waitFor(() => seen.find((n) => n.method === "fixture/initialized"), "notifications/initialized");
    expect(initialized.params).toEqual({
      initializeParams: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "thoughtgate", version: expect.any(String) } },
    });
  }, TEST_TIMEOUT_MS);
});

describe("process", () => {
  test("a command that cannot start throws SPAWN_FAILED", () => {
    expect(() => McpClient.start({ command: ["/nonexistent/thoughtgate-test-server"] })).toThrow(
      expect.objectContaining({ code: "SPAWN_FAILED", message: expect.stringContaining("/nonexistent/thoughtgate-test-server") }),
    );
  });

  test("THOUGHTGATE_* variables never reach the server", async () => {
    await using client = scripted({ env: { ...process.env, THOUGHTGATE_SESSION_SECRET: "s3cret", VISIBLE_TO_SERVER: "yes" } });
    expect(await client.request("env", { name: "THOUGHTGATE_SESSION_SECRET" })).toEqual({ value: null });
    expect(await client.request("env", { name: "VISIBLE_TO_SERVER" })).toEqual({ value: "yes" });
  }, TEST_TIMEOUT_MS);

  test("a server crash rejects every pending request, and later ones at once", async () => {
    const client = scripted();
    const waiting = client.request("never");
    const crashing = client.request("crash", { status: 3 });
    for (const error of [await rejectionOf(waiting), await rejectionOf(crashing)]) {
      expect(error).toBeInstanceOf(ConnectionClosedError);
      expect(error).toMatchObject({ code: "IO", reason: "exited", exitStatus: 3 });
    }
    expect((await rejectionOf(crashing)) as Error).toHaveProperty("message", "the server exited with status 3 before answering crash");
    expect(await rejectionOf(client.request("echo", {}))).toMatchObject({ reason: "exited", exitStatus: 3, method: "echo" });
    expect(() => client.notify("fixture/poke")).toThrow(ConnectionClosedError);
    await client.close(QUICK);
    expect(isAlive(client.pid)).toBe(false);
  }, TEST_TIMEOUT_MS);

  test("close() ends a well-behaved server by closing its stdin; pending requests are rejected", async () => {
    const client = scripted();
    await client.request("echo", {});
    const waiting = client.request("never");
    const exit = await client.close(QUICK);
    expect(exit).toEqual({ exitCode: 0, signal: null, escalation: "none" });
    expect(await rejectionOf(waiting)).toMatchObject({ reason: "closed", method: "never" });
    expect(await rejectionOf(client.request("echo", {}))).toBeInstanceOf(ConnectionClosedError);
    expect(isAlive(client.pid)).toBe(false);
    // Idempotent: a second close reports the same outcome.
    expect(await client.close(QUICK)).toEqual(exit);
  }, TEST_TIMEOUT_MS);

  test("close() escalates to SIGKILL for a server that ignores EOF and SIGTERM, and leaves no process behind", async () => {
    const marker = `client-stubborn-${Bun.randomUUIDv7()}`;
    const client = McpClient.start({ command: fixture("client-stubborn-fixture.ts", marker) });
    try {
      const { pid: childPid } = (await client.request("child")) as { pid: number };
      // The child's command line shows up in /proc a moment after its pid is known.
      await waitFor(() => processesWith(marker).length === 2, "the server and its child to run");
      expect(processesWith(marker).sort()).toEqual([client.pid, childPid].sort());
      const waiting = client.request("never");

      const exit = await client.close(QUICK);
      expect(exit).toEqual({ exitCode: null, signal: "SIGKILL", escalation: "sigkill" });
      expect(await rejectionOf(waiting)).toMatchObject({ reason: "closed" });
    } finally {
      // Idempotent: when an assertion above failed, this is the shutdown that was not reached.
      await client.close(QUICK);
    }
    expect(processesWith(marker)).toEqual([]);
  }, TEST_TIMEOUT_MS);
});
