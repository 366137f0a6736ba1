import type { SpanContext } from "./tracer.ts";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), the `traceparent` header as MCP
 * carries it in `params._meta` (OpenTelemetry semantic conventions for MCP, "Context
 * propagation"): `00-<trace-id>-<parent-id>-<flags>`. What an agent sends is checked strictly;
 * anything else is ignored (the request then starts under the session's span), never echoed.
 */
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** A later version may append fields after a dash; version ff is invalid. */
const LATER_VERSION = /^(?!ff)[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-|$)/;
const ALL_ZERO = /^0+$/;
/** Far longer than any valid header: a longer value is not looked at. */
const MAX_TRACEPARENT_CHARS = 256;

export function parseTraceparent(value: unknown): SpanContext | null {
  if (typeof value !== "string" || value.length > MAX_TRACEPARENT_CHARS) return null;
  const match = VERSION_00.exec(value) ?? (value.startsWith("00-") ? null : LATER_VERSION.exec(value));
  if (!match) return null;
  const traceId = match[1] as string;
  const spanId = match[2] as string;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId };
}

/**
 * Always flagged sampled: every governed call is recorded. An agent's own flag is not obeyed, so
 * that an agent cannot keep its calls out of the trace by sending `-00`.
 */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-01`;
}

export function newTraceId(): string {
  return randomHex(16);
}

export function newSpanId(): string {
  return randomHex(8);
}

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  // All zero is invalid (and as likely as any other value): make it not so.
  if (buffer.every((byte) => byte === 0)) buffer[bytes - 1] = 1;
  return Buffer.from(buffer).toString("hex");
}
