/**
 * OTLP traces through the compiled binary (docs/governance.md, "Traces"): a standalone shim whose
 * policy has `telemetry.otlp` exports its spans with the real exporter to a loopback collector
 * that decodes them (test/support/fake-otlp-collector.ts). The agent is raw bytes, so the tests
 * see exactly what the server got; the server records every line it receives.
 */
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { argsHash } from "../../src/core/canonical-json.ts";
import { FakeOtlpCollector, type DecodedSpan } from "../support/fake-otlp-collector.ts";
import { fixture, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { startHttpFixture } from "../support/http-fixture.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(60_000);
requireBinary();

const AGENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const AGENT_SPAN = "b7ad6b7169203331";
const OTLP_TOKEN = "otlp-token-7c1e9b";
const INITIALIZE = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "traced-agent", version: "1" } };

const dir = tempDir();
const agents: RawAgent[] = [];
const collectors: FakeOtlpCollector[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) {
    if (agent.proc.exitCode === null) agent.proc.kill("SIGKILL");
    await agent.exit();
  }
  for (const collector of collectors.splice(0)) await collector.stop();
});
afterAll(() => dir[Symbol.dispose]());

/** The environment without anything of the test runner's own tracing, and a short batch delay. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("OTEL_") && key !== "TRACEPARENT" && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  return { ...env, OTEL_BSP_SCHEDULE_DELAY: "50", OTLP_TOKEN, ...extra };
}

function collector(): FakeOtlpCollector {
  const started = new FakeOtlpCollector();
  collectors.push(started);
  return started;
}

let policies = 0;
/** A shim in front of the scripted server (recording what it receives) with this policy. */
function tracedShim(policy: string, env: Record<string, string> = cleanEnv()): { agent: RawAgent; received: () => string[] } {
  const file = join(dir.path, `policy-${++policies}.yaml`);
  const record = join(dir.path, `received-${policies}.jsonl`);
  writeFileSync(file, policy);
  writeFileSync(record, "");
  const agent = new RawAgent(["--server-id", "scripted", "--events", "none", "--thoughtgate-config", file, "--", ...fixture("scripted-server-fixture.ts", "--record", record)], env);
  agents.push(agent);
  return { agent, received: () => readFileSync(record, "utf8").split("\n").filter((line) => line.length > 0 && line !== "<EOF>") };
}

const telemetry = (endpoint: string) => `telemetry:\n  otlp:\n    endpoint: "${endpoint}"\n    headers: { authorization: "Bearer \${OTLP_TOKEN}" }\n`;
const POLICY = (endpoint: string) => `schema: 1\ngovernance:\n  rules: [{ id: no-env, match: env, action: deny }]\n${telemetry(endpoint)}`;

const named = (spans: DecodedSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: DecodedSpan[], predicate: (span: DecodedSpan) => boolean, what: string): DecodedSpan => {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${JSON.stringify(spans.map((span) => span.name))}`);
  return found[0] as DecodedSpan;
};
const childrenOf = (spans: DecodedSpan[], parent: DecodedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);

describe("a standalone shim with telemetry.otlp", () => {
  test("a governed session's spans: the session, each request under the agent's trace or the session, the decision with its gates, the call to the server", async () => {
    const otlp = collector();
    const { agent, received } = tracedShim(POLICY(otlp.endpoint));
    await agent.request(1, "initialize", INITIALIZE);
    // Spaced oddly, a number past double precision, and the agent's own traceparent, tracestate and flags: written as raw bytes.
    const echoLine = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{ "name":"echo" ,"arguments":{"n":12345678901234567890,"note":"x"},"_meta":{"traceparent":"00-${AGENT_TRACE}-${AGENT_SPAN}-01","tracestate":"vendor=1"}}}`;
    agent.write(`${echoLine}\n`);
    const echoed = (await agent.until(3)).match;
    expect(echoed.result.content[0].text).toBe('{"n":12345678901234567000,"note":"x"}');
    const denied = await agent.request(4, "tools/call", { name: "env", arguments: {} });
    expect(denied.error?.code).toBe(-32014);
    expect(await agent.close()).toBe(0);

    const spans = await otlp.until((all) => named(all, "thoughtgate shim").length === 1, "the session span");
    expect(otlp.problems).toEqual([]);
    const session = one(spans, (span) => span.name === "thoughtgate shim", "session span");
    expect(session).toMatchObject({ parentSpanId: null, kind: "internal", attributes: { "thoughtgate.server_id": "scripted", "thoughtgate.profile": "production" } });
    expect(session.resource).toMatchObject({ "service.name": "thoughtgate", "thoughtgate.component": "shim", "thoughtgate.server_id": "scripted" });

    // The echo call continues the agent's trace, and links the session (the ambient context).
    const echo = one(spans, (span) => span.name === "tools/call echo" && span.kind === "server", "server span of echo");
    expect(echo).toMatchObject({ traceId: AGENT_TRACE, parentSpanId: AGENT_SPAN, links: [{ traceId: session.traceId, spanId: session.spanId }], status: { code: "unset" } });
    expect(echo.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "3",
      "mcp.protocol.version": "2025-06-18",
      "network.transport": "pipe",
      "thoughtgate.server_id": "scripted",
      "thoughtgate.profile": "production",
      "thoughtgate.run_id": expect.any(String),
      "thoughtgate.args_hash": argsHash({ n: 12345678901234567890, note: "x" }),
      "thoughtgate.decision": "forward",
      "thoughtgate.gate": "rules",
      "thoughtgate.rule_id": "defaults",
      "thoughtgate.reason": "rule defaults: forward",
    });
    // The gates are events of the request's span; the call to the server is its one child.
    expect(childrenOf(spans, echo).map((span) => [span.name, span.kind])).toEqual([["tools/call echo", "client"]]);
    const client = one(childrenOf(spans, echo), (span) => span.kind === "client", "client span");
    expect(echo.events.map((event) => [event.name, event.attributes])).toEqual([
      ["thoughtgate.gate.visibility", { "thoughtgate.gate.result": "pass" }],
      ["thoughtgate.gate.rules", { "thoughtgate.gate.result": "forward", "thoughtgate.rule_id": "defaults" }],
    ]);
    expect(client).toMatchObject({ name: "tools/call echo", traceId: AGENT_TRACE, attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "network.transport": "pipe" } });
    expect(client.startNs >= echo.startNs && client.endNs <= echo.endNs).toBe(true);

    // The server got the agent's bytes with one change: our client span's context in place of the agent's.
    const forwarded = received().find((line) => line.includes('"id":3'));
    expect(forwarded).toBe(echoLine.replace(`00-${AGENT_TRACE}-${AGENT_SPAN}-01`, `00-${AGENT_TRACE}-${client.spanId}-01`));

    // Without a traceparent, the request hangs under the session's span; the deny is an error with its code.
    const env = one(spans, (span) => span.name === "tools/call env", "span of env");
    expect(env).toMatchObject({ traceId: session.traceId, parentSpanId: session.spanId, links: [], status: { code: "error", message: "ThoughtGate blocked tools/call env: rule no-env: deny" } });
    expect(env.attributes).toMatchObject({ "thoughtgate.decision": "deny", "thoughtgate.gate": "rules", "thoughtgate.rule_id": "no-env", "error.type": "-32014", "rpc.response.status_code": "-32014" });
    expect(childrenOf(spans, env)).toEqual([]);
    expect(env.events.map((event) => event.name)).toEqual(["thoughtgate.gate.visibility", "thoughtgate.gate.rules"]);
    expect(received().some((line) => line.includes('"env"'))).toBe(false);

    // The policy's headers reach the collector as headers, and nowhere in the spans.
    expect(otlp.requests.every((request) => request.headers.authorization === `Bearer ${OTLP_TOKEN}` && request.contentType === "application/json")).toBe(true);
    expect(JSON.stringify(spans, (_, value) => (typeof value === "bigint" ? String(value) : value))).not.toContain(OTLP_TOKEN);
  });

  test("the time a person takes to approve is a span of its own, under the call it held", async () => {
    const otlp = collector();
    const { agent } = tracedShim(`schema: 1\ngovernance:\n  rules: [{ id: ask-echo, match: echo, action: approve }]\n${telemetry(otlp.endpoint)}`);
    await agent.request(1, "initialize", { ...INITIALIZE, capabilities: { elicitation: {} } });
    agent.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { a: 1 } } });
    const ask = await agent.next();
    expect(ask.method).toBe("elicitation/create");
    await personReads();
    agent.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { decision: "once" } } });
    expect((await agent.until(2)).match.result.content[0].text).toBe('{"a":1}');
    expect(await agent.close()).toBe(0);

    const spans = await otlp.until((all) => named(all, "thoughtgate shim").length === 1, "the session span");
    const call = one(spans, (span) => span.name === "tools/call echo" && span.kind === "server", "server span");
    expect(call.attributes).toMatchObject({ "thoughtgate.decision": "forward", "thoughtgate.gate": "approval", "thoughtgate.rule_id": "ask-echo", "thoughtgate.approved_by": "elicitation" });
    const wait = one(childrenOf(spans, call), (span) => span.name === "thoughtgate.approval", "approval span");
    expect(wait.attributes).toMatchObject({ "thoughtgate.approval.outcome": "approved", "thoughtgate.approved_by": "elicitation" });
    expect(call.events.map((event) => event.name)).toEqual(["thoughtgate.gate.visibility", "thoughtgate.gate.rules", "thoughtgate.gate.approval"]);
    const client = one(childrenOf(spans, call), (span) => span.kind === "client", "client span");
    // The person answered before the call went to the server.
    expect(wait.startNs >= call.startNs && wait.endNs <= client.startNs).toBe(true);
  });

  test("the standard OTEL_EXPORTER_OTLP_* variables: endpoint and headers from the environment, the policy's empty otlp turning it on", async () => {
    const otlp = collector();
    const { agent } = tracedShim("schema: 1\ntelemetry: { otlp: {} }\n", cleanEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=k-env-1", OTEL_SERVICE_NAME: "tg-laptop" }));
    await agent.request(1, "initialize", INITIALIZE);
    await agent.request(2, "tools/call", { name: "echo", arguments: {} });
    expect(await agent.close()).toBe(0);
    const spans = await otlp.until((all) => named(all, "thoughtgate shim").length === 1, "the session span");
    expect(named(spans, "tools/call echo").length).toBe(2);
    expect(spans.every((span) => span.resource["service.name"] === "tg-laptop")).toBe(true);
    expect(otlp.requests[0]?.headers["x-collector-key"]).toBe("k-env-1");
  });
});

describe("a remote server (shim --url)", () => {
  test("the MCP SDK's Streamable HTTP server answers the call carrying the shim's context; the client span names the server", async () => {
    const otlp = collector();
    const server = await startHttpFixture(fixture("sdk-http-server-fixture.ts", "--json"));
    try {
      const file = join(dir.path, `policy-${++policies}.yaml`);
      writeFileSync(file, `schema: 1\n${telemetry(otlp.endpoint)}`);
      const agent = new RawAgent(["--server-id", "remote", "--events", "none", "--thoughtgate-config", file, "--url", server.url], cleanEnv());
      agents.push(agent);
      await agent.request(1, "initialize", INITIALIZE);
      const answer = await agent.request(2, "tools/call", { name: "echo", arguments: { message: "over http" }, _meta: { traceparent: `00-${AGENT_TRACE}-${AGENT_SPAN}-01` } });
      expect(answer.result.content[0].text).toBe("Echo: over http");
      expect(await agent.close()).toBe(0);
      const spans = await otlp.until((all) => named(all, "thoughtgate shim").length === 1, "the session span");
      const call = one(spans, (span) => span.kind === "server" && span.name === "tools/call echo", "server span");
      const client = one(childrenOf(spans, call), (span) => span.kind === "client", "client span");
      const port = Number(new URL(server.url).port);
      expect(client.attributes).toMatchObject({ "network.transport": "tcp", "server.address": "127.0.0.1", "server.port": port });
      expect(call.attributes["network.transport"]).toBe("pipe");
      expect(call.traceId).toBe(AGENT_TRACE);
    } finally {
      await server.stop();
    }
  });
});

describe("a collector that is down or stuck costs spans, never a call", () => {
  test("nothing listening: every call answers as without tracing; one line says export failed, one at exit how many spans were lost", async () => {
    const closed = collector();
    const endpoint = closed.endpoint;
    await closed.stop();
    // The exporter's own timeout (10 s by default, retries included), shortened by its standard variable.
    const traced = tracedShim(POLICY(endpoint), cleanEnv({ OTEL_EXPORTER_OTLP_TIMEOUT: "300" }));
    const plain = tracedShim("schema: 1\ngovernance:\n  rules: [{ id: no-env, match: env, action: deny }]\n");
    const answers: unknown[][] = [[], []];
    for (const [i, { agent }] of [traced, plain].entries()) {
      await agent.request(1, "initialize", INITIALIZE);
      for (let id = 2; id < 12; id++) {
        const answer = await agent.request(id, "tools/call", { name: id % 2 === 0 ? "echo" : "env", arguments: { id } });
        answers[i]?.push(answer.result ?? answer.error?.code);
      }
    }
    expect(answers[0]).toEqual(answers[1] as unknown[]);
    await waitFor(() => traced.agent.stderr.includes("failed ("), "the export failure to be reported");
    expect(await traced.agent.close()).toBe(0);
    const lines = traced.agent.stderr.split("\n").filter((line) => line.includes("OTLP export"));
    expect(lines.length).toBe(2);
    expect(lines[0]).toContain(`OTLP export to ${endpoint}/v1/traces failed (`);
    expect(lines[0]).toContain("spans are dropped and counted until it works again");
    expect(lines[1]).toMatch(/span\(s\) were not exported \(.*export failed: \d+/);
    expect(await plain.agent.close()).toBe(0);
  });

  test("a collector that accepts and never answers: calls are not held, and the shim still exits within its flush budget", async () => {
    const stuck = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const { agent } = tracedShim(POLICY(`http://127.0.0.1:${stuck.port}`));
      await agent.request(1, "initialize", INITIALIZE);
      for (let id = 2; id < 6; id++) expect((await agent.request(id, "tools/call", { name: "echo", arguments: { id } })).result.content[0].text).toBe(`{"id":${id}}`);
      expect(await agent.close()).toBe(0);
      expect(agent.stderr).toMatch(/span\(s\) were not exported \(.*shutdown: \d+/);
    } finally {
      stuck.stop(true);
    }
  });
});

describe("where spans may go", () => {
  test("a collector elsewhere over plain http, or gRPC, is refused at start with one line, before any call", async () => {
    for (const [env, message] of [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.example:4318" }, "$OTEL_EXPORTER_OTLP_ENDPOINT: OTLP traces go only to an https:// URL, or http:// to 127.0.0.1, [::1] or localhost, without user:password@ (got http://collector.example:4318/v1/traces)"],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "$OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ThoughtGate exports OTLP traces over HTTP (http/json)"],
    ] as const) {
      const { agent } = tracedShim("schema: 1\ntelemetry: { otlp: {} }\n", cleanEnv(env));
      expect(await agent.exit()).toBe(1);
      expect(agent.stderr).toContain(message);
    }
  });

  test("tracing off: the server gets the agent's bytes exactly, traceparent and all", async () => {
    const { agent, received } = tracedShim("schema: 1\n");
    await agent.request(1, "initialize", INITIALIZE);
    const line = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":"00-${AGENT_TRACE}-${AGENT_SPAN}-01"}}}`;
    agent.write(`${line}\n`);
    await agent.until(2);
    await waitFor(() => received().some((seen) => seen.includes('"id":2')), "the server to record the call");
    expect(received().find((seen) => seen.includes('"id":2'))).toBe(line);
    expect(await agent.close()).toBe(0);
  });
});
