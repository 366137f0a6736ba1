import type { JsonRpcId, Message } from "../core/jsonrpc.ts";
import { SseParser } from "./sse.ts";

/**
 * What became of one message from the server: delivered (and what it was), or rejected; a
 * rejected response still answers its request (the agent gets the rejection for that id).
 */
export type Delivery = { ok: true; message: Message } | { ok: false; answered: JsonRpcId | null };

/** What a stream's owner does with what arrives on it. */
export type StreamSink = {
  /** One message's bytes, validated and passed on. */
  message(bytes: Uint8Array): Delivery;
  /** One message too large to read, of which `head` was kept. */
  oversize(size: number, head: Uint8Array): Delivery;
  /** A response arrived (on any stream), or was rejected: its request is answered. */
  answered(id: JsonRpcId, message: Message | null): void;
  /** Resolves once the agent has read what it was given (backpressure), or null when it keeps up. */
  drained(): Promise<unknown> | null;
};

export type StreamEnd = { lastEventId: string | null; retryMs: number | null; events: number; error: string | null };

/**
 * Whether an event id can go back to the server in `Last-Event-ID`: visible ASCII (and inner
 * spaces), at most 1 KiB. SSE allows any text but NUL; a header carries bytes, and `Headers`
 * throws on a character above U+00FF (or trims surrounding spaces, which would change the id).
 */
export function resumableEventId(id: string | null): id is string {
  return id !== null && /^[\x21-\x7e](?:[\x20-\x7e]{0,1022}[\x21-\x7e])?$/.test(id);
}

/**
 * Read one SSE response to its end: every event's data is one JSON-RPC message. An event with
 * empty data is the priming event of MCP 2025-11-25 (an id to resume from, nothing to deliver).
 * Before reading more, the agent must have taken what it was given.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, sink: StreamSink, maxBytes: number, lastEventId: string | null): Promise<StreamEnd> {
  const parser = new SseParser(maxBytes);
  parser.lastEventId = lastEventId;
  const reader = body.getReader();
  let events = 0;
  let error: string | null = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const event of parser.push(value)) {
        events++;
        if (event.kind === "event" && (event.data.length === 0 || event.event !== "message")) continue;
        const delivery = event.kind === "oversize" ? sink.oversize(event.size, event.head) : sink.message(event.data);
        const id = answeredId(delivery);
        if (id !== null) sink.answered(id, delivery.ok ? delivery.message : null);
      }
      if (parser.broken) {
        error = "the event stream is malformed (a field line past its limit)";
        break;
      }
      const waiting = sink.drained();
      if (waiting) await waiting;
    }
  } catch (caught) {
    error = (caught as Error).message || "the stream broke";
  } finally {
    parser.end();
    void reader.cancel().catch(() => undefined);
  }
  return { lastEventId: parser.lastEventId, retryMs: parser.retryMs, events, error };
}

/** The request a delivered or rejected message answered, if it was a response. */
export function answeredId(delivery: Delivery): JsonRpcId | null {
  if (!delivery.ok) return delivery.answered;
  return delivery.message.kind === "response" ? delivery.message.id : null;
}
