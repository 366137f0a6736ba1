/**
 * The trace stage every front end that is not MCP shares (src/pipeline/trace-stage.ts), with a fake
 * `next` and the spans of call-spans.ts recorded into memory, so a mutant in what a call's span
 * says (its decision, its error, when it ends) is caught without the binary; the e2e tests in
 * test/e2e/otlp-traces-front-ends.test.ts hold the same through it and a collector.
 */
import { describe, expect, test } from "bun:test";
import type { Verdict } from "../../src/governance/verdict/decider.ts";
import { beginCallSpans } from "../../src/pipeline/call-spans.ts";
import { callOf, toolCallRequest, type Call, type CallSpans } from "../../src/pipeline/call.ts";
import type { Next } from "../../src/pipeline/stages.ts";
import { traceStage } from "../../src/pipeline/trace-stage.ts";
import type { CallStatus } from "../../src/telemetry/events.ts";
import { RecordingTracer, type SpanSink } from "../../src/telemetry/tracing/recorder.ts";
import type { SpanRecord, TracerStats } from "../../src/telemetry/tracing/tracer.ts";

const ALLOW: Verdict = { action: "forward", gate: "rules", ruleId: "defaults", policyId: null, reason: "rule defaults: forward" };
const DENY: Verdict = { action: "deny", gate: "rules", ruleId: "no-shell", policyId: null, reason: "rule no-shell: deny", error: { code: -32014, message: "ThoughtGate blocked tools/call shell: rule no-shell: deny" } };

/** Spans that note what the stage told them, in order. */
function noting(): { spans: CallSpans; told: string[] } {
  const told: string[] = [];
  const spans: CallSpans = {
    decided: (verdict) => void told.push(`decided:${verdict.action}:${verdict.reason}`),
    end: (status: CallStatus) => void told.push(`end:${status}`),
    waiting: () => void told.push("waiting"),
    deciding: { context: null, set: () => {}, event: () => {}, fail: () => {}, end: () => {} },
  };
  return { spans, told };
}

const newCall = (spans?: CallSpans): Call => {
  const call = callOf("arbiter", "codecli", toolCallRequest("r-1", "shell.exec", { cmd: "ls" }));
  if (spans) call.spans = spans;
  return call;
};

/** A `next` that notes it ran, and does `then` (the forward stage's answer). */
const fakeNext = (told: string[], then: () => void = () => {}): Next => () => {
  told.push("next");
  then();
};

describe("the trace stage", () => {
  test("a call let through: its decision goes on its spans before the forward, which it does not end; its status ends them on the way back", () => {
    const { spans, told } = noting();
    const call = newCall(spans);
    call.verdict = ALLOW;
    const stage = traceStage();
    expect(stage.request?.(call, fakeNext(told))).toBeUndefined();
    expect(told).toEqual(["decided:forward:rule defaults: forward", "next"]);
    call.status = "error";
    stage.response?.(call, fakeNext(told));
    expect(told).toEqual(["decided:forward:rule defaults: forward", "next", "end:error", "next"]);
  });

  test("a call the forward refused ends once its answer went out, with its status", () => {
    const { spans, told } = noting();
    const call = newCall(spans);
    call.verdict = DENY;
    traceStage().request?.(call, fakeNext(told, () => (call.status = "denied")));
    expect(told).toEqual(["decided:deny:rule no-shell: deny", "next", "end:denied"]);
  });

  test("a call that reached it undecided is traced as the deny the front end answers with", () => {
    const { spans, told } = noting();
    traceStage().request?.(newCall(spans), fakeNext(told));
    expect(told).toEqual(["decided:deny:no decision was reached", "next"]);
  });

  test("a front end that never sees the end (the hooks) ends a call let through with its answer; a refused one with its status", () => {
    const allowed = noting();
    const call = newCall(allowed.spans);
    call.verdict = ALLOW;
    traceStage({ endsWithAnswer: true }).request?.(call, fakeNext(allowed.told));
    expect(allowed.told).toEqual(["decided:forward:rule defaults: forward", "next", "end:ok"]);
    const refused = noting();
    const denied = newCall(refused.spans);
    denied.verdict = DENY;
    traceStage({ endsWithAnswer: true }).request?.(denied, fakeNext(refused.told, () => (denied.status = "denied")));
    expect(refused.told).toEqual(["decided:deny:rule no-shell: deny", "next", "end:denied"]);
  });

  test("a forward that answers later: the spans end after it, not before", async () => {
    const { spans, told } = noting();
    const call = newCall(spans);
    call.verdict = DENY;
    const run = traceStage().request?.(call, async () => {
      await Promise.resolve();
      told.push("answered");
      call.status = "denied";
    });
    expect(run).toBeInstanceOf(Promise);
    expect(told).toEqual(["decided:deny:rule no-shell: deny"]);
    await run;
    expect(told).toEqual(["decided:deny:rule no-shell: deny", "answered", "end:denied"]);
  });

  test("tracing off (no spans): next once, synchronously, and nothing else", () => {
    const told: string[] = [];
    const call = newCall();
    call.verdict = ALLOW;
    const stage = traceStage({ endsWithAnswer: true });
    expect(stage.request?.(call, fakeNext(told))).toBeUndefined();
    call.status = "ok";
    expect(stage.response?.(call, fakeNext(told))).toBeUndefined();
    expect(told).toEqual(["next", "next"]);
  });
});

/** A tracer whose finished spans are kept here. */
function recording(): { tracer: RecordingTracer; ended: SpanRecord[] } {
  const ended: SpanRecord[] = [];
  const stats: TracerStats = { exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } };
  const sink: SpanSink = { push: (record) => void ended.push(record), lost: () => {}, stats, close: async () => {} };
  return { tracer: new RecordingTracer(sink, { "service.name": "test" }, null), ended };
}

describe("a call's spans through the trace stage (call-spans.ts)", () => {
  test("named and attributed as a shim's: the tool, the decision, a deny's error as the span's status", () => {
    const { tracer, ended } = recording();
    const call = newCall();
    call.spans = beginCallSpans(call, { tracer, profile: "production", runId: "run-1", transport: "pipe" });
    call.verdict = DENY;
    traceStage().request?.(call, () => void (call.status = "denied"));
    expect(ended).toHaveLength(1);
    const span = ended[0] as SpanRecord;
    expect(span).toMatchObject({ name: "tools/call shell.exec", kind: "server", parentSpanId: null, status: { code: "error", message: DENY.action === "deny" ? DENY.error.message : "" } });
    expect(span.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "shell.exec",
      "jsonrpc.request.id": "r-1",
      "thoughtgate.server_id": "codecli",
      "thoughtgate.run_id": "run-1",
      "thoughtgate.decision": "deny",
      "thoughtgate.gate": "rules",
      "thoughtgate.rule_id": "no-shell",
      "error.type": "-32014",
      "rpc.response.status_code": "-32014",
    });
  });

  test("a person's wait is a span under the call's; a tool that failed is a tool_error; the spans end once", () => {
    const { tracer, ended } = recording();
    const call = newCall();
    const spans = beginCallSpans(call, { tracer, profile: "development", runId: "run-2", transport: "pipe" });
    call.spans = spans;
    spans.waiting();
    call.verdict = { ...ALLOW, gate: "approval", approvedBy: "terminal" };
    traceStage().request?.(call, () => {});
    expect(ended.map((span) => span.name)).toEqual(["thoughtgate.approval"]);
    expect(ended[0]?.attributes).toMatchObject({ "thoughtgate.approval.outcome": "approved", "thoughtgate.approved_by": "terminal" });
    call.status = "error";
    traceStage().response?.(call, () => {});
    traceStage().response?.(call, () => {});
    expect(ended).toHaveLength(2);
    const span = ended[1] as SpanRecord;
    expect(span.parentSpanId).toBeNull();
    expect(ended[0]?.parentSpanId).toBe(span.spanId);
    expect(span.status).toEqual({ code: "error", message: "tool_error" });
    expect(span.attributes).toMatchObject({ "thoughtgate.decision": "forward", "thoughtgate.approved_by": "terminal", "error.type": "tool_error", "thoughtgate.profile": "development" });
  });
});
