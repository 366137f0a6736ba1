import { describe, expect, test } from "bun:test";
import { createConsola } from "consola/basic";
import { RecordingTracer } from "../../src/telemetry/tracing/recorder.ts";
import { SpanQueue, type QueuedSpan, type SendOutcome } from "../../src/telemetry/tracing/span-queue.ts";
import type { SpanRecord } from "../../src/telemetry/tracing/tracer.ts";
import { waitFor } from "../support/harness.ts";

const RESOURCE = { "service.name": "test" };

function record(name: string): SpanRecord {
  return { traceId: "1".repeat(32), spanId: "2".repeat(16), parentSpanId: null, name, kind: "internal", startMs: 1, endMs: 2, attributes: {}, events: [], links: [], status: { code: "unset" } };
}

/** A collector the test answers by hand: each batch waits until `answer` is called. */
function handAnsweredCollector() {
  const batches: Array<{ spans: QueuedSpan[]; answer: (outcome: SendOutcome) => void }> = [];
  const send = (spans: QueuedSpan[]) => new Promise<SendOutcome>((answer) => batches.push({ spans, answer }));
  return { batches, send };
}

function logSink() {
  const lines: string[] = [];
  const logger = createConsola({ level: 3, reporters: [{ log: (entry) => lines.push(`${entry.type} ${entry.args.join(" ")}`) }] });
  return { lines, log: logger };
}

describe("the span queue between the calls and the collector", () => {
  test("bounded: past maxQueue a span is dropped and counted, and pushing never waits on the collector", async () => {
    const collector = handAnsweredCollector();
    const { log } = logSink();
    const queue = new SpanQueue({ send: collector.send, target: "OTLP export to test", maxQueue: 3, maxBatch: 2, delayMs: 60_000, log });
    for (let i = 0; i < 6; i++) queue.push(record(`s${i}`), RESOURCE);
    // The first full batch left at once; one batch at a time, so the rest waits in the queue.
    expect(collector.batches.map((batch) => batch.spans.map((span) => span.record.name))).toEqual([["s0", "s1"]]);
    expect(queue.stats.dropped.queue_full).toBe(1);
    collector.batches[0]?.answer({ ok: true });
    await waitFor(() => collector.batches.length === 2, "the next batch");
    expect(collector.batches[1]?.spans.map((span) => span.record.name)).toEqual(["s2", "s3"]);
    collector.batches[1]?.answer({ ok: true });
    await waitFor(() => queue.stats.exported === 4, "both batches counted");
    await queue.close(0);
    expect(queue.stats).toEqual({ exported: 4, dropped: { queue_full: 1, export_failed: 0, shutdown: 1 } });
  });

  test("a collector that fails: its batches count as export_failed, logged once, and once more when it works again", async () => {
    const collector = handAnsweredCollector();
    const { lines, log } = logSink();
    const queue = new SpanQueue({ send: collector.send, target: "OTLP export to http://127.0.0.1:9/v1/traces", maxQueue: 100, maxBatch: 1, delayMs: 60_000, log });
    for (let i = 0; i < 3; i++) {
      queue.push(record(`fail${i}`), RESOURCE);
      await waitFor(() => collector.batches.length === i + 1, "a batch");
      collector.batches[i]?.answer({ ok: false, error: "connect ECONNREFUSED 127.0.0.1:9" });
      await waitFor(() => queue.stats.dropped.export_failed === i + 1, "the failure counted");
    }
    queue.push(record("ok"), RESOURCE);
    await waitFor(() => collector.batches.length === 4, "the batch after");
    collector.batches[3]?.answer({ ok: true });
    await waitFor(() => queue.stats.exported === 1, "the success counted");
    expect(lines).toEqual([
      "warn OTLP export to http://127.0.0.1:9/v1/traces failed (connect ECONNREFUSED 127.0.0.1:9); spans are dropped and counted until it works again",
      "info OTLP export to http://127.0.0.1:9/v1/traces works again (3 span(s) dropped meanwhile)",
    ]);
    await queue.close(0);
  });

  test("close gives a collector that never answers its budget, then drops what is left as shutdown", async () => {
    const collector = handAnsweredCollector();
    const { lines, log } = logSink();
    const queue = new SpanQueue({ send: collector.send, target: "OTLP export to test", maxQueue: 100, maxBatch: 2, delayMs: 60_000, log });
    for (let i = 0; i < 5; i++) queue.push(record(`s${i}`), RESOURCE);
    await queue.close(50);
    expect(queue.stats.dropped.shutdown).toBe(5);
    queue.push(record("late"), RESOURCE);
    expect(queue.stats.dropped.shutdown).toBe(6);
    // The batch that answers after all is not counted twice.
    collector.batches[0]?.answer({ ok: true });
    await Promise.resolve();
    expect(queue.stats.exported).toBe(0);
    expect(lines).toEqual(["warn OTLP export to test: 5 span(s) were not exported (shutdown: 5)"]);
  });

  test("the recording tracer: children hang under the session span, bounds hold, a span ends once", async () => {
    const collector = handAnsweredCollector();
    const { log } = logSink();
    const queue = new SpanQueue({ send: collector.send, target: "test", maxQueue: 100, maxBatch: 100, delayMs: 60_000, log });
    const tracer = new RecordingTracer(queue, RESOURCE, null);
    const session = tracer.session("thoughtgate shim", { a: 1 });
    const child = tracer.start("child", { kind: "server", attributes: { long: "x".repeat(2_000) } });
    for (let i = 0; i < 40; i++) child.set({ [`k${i}`]: i });
    for (let i = 0; i < 20; i++) child.event(`e${i}`);
    child.fail("it broke");
    child.end();
    child.end();
    session.end();
    const closing = tracer.close(1_000);
    await waitFor(() => collector.batches.length === 1, "the batch");
    const [spanOfChild, spanOfSession] = collector.batches[0]?.spans.map((span) => span.record) ?? [];
    expect(spanOfChild?.parentSpanId).toBe(spanOfSession?.spanId ?? "");
    expect(spanOfChild?.traceId).toBe(spanOfSession?.traceId ?? "");
    expect(spanOfSession?.parentSpanId).toBeNull();
    expect(Object.keys(spanOfChild?.attributes ?? {}).length).toBe(32);
    expect(String(spanOfChild?.attributes.long).length).toBe(512);
    expect(spanOfChild?.events.length).toBe(8);
    expect(spanOfChild?.status).toEqual({ code: "error", message: "it broke" });
    collector.batches[0]?.answer({ ok: true });
    await closing;
    expect(tracer.stats.exported).toBe(2);
  });
});
