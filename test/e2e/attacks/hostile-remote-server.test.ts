/**
 * Attacks by a remote MCP server (or whatever answers at its URL) on `thoughtgate shim --url`:
 * a redirect that would carry the agent's traffic and credential to another origin, and messages
 * that break the framing rules a stdio server is held to (too large, not UTF-8, a key twice).
 */
import { afterEach, beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { BINARY, fixture, readEvents, tempDir, waitFor } from "../../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../../support/http-fixture.ts";
import { RawAgent } from "../../support/raw-agent.ts";

setDefaultTimeout(30_000);

let server: HttpFixture;
let dir: ReturnType<typeof tempDir>;
let agent: RawAgent | null = null;

beforeEach(async () => {
  dir = tempDir("thoughtgate-remote-attack-");
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

async function initialized(...extra: string[]): Promise<RawAgent> {
  agent = new RawAgent(["--server-id", "hostile", "--events", join(dir.path, "events.jsonl"), "--url", server.url, ...extra], { ...process.env, REMOTE_TOKEN: "secret-token-123" });
  await agent.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
  return agent;
}

const framingEvents = () => readEvents(join(dir.path, "events.jsonl")).filter((event) => event.type === "framing_error");

test("a 307 to another origin is refused: the call and the bearer token never reach it", async () => {
  const a = await initialized("--bearer-token-env", "REMOTE_TOKEN");
  const answer = await a.request(1, "tools/call", { name: "redirect", arguments: {} });
  expect(answer.error?.code).toBe(-31001);
  expect(answer.error?.message).toMatch(/redirect to another origin \(http:\/\/127\.0\.0\.1:\d+\) refused/);
  const log = (await (await fetch(new URL("/log", server.url))).json()) as Array<{ kind: string }>;
  expect(log.filter((entry) => entry.kind === "elsewhere")).toEqual([]);
});

test("an SSE event over 10 MiB is rejected unread (MessageTooLarge) and the call answered", async () => {
  const a = await initialized();
  const answer = await a.request(1, "tools/call", { name: "oversize", arguments: {} });
  expect(answer.error?.code).toBe(-31002);
  expect(answer.error?.data).toMatchObject({ gate: "framing", reason: "MessageTooLarge" });
  expect(await a.close()).toBe(0);
  // One rejection, one answer: the call is not answered a second time as a stream without an answer.
  expect(framingEvents().map((event) => event.error)).toEqual(["MessageTooLarge"]);
});

test("an SSE event that is not valid UTF-8 is rejected, not repaired", async () => {
  const a = await initialized();
  const answer = await a.request(1, "tools/call", { name: "bad_utf8", arguments: {} });
  expect(answer.error).toMatchObject({ code: -31002, data: { reason: "InvalidUtf8" } });
  const logged = await waitFor(() => (framingEvents().length > 0 ? framingEvents() : null), "the framing_error event");
  expect(logged.map((event) => event.error)).toEqual(["InvalidUtf8"]);
});

test("an SSE event id no header can carry (outside Latin-1), then the stream closed: the call is answered with an error, not left waiting", async () => {
  const a = await initialized();
  const answer = await a.request(1, "tools/call", { name: "bad_event_id", arguments: {} });
  expect(answer.error).toMatchObject({ data: { gate: "transport" } });
  expect(answer.error?.message).toContain("its event id cannot be sent back");
  // The shim goes on serving.
  expect((await a.request(2, "ping", {})).result).toEqual({});
});

test("a JSON answer with a key twice (two different contents) is rejected: the agent cannot be shown one and the audit another", async () => {
  const a = await initialized();
  const answer = await a.request(1, "tools/call", { name: "dupkey", arguments: {} });
  expect(answer.error).toMatchObject({ code: -31002, data: { reason: "DuplicateKey" } });
});

test("plain http to a host that is not loopback is refused before anything is sent", async () => {
  const proc = Bun.spawn([BINARY, "shim", "--url", "http://mcp.example.com/mcp"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  expect(await proc.exited).toBe(2);
  expect(await new Response(proc.stderr).text()).toContain("plain http is refused for a host that is not loopback");
});
