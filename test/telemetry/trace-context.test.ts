import { describe, expect, test } from "bun:test";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "../../src/telemetry/tracing/trace-context.ts";

describe("W3C traceparent", () => {
  test("a valid header gives its trace and parent ids; a later version may carry more fields", () => {
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" });
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" });
    expect(parseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future")).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" });
  });

  test("anything else is not a context: wrong shape, case, zero ids, version ff, extra fields on 00, not a string", () => {
    for (const bad of [
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
      ` 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`,
      `cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${"x".repeat(300)}`,
      12,
      null,
      { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
  });

  test("what we send is always flagged sampled, and new ids are random lower-case hex", () => {
    const context = { traceId: newTraceId(), spanId: newSpanId() };
    expect(context.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(context.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(newTraceId()).not.toBe(context.traceId);
    expect(formatTraceparent(context)).toBe(`00-${context.traceId}-${context.spanId}-01`);
    expect(parseTraceparent(formatTraceparent(context))).toEqual(context);
  });
});
