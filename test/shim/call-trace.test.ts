/**
 * The shim's spans of one governed request (src/shim/call-trace.ts) recorded into memory: besides
 * what every call's spans say (call-spans.ts, test/pipeline/trace-stage.test.ts), the CLIENT span
 * of the call to the server, and how both end when the request ends another way than by the
 * server's answer. The e2e tests (test/e2e/otlp-traces.test.ts) hold the answered cases through a
 * collector.
 */
import { describe, expect, test } from "bun:test";
import type { JsonRpcRequest, JsonRpcResponse } from "../../src/core/jsonrpc.ts";
import type { CallStatus } from "../../src/telemetry/events.ts";
import { RecordingTracer, type SpanSink } from "../../src/telemetry/tracing/recorder.ts";
import type { SpanRecord, TracerStats } from "../../src/telemetry/tracing/tracer.ts";
import { CallTracer } from "../../src/shim/call-trace.ts";

const FORWARD = { action: "forward", gate: "rules", ruleId: "defaults", policyId: null, reason: "rule defaults: forward" } as const;
const request: JsonRpcRequest = { kind: "request", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } }, body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } } };
const bytes = new TextEncoder().encode(JSON.stringify(request.body));

function recording(): { tracer: CallTracer; ended: SpanRecord[] } {
  const ended: SpanRecord[] = [];
  const stats: TracerStats = { exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } };
  const sink: SpanSink = { push: (record) => void ended.push(record), lost: () => {}, stats, close: async () => {} };
  const tracer = new RecordingTracer(sink, { "service.name": "test" }, null);
  return { tracer: new CallTracer({ tracer, serverId: "srv", profile: "production", runId: "run-1", agentTransport: "pipe", serverTransport: "pipe" }), ended };
}

/** A request let through and forwarded, then ended with `status` without the server's answer. */
function forwardedThenEnded(status: CallStatus): SpanRecord[] {
  const { tracer, ended } = recording();
  const trace = tracer.begin(request, undefined);
  trace.decided(FORWARD);
  trace.forwarded(bytes);
  trace.end(status);
  trace.end("ok");
  return ended;
}

describe("a governed request's spans in the shim", () => {
  test("forwarded: the server gets the CLIENT span's context in _meta, under the request's SERVER span", () => {
    const { tracer, ended } = recording();
    const trace = tracer.begin(request, undefined);
    trace.decided(FORWARD);
    const sent = JSON.parse(new TextDecoder().decode(trace.forwarded(bytes))) as { params: { _meta?: { traceparent?: string } } };
    const ok: JsonRpcResponse = { kind: "response", id: 7, isError: false, body: { jsonrpc: "2.0", id: 7, result: { content: [] } } };
    trace.answered(ok);
    const [client, server] = ended;
    expect(ended.map((span) => span.kind)).toEqual(["client", "server"]);
    expect(client?.parentSpanId).toBe(server?.spanId as string);
    expect(sent.params._meta?.traceparent).toContain(client?.spanId as string);
    expect(server?.status.code).not.toBe("error");
  });

  test("cancelled after the forward: both spans end once, failed as cancelled", () => {
    const ended = forwardedThenEnded("cancelled");
    expect(ended.map((span) => [span.kind, span.status, span.attributes["error.type"]])).toEqual([
      ["client", { code: "error", message: "cancelled" }, "cancelled"],
      ["server", { code: "error", message: "cancelled" }, "cancelled"],
    ]);
  });

  test("a response the shim rejected (the agent got the shim's error): named error, not the tool's tool_error", () => {
    const ended = forwardedThenEnded("error");
    expect(ended.map((span) => span.attributes["error.type"])).toEqual(["error", "error"]);
  });

  test("the server's isError result: a tool_error on both spans", () => {
    const { tracer, ended } = recording();
    const trace = tracer.begin(request, undefined);
    trace.decided(FORWARD);
    trace.forwarded(bytes);
    trace.answered({ kind: "response", id: 7, isError: false, body: { jsonrpc: "2.0", id: 7, result: { isError: true, content: [] } } });
    trace.end("cancelled");
    expect(ended.map((span) => [span.kind, span.attributes["error.type"]])).toEqual([
      ["client", "tool_error"],
      ["server", "tool_error"],
    ]);
  });
});
