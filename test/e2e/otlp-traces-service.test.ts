/**
 * OTLP traces of a governance service and its shims through the compiled binary (docs/governance.md,
 * "Traces"): `thoughtgate wrap` exports one trace per session (the service's span, each shim's
 * session span under it, the calls under those, the service's decision spans under the shims'),
 * the shims' spans relayed through the service; `thoughtgate serve` counts what it could not
 * export in `/metrics`. The collector decodes what the real exporter sent.
 */
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeOtlpCollector, type DecodedSpan } from "../support/fake-otlp-collector.ts";
import { fixture, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { ServeProcess } from "../support/serve.ts";

setDefaultTimeout(90_000);
requireBinary();

const AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN = "00f067aa0ba902b7";
const OTLP_TOKEN = "otlp-token-wrap-5d2a";

const dir = tempDir();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => dir[Symbol.dispose]());

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("OTEL_") && key !== "TRACEPARENT" && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  return { ...env, OTEL_BSP_SCHEDULE_DELAY: "50", OTLP_TOKEN, ...extra };
}

const policy = (endpoint: string) =>
  `schema: 1\ngovernance:\n  rules: [{ id: no-env, match: env, action: deny }]\ntelemetry:\n  otlp:\n    endpoint: "${endpoint}"\n    headers: { authorization: "Bearer \${OTLP_TOKEN}" }\n`;

const one = (spans: DecodedSpan[], predicate: (span: DecodedSpan) => boolean, what: string): DecodedSpan => {
  const found = spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${JSON.stringify(spans.map((span) => [span.name, span.attributes["jsonrpc.request.id"]]))}`);
  return found[0] as DecodedSpan;
};
const childOf = (spans: DecodedSpan[], parent: DecodedSpan, name: string) => one(spans, (span) => span.parentSpanId === parent.spanId && span.name === name, `${name} under ${parent.name}`);

describe("thoughtgate wrap with telemetry.otlp: one trace per session", () => {
  test("the service's span, each shim's under it, the calls under the shim's, the service's decisions under the calls, the agent's trace continued to the server", async () => {
    const otlp = new FakeOtlpCollector();
    cleanups.push(() => otlp.stop());
    const policyFile = join(dir.path, "wrap-policy.yaml");
    const config = join(dir.path, "mcp.json");
    const report = join(dir.path, "report.json");
    const record = join(dir.path, "wrap-received.jsonl");
    writeFileSync(policyFile, policy(otlp.endpoint));
    writeFileSync(record, "");
    writeFileSync(config, JSON.stringify({ mcpServers: { scripted: { command: process.execPath, args: [fixture("scripted-server-fixture.ts")[1], "--record", record] } } }));
    const wrap = Bun.spawn(
      [requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--thoughtgate-config", policyFile, "--",
        ...fixture("wrap-agent-fixture.ts", config, report, "--call", 'echo:{"plain":1}', "--traceparent", `00-${AGENT_TRACE}-${AGENT_SPAN}-01`, "--call", 'echo:{"traced":2}', "--call", "env")],
      { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: cleanEnv() },
    );
    cleanups.push(async () => {
      if (wrap.exitCode === null) wrap.kill("SIGKILL");
      await wrap.exited;
    });
    const stderr = new Response(wrap.stderr).text();
    expect(await wrap.exited).toBe(0);
    const results = JSON.parse(readFileSync(report, "utf8")).results;
    expect(results.echo).toEqual({ ok: [{ type: "text", text: '{"traced":2}' }] });
    expect(results.env.code).toBe(-32014);

    const spans = await otlp.until((all) => all.some((span) => span.name === "thoughtgate wrap"), "the session's span");
    expect(otlp.problems).toEqual([]);
    const session = one(spans, (span) => span.name === "thoughtgate wrap", "wrap span");
    expect(session.parentSpanId).toBeNull();
    expect(session.resource).toMatchObject({ "service.name": "thoughtgate", "thoughtgate.component": "wrap" });
    const shim = childOf(spans, session, "thoughtgate shim");
    expect(shim.traceId).toBe(session.traceId);
    expect(shim.resource).toMatchObject({ "thoughtgate.component": "shim", "thoughtgate.server_id": "scripted" });
    // Everything but the call the agent traced itself is in the session's trace.
    expect(spans.filter((span) => span.traceId !== session.traceId).every((span) => span.traceId === AGENT_TRACE)).toBe(true);

    const calls = spans.filter((span) => span.kind === "server" && span.name.startsWith("tools/call"));
    expect(calls.map((span) => span.name).sort()).toEqual(["tools/call echo", "tools/call echo", "tools/call env"]);
    const plain = calls.find((span) => span.traceId === session.traceId && span.name === "tools/call echo") as DecodedSpan;
    expect(plain.parentSpanId).toBe(shim.spanId);
    // The service decided: its span (the service's resource) hangs under the shim's and carries the gates.
    const evaluate = childOf(spans, plain, "thoughtgate.evaluate");
    expect(evaluate.resource["thoughtgate.component"]).toBe("wrap");
    expect(evaluate.kind).toBe("server");
    expect(evaluate.attributes).toMatchObject({ "mcp.method.name": "tools/call", "thoughtgate.server_id": "scripted", "thoughtgate.decision": "forward", "thoughtgate.rule_id": "defaults" });
    expect(evaluate.events.map((event) => event.name)).toEqual(["thoughtgate.gate.visibility", "thoughtgate.gate.rules"]);
    childOf(spans, plain, "tools/call echo");

    const traced = calls.find((span) => span.traceId === AGENT_TRACE) as DecodedSpan;
    expect(traced).toMatchObject({ parentSpanId: AGENT_SPAN, links: [{ traceId: session.traceId, spanId: shim.spanId }] });
    const tracedClient = childOf(spans, traced, "tools/call echo");
    const forwarded = readFileSync(record, "utf8").split("\n").find((line) => line.includes('"traced"'));
    expect(JSON.parse(forwarded ?? "{}").params._meta.traceparent).toBe(`00-${AGENT_TRACE}-${tracedClient.spanId}-01`);
    expect(childOf(spans, traced, "thoughtgate.evaluate").traceId).toBe(AGENT_TRACE);

    const env = one(calls, (span) => span.name === "tools/call env", "call of env");
    expect(env.attributes).toMatchObject({ "thoughtgate.decision": "deny", "error.type": "-32014" });
    expect(childOf(spans, env, "thoughtgate.evaluate").attributes).toMatchObject({ "thoughtgate.decision": "deny", "error.type": "-32014" });

    expect(JSON.stringify(spans, (_, value) => (typeof value === "bigint" ? String(value) : value))).not.toContain(OTLP_TOKEN);
    expect(await stderr).not.toContain("OTLP export");
  });
});

describe("thoughtgate serve with telemetry.otlp and its collector down", () => {
  test("calls through its shims are answered as usual, and /metrics counts the spans it could not export", async () => {
    const closed = new FakeOtlpCollector();
    const endpoint = closed.endpoint;
    await closed.stop();
    const policyFile = join(dir.path, "serve-policy.yaml");
    writeFileSync(policyFile, policy(endpoint));
    const env = cleanEnv({ OTEL_EXPORTER_OTLP_TIMEOUT: "300" });
    const serve = await ServeProcess.start(["--thoughtgate-config", policyFile], { env });
    cleanups.push(() => serve.stop());
    const agent = new RawAgent(["--server-id", "scripted", "--events", "none", "--governance-endpoint", serve.endpoint, "--", ...fixture("scripted-server-fixture.ts")], { ...env, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret });
    cleanups.push(async () => {
      if (agent.proc.exitCode === null) agent.proc.kill("SIGKILL");
      await agent.exit();
    });
    await agent.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "a", version: "1" } });
    for (let id = 2; id < 8; id++) {
      const answer = await agent.request(id, "tools/call", { name: id % 3 === 0 ? "env" : "echo", arguments: { id } });
      if (id % 3 === 0) expect(answer.error?.code).toBe(-32014);
      else expect(answer.result.content[0].text).toBe(`{"id":${id}}`);
    }
    expect(await agent.close()).toBe(0);
    const scrape = async () => {
      const response = await fetch(`${serve.endpoint}/metrics`, { headers: { authorization: `Bearer ${serve.secret}` } });
      return response.text();
    };
    const failed = (text: string) => Number(/^thoughtgate_trace_spans_dropped_total\{reason="export_failed"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    const metrics = await waitFor(async () => {
      const text = await scrape();
      // The shim's spans and the service's own decision spans all failed to leave.
      return failed(text) >= 12 ? text : null;
    }, "/metrics to count the failed exports");
    expect(metrics).toContain("thoughtgate_trace_spans_exported_total 0");
    expect(metrics).toContain('thoughtgate_trace_spans_dropped_total{reason="queue_full"} 0');
    expect(serve.stderr).toContain(`OTLP export to ${endpoint}/v1/traces failed (`);
  });
});
