import type { Unit } from "../stdio/framer.ts";
import { readFramed, type ByteReader } from "../stdio/framed-reader.ts";
import type { Sink } from "../stdio/line-sink.ts";

/** docs/architecture.md, decision 6: past this many pending decisions the shim stops reading from the agent. */
export const MAX_PENDING_DECISIONS = 32;

/**
 * Answers a pump writes back to its own sender (errors for rejected lines) are not waited for line
 * by line — waiting on the other direction can deadlock a peer that writes before it reads — but
 * once the sender has left this much unread, the pump stops reading it until it catches up: a peer
 * that sends garbage and never reads cannot grow our memory without bound.
 */
export const SENDER_UNREAD_LIMIT_BYTES = 16 * 1024 * 1024;

/** A sink a pump can wait on: the stdio line sink, the HTTP upstream, the HTTP front end. */
export type FlowSink = Sink & {
  /** Resolves when the reader has caught up, or null when it has. */
  backpressure(): Promise<unknown> | null;
  /** Bytes written that the reader has not taken yet. */
  readonly bufferedBytes: number;
};

/** The router's count of decisions in flight, for the agent pump's backpressure. */
export type DecisionSlots = { readonly decisionsInFlight: number; decisionSettled(): Promise<void> };

/**
 * One direction of the proxy: read, frame and route until EOF; before reading more, wait for the
 * destination to drain, for the sender to read what we answered it past the limit, and (agent
 * side) for a free decision slot.
 */
export function pump(
  reader: ByteReader,
  route: (unit: Unit) => void,
  destination: FlowSink | null,
  sender: FlowSink | null,
  decisions: DecisionSlots | null,
  label: string,
): Promise<void> {
  return readFramed(reader, route, {
    label,
    afterChunk: () => afterInput(destination, sender, decisions),
  });
}

/** What a reader of one side waits for before taking more input (null: nothing). */
export function afterInput(destination: FlowSink | null, sender: FlowSink | null, decisions: DecisionSlots | null): Promise<void> | null {
  const pending = destination?.backpressure();
  const unread = sender && sender.bufferedBytes > SENDER_UNREAD_LIMIT_BYTES ? sender.backpressure() : null;
  if (pending || unread) return Promise.all([pending, unread]).then(() => waitForDecisionSlot(decisions));
  return decisions && decisions.decisionsInFlight >= MAX_PENDING_DECISIONS ? waitForDecisionSlot(decisions) : null;
}

async function waitForDecisionSlot(decisions: DecisionSlots | null): Promise<void> {
  while (decisions && decisions.decisionsInFlight >= MAX_PENDING_DECISIONS) await decisions.decisionSettled();
}
