import { messageOf } from "../core/errors.ts";
import { taggedLog } from "../core/log.ts";
import { Framer, type Unit } from "./framer.ts";
import { MAX_LINE_BYTES } from "./line-splitter.ts";
import { WATCH_TIMEOUT_MS } from "./smuggling.ts";

/** The part of a stream reader we use (Bun's stdin and pipe readers differ in their full types). */
export type ByteReader = { read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>; cancel(): Promise<void> };

export type FramedReadOptions = {
  /** Name of the stream in debug logs. */
  label: string;
  maxLineBytes?: number;
  /** Awaited after each chunk is routed, before the next read: where backpressure waits. */
  afterChunk?: () => Promise<void> | null;
};

/**
 * Read a byte stream until EOF (or until it breaks or is cancelled), framing it into validated
 * units and handing each to `route` in order. A line ending inside an open string holds the next
 * lines back for the smuggling watch, but never for longer than `WATCH_TIMEOUT_MS`.
 */
export async function readFramed(reader: ByteReader, route: (unit: Unit) => void, options: FramedReadOptions): Promise<void> {
  const framer = new Framer(options.maxLineBytes ?? MAX_LINE_BYTES);
  let watchTimer: ReturnType<typeof setTimeout> | null = null;
  const routeAll = (units: Unit[]) => {
    for (const unit of units) route(unit);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || value === undefined) break;
      routeAll(framer.push(value));
      if (framer.watching && watchTimer === null) {
        watchTimer = setTimeout(() => {
          watchTimer = null;
          routeAll(framer.abandonWatch());
        }, WATCH_TIMEOUT_MS);
      } else if (!framer.watching && watchTimer !== null) {
        clearTimeout(watchTimer);
        watchTimer = null;
      }
      const waiting = options.afterChunk?.();
      if (waiting) await waiting;
    }
  } catch (error) {
    // A cancelled or broken pipe ends the stream like EOF does.
    taggedLog(options.label).debug(`stream ended: ${messageOf(error)}`);
  } finally {
    if (watchTimer !== null) clearTimeout(watchTimer);
  }
  routeAll(framer.end());
}
