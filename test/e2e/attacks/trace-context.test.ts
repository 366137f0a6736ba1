/**
 * Attacks on tracing (docs/governance.md, "Traces"): a prompt-injected agent that tries to keep its
 * calls out of the trace or to hand the server a context of its choosing, credentials that would
 * ride along in span attributes to the collector (the agent's arguments, a resource URI, a hostile
 * server's error message), and forged or oversized spans posted to the governance service's relay.
 * Each runs the compiled binary against a loopback collector that decodes what the exporter sent.
 */
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeOtlpCollector, type DecodedSpan } from "../../support/fake-otlp-collector.ts";
import { fixture, requireBinary, tempDir } from "../../support/harness.ts";
import { b64, RawAgent } from "../../support/raw-agent.ts";
import { ServeProcess } from "../../support/serve.ts";

setDefaultTimeout(60_000);
requireBinary();

const INITIALIZE = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attacker", version: "1" } };
const dir = tempDir();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => dir[Symbol.dispose]());

function env(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("OTEL_") && key !== "TRACEPARENT" && !key.startsWith("THOUGHTGATE_")) out[key] = value;
  return { ...out, OTEL_BSP_SCHEDULE_DELAY: "50" };
}

let runs = 0;
async function tracedSession(): Promise<{ otlp: FakeOtlpCollector; agent: RawAgent; received: () => Array<Record<string, any>> }> {
  const otlp = new FakeOtlpCollector();
  cleanups.push(() => otlp.stop());
  const policy = join(dir.path, `policy-${++runs}.yaml`);
  const record = join(dir.path, `received-${runs}.jsonl`);
  writeFileSync(policy, `schema: 1\ntelemetry: { otlp: { endpoint: "${otlp.endpoint}" } }\n`);
  writeFileSync(record, "");
  const agent = new RawAgent(["--server-id", "scripted", "--events", "none", "--thoughtgate-config", policy, "--", ...fixture("scripted-server-fixture.ts", "--record", record)], env());
  cleanups.push(async () => {
    if (agent.proc.exitCode === null) agent.proc.kill("SIGKILL");
    await agent.exit();
  });
  await agent.request(1, "initialize", INITIALIZE);
  const received = () => readFileSync(record, "utf8").split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, any>);
  return { otlp, agent, received };
}

const sessionSpans = (otlp: FakeOtlpCollector) => otlp.until((spans) => spans.some((span) => span.name === "thoughtgate shim"), "the session span");
const serverSpan = (spans: DecodedSpan[], id: string) => spans.find((span) => span.kind === "server" && span.attributes["jsonrpc.request.id"] === id);
const clientSpanUnder = (spans: DecodedSpan[], parent: DecodedSpan | undefined) => spans.find((span) => span.kind === "client" && span.parentSpanId === parent?.spanId);

describe("an agent cannot steer the trace", () => {
  test("a traceparent flagged unsampled (-00) does not keep the call out of the trace; the server is told it is sampled", async () => {
    const { otlp, agent, received } = await tracedSession();
    const trace = "5e0a7f3c9d2b4a6e8f1c3b5d7a9e0f21";
    await agent.request(2, "tools/call", { name: "echo", arguments: { rm: "-rf /" }, _meta: { traceparent: `00-${trace}-1a2b3c4d5e6f7081-00` } });
    expect(await agent.close()).toBe(0);
    const spans = await sessionSpans(otlp);
    const call = serverSpan(spans, "2");
    expect(call).toMatchObject({ traceId: trace, parentSpanId: "1a2b3c4d5e6f7081", attributes: { "thoughtgate.decision": "forward" } });
    const client = clientSpanUnder(spans, call);
    expect(received().find((line) => line.id === 2)?.params._meta.traceparent).toBe(`00-${trace}-${client?.spanId}-01`);
  });

  test("a malformed, zero or oversized traceparent is not continued: the call starts under the session, and the server gets the shim's context, not the agent's text", async () => {
    const { otlp, agent, received } = await tracedSession();
    const forged = [
      `00-${"0".repeat(32)}-1a2b3c4d5e6f7081-01`,
      "00-5E0A7F3C9D2B4A6E8F1C3B5D7A9E0F21-1a2b3c4d5e6f7081-01",
      `cc-5e0a7f3c9d2b4a6e8f1c3b5d7a9e0f21-1a2b3c4d5e6f7081-01-${"x".repeat(400)}`,
      "00-5e0a7f3c9d2b4a6e8f1c3b5d7a9e0f21-1a2b3c4d5e6f7081-01\r\ninjected: header",
    ];
    for (const [i, traceparent] of forged.entries()) await agent.request(10 + i, "tools/call", { name: "echo", arguments: {}, _meta: { traceparent } });
    expect(await agent.close()).toBe(0);
    const spans = await sessionSpans(otlp);
    const session = spans.find((span) => span.name === "thoughtgate shim");
    for (let i = 0; i < forged.length; i++) {
      const call = serverSpan(spans, String(10 + i));
      expect(call).toMatchObject({ traceId: session?.traceId, parentSpanId: session?.spanId, links: [] });
      const sent = received().find((line) => line.id === 10 + i)?.params._meta.traceparent;
      expect(sent).toBe(`00-${session?.traceId}-${clientSpanUnder(spans, call)?.spanId}-01`);
    }
    expect(JSON.stringify(spans, (_, value) => (typeof value === "bigint" ? String(value) : value))).not.toContain("injected");
  });
});

describe("credentials never reach a span", () => {
  test("secrets in the arguments, a resource URI's password and key, and a hostile server's error message are not in any attribute, event or status", async () => {
    const { otlp, agent } = await tracedSession();
    await agent.request(2, "tools/call", { name: "echo", arguments: { api_key: "sk-live-args-4242", headers: { Authorization: "Bearer tok-args-7777" } } });
    await agent.request(3, "resources/read", { uri: "postgres://admin:pw-uri-hunter2@db.example/app?api_key=qk-uri-5151" });
    const hostile = `{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"upstream refused Authorization: Bearer tok-server-9191 (password=pw-server-8888)"}}\n`;
    const answer = await agent.request(4, "tools/call", { name: "emit", arguments: { b64: b64(hostile) } });
    expect(answer.error?.code).toBe(-32000);
    expect(await agent.close()).toBe(0);
    const spans = await sessionSpans(otlp);
    const text = JSON.stringify(spans, (_, value) => (typeof value === "bigint" ? String(value) : value));
    for (const secret of ["sk-live-args-4242", "tok-args-7777", "pw-uri-hunter2", "qk-uri-5151", "tok-server-9191", "pw-server-8888"]) expect(text).not.toContain(secret);
    // What is there instead: the URI without its credentials, and the server's error, redacted.
    expect(serverSpan(spans, "3")?.attributes["mcp.resource.uri"]).toBe("postgres://admin:[REDACTED:url_password]@db.example/app?api_key=[REDACTED:secret_field]");
    expect(serverSpan(spans, "4")?.status).toEqual({ code: "error", message: "upstream refused Authorization: [REDACTED:authorization_header]" });
    expect(serverSpan(spans, "4")?.attributes["error.type"]).toBe("-32000");
  });
});

describe("the governance service's span relay", () => {
  test("spans posted without the session secret are refused, and a batch past the bounds is refused whole; none reach the collector", async () => {
    const otlp = new FakeOtlpCollector();
    cleanups.push(() => otlp.stop());
    const policy = join(dir.path, "serve-relay.yaml");
    writeFileSync(policy, `schema: 1\ntelemetry: { otlp: { endpoint: "${otlp.endpoint}" } }\n`);
    const serve = await ServeProcess.start(["--thoughtgate-config", policy], { env: env() });
    cleanups.push(() => serve.stop());
    const span = (name: string, attributes: Record<string, unknown> = {}) => ({
      traceId: "5e0a7f3c9d2b4a6e8f1c3b5d7a9e0f21", spanId: "1a2b3c4d5e6f7081", parentSpanId: null, name, kind: "internal",
      startMs: 1, endMs: 2, attributes, events: [], links: [], status: { code: "unset" },
    });
    const post = (body: unknown, secret: string | null) =>
      fetch(`${serve.endpoint}/governance/spans`, { method: "POST", headers: { "content-type": "application/json", ...(secret ? { authorization: `Bearer ${secret}` } : {}) }, body: JSON.stringify(body) });
    expect((await post({ server_id: "x", spans: [span("forged")] }, null)).status).toBe(401);
    expect((await post({ server_id: "x", spans: [span("forged")] }, "0".repeat(64))).status).toBe(401);
    expect((await post({ server_id: "x", spans: Array.from({ length: 129 }, () => span("flood")) }, serve.secret)).status).toBe(400);
    expect((await post({ server_id: "x", spans: [span("huge", { blob: "x".repeat(600) })] }, serve.secret)).status).toBe(400);
    expect((await post({ server_id: "x", spans: [span("bad id", {})].map((s) => ({ ...s, traceId: "not-hex" })) }, serve.secret)).status).toBe(400);
    // The one well-formed batch from the secret's holder goes out, attributed to a shim.
    expect((await post({ server_id: "x", spans: [span("accepted")] }, serve.secret)).status).toBe(200);
    const spans = await otlp.until((all) => all.some((s) => s.name === "accepted"), "the accepted span");
    expect(spans.find((s) => s.name === "accepted")?.resource).toMatchObject({ "thoughtgate.component": "shim", "thoughtgate.server_id": "x" });
    expect(spans.map((s) => s.name)).not.toContain("forged");
    expect(spans.map((s) => s.name)).not.toContain("flood");
    expect(spans.map((s) => s.name)).not.toContain("huge");
  });
});
