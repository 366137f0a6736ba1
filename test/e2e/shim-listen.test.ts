/**
 * `thoughtgate shim --listen`: agents that speak only Streamable HTTP reach a governed server
 * through the shim. The real SDK client (its Streamable HTTP transport) against the compiled
 * binary, with server-everything on stdio behind it, and with a remote server (`--url`) behind it.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Subprocess } from "bun";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, EVERYTHING_SERVER, fixture, readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";

setDefaultTimeout(60_000);
requireBinary();

const TOKEN = "listen-token-0123456789";
const started: Array<Subprocess<"ignore", "ignore", "pipe">> = [];
const servers: HttpFixture[] = [];
afterEach(async () => {
  for (const proc of started.splice(0)) {
    if (proc.exitCode === null) proc.kill("SIGKILL");
    await proc.exited;
  }
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** Start `shim --listen 127.0.0.1:0 …` and read the URL it prints. */
async function listen(args: string[], env: Record<string, string | undefined> = { ...process.env, THOUGHTGATE_LISTEN_TOKEN: TOKEN }) {
  const proc = Bun.spawn([BINARY, "shim", "--listen", "127.0.0.1:0", ...args], { env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  started.push(proc);
  let stderr = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let url: string | undefined;
  while (url === undefined) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`shim exited before listening: ${stderr}`);
    stderr += decoder.decode(value, { stream: true });
    url = /shim listening on (\S+)/.exec(stderr)?.[1];
  }
  reader.releaseLock();
  void proc.stderr.pipeTo(new WritableStream()).catch(() => undefined);
  return { proc, url };
}

async function client(url: string, capabilities: { sampling?: object } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  const c = new Client({ name: "http-agent", version: "1" }, { capabilities });
  if (capabilities.sampling) c.setRequestHandler(CreateMessageRequestSchema, () => ({ model: "m", role: "assistant", content: { type: "text", text: "sampled" } }));
  await c.connect(transport);
  return { client: c, transport };
}

describe("an HTTP agent through shim --listen to a stdio server", () => {
  test("tools, progress, sampling on the request's stream, a 5 MiB payload, a denial, the audit; DELETE ends the shim", async () => {
    using dir = tempDir();
    const policy = join(dir.path, "policy.yaml");
    writeFileSync(policy, "schema: 1\ngovernance:\n  rules: [{ id: no-env, match: get-env, action: deny }]\n");
    const events = join(dir.path, "events.jsonl");
    const { proc, url } = await listen(["--server-id", "everything", "--events", events, "--thoughtgate-config", policy, "--", ...EVERYTHING_SERVER]);
    const { client: c, transport } = await client(url, { sampling: {} });
    expect(c.getServerVersion()?.name).toBe("mcp-servers/everything");
    expect((await c.callTool({ name: "echo", arguments: { message: "over http" } })).content).toEqual([{ type: "text", text: "Echo: over http" }]);

    const progress: number[] = [];
    await c.callTool({ name: "trigger-long-running-operation", arguments: { duration: 0.4, steps: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress.length).toBeGreaterThan(0);

    const sampled = await c.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    expect(JSON.stringify(sampled.content)).toContain("sampled");

    const big = "x".repeat(5 * 1024 * 1024);
    const echoed = await c.callTool({ name: "echo", arguments: { message: big } });
    expect(((echoed.content as Array<{ text: string }>)[0]?.text ?? "").length).toBe(big.length + "Echo: ".length);

    const denied = await c.callTool({ name: "get-env", arguments: {} }).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(McpError);
    expect((denied as McpError).code).toBe(-32014);

    await transport.terminateSession();
    expect(await proc.exited).toBe(0);
    const types = readEvents(events).filter((event) => event.type === "tool_call_decision").map((event) => [event.tool, event.decision]);
    expect(types).toEqual([
      ["echo", "forward"],
      ["trigger-long-running-operation", "forward"],
      ["trigger-sampling-request", "forward"],
      ["echo", "forward"],
      ["get-env", "deny"],
    ]);
  });

  test("without the token: 401; another Host or a cross-origin page: 403; /health answers without a token", async () => {
    const { url } = await listen(["--", ...EVERYTHING_SERVER]);
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${TOKEN}`, host: "evil.example:80" })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${TOKEN}`, origin: "http://evil.example" })).status).toBe(403);
    expect(await (await fetch(url.replace(/\/mcp$/, "/health"))).json()).toEqual({ status: "ok" });
  });

  test("refused before it starts: a non-loopback address, a missing or short token", async () => {
    const run = (args: string[], env: Record<string, string | undefined>) => Bun.spawnSync([BINARY, "shim", ...args, "--", "true"], { env });
    const outside = run(["--listen", "0.0.0.0:0"], { ...process.env, THOUGHTGATE_LISTEN_TOKEN: TOKEN });
    expect({ code: outside.exitCode, stderr: outside.stderr.toString() }).toMatchObject({ code: 2, stderr: expect.stringContaining("only a loopback address") });
    const noToken = run(["--listen", "127.0.0.1:0"], { ...process.env, THOUGHTGATE_LISTEN_TOKEN: undefined });
    expect({ code: noToken.exitCode, stderr: noToken.stderr.toString() }).toMatchObject({ code: 2, stderr: expect.stringContaining("--listen needs a token") });
  });
});

test("an HTTP agent through shim --listen --url to a remote server", async () => {
  const server = await startHttpFixture(fixture("sdk-http-server-fixture.ts"));
  servers.push(server);
  const { proc, url } = await listen(["--server-id", "remote", "--url", server.url]);
  const { client: c, transport } = await client(url);
  expect((await c.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })).content).toEqual([{ type: "text", text: "The sum of 2 and 40 is 42." }]);
  await transport.terminateSession();
  expect(await proc.exited).toBe(0);
});

/** One 2026-07-28 request over HTTP, as a stateless agent sends it: the answer read from the request's own stream. */
async function modernRequest(url: string, id: number, method: string, params: Record<string, unknown>) {
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } }),
  });
  expect(response.headers.get("mcp-session-id")).toBeNull();
  const text = await response.text();
  const answers = text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)) as { id?: number; result?: Record<string, unknown>; error?: { code: number; data?: Record<string, unknown> } });
  const answer = answers.find((a) => a.id === id);
  if (!answer) throw new Error(`no answer to ${method} in: ${text}`);
  return answer;
}

test("a 2026-07-28 agent through shim --listen to a 2026-07-28 stdio server: no session, each request on its own stream, governed as in the other era", async () => {
  using dir = tempDir();
  const policy = join(dir.path, "policy.yaml");
  writeFileSync(policy, "schema: 1\ngovernance:\n  rules: [{ id: no-delete, match: delete_note, action: deny }]\n");
  const events = join(dir.path, "events.jsonl");
  const { proc, url } = await listen(["--server-id", "notes", "--events", events, "--thoughtgate-config", policy, "--", ...fixture("tmcp-server-fixture.ts", "--era", "modern")]);
  const discovered = await modernRequest(url, 1, "server/discover", {});
  expect(discovered.result).toMatchObject({ supportedVersions: ["2026-07-28"] });
  const read = await modernRequest(url, 2, "tools/call", { name: "read_note", arguments: { id: "a" } });
  expect(read.result).toMatchObject({ content: [{ type: "text", text: "first note" }] });
  const denied = await modernRequest(url, 3, "tools/call", { name: "delete_note", arguments: { id: "a" } });
  expect(denied.error).toMatchObject({ code: -32014, data: { rule_id: "no-delete" } });
  // The note was not deleted: the server never saw the denied call.
  const again = await modernRequest(url, 4, "tools/call", { name: "read_note", arguments: { id: "a" } });
  expect(again.result).toMatchObject({ content: [{ type: "text", text: "first note" }] });
  proc.kill("SIGTERM");
  await proc.exited;
  const decisions = readEvents(events).filter((event) => event.type === "tool_call_decision").map((event) => [event.tool, event.decision]);
  expect(decisions).toEqual([
    ["read_note", "forward"],
    ["delete_note", "deny"],
    ["read_note", "forward"],
  ]);
});
