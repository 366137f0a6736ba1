import { concatBytes } from "../core/bytes.ts";

/**
 * An incremental Server-Sent Events parser over bytes (WHATWG HTML, "Parsing an event stream"):
 * lines end in CRLF, LF or CR; `data` lines are joined with LF; `id`, `retry` and `event` are
 * kept; comments (`:`) and unknown fields are ignored; a blank line dispatches the event.
 *
 * It works on bytes, not text, so that an event's data reaches the framing rules exactly as the
 * server sent it (strict UTF-8 is checked there, not repaired here): CR and LF never occur inside a
 * multi-byte UTF-8 sequence, so splitting bytes on them is the same as splitting the text. One
 * event's data is capped: past `maxDataBytes` the rest is counted, not kept, and the event is
 * dispatched as oversize so the caller can report it without ever buffering it.
 */
export type SseEvent =
  | { kind: "event"; data: Uint8Array; event: string; id: string | null }
  | { kind: "oversize"; size: number; head: Uint8Array; id: string | null };

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
/** How much of an oversize event is kept to say what it was. */
const HEAD_BYTES = 256;
/** A field name or an `id`/`event`/`retry` value longer than this is not one a server needs. */
const MAX_FIELD_LINE_BYTES = 4096;

const ascii = new TextDecoder("utf-8");

export class SseParser {
  private pending: Uint8Array[] = [];
  private pendingSize = 0;
  private lastWasCr = false;
  private atStart = true;
  private data: Uint8Array[] = [];
  private dataSize = 0;
  private dataLines = 0;
  private overflow = false;
  private event = "";
  /** The last event id seen (the SSE "last event ID buffer"); what a resumed GET sends. */
  lastEventId: string | null = null;
  /** The last `retry` the server asked for, in milliseconds. */
  retryMs: number | null = null;
  /** A line (not data) grew past its limit: the stream is not SSE we will read. */
  broken = false;

  constructor(private readonly maxDataBytes: number) {}

  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (chunk.length > 0 && chunk[0] !== LF) this.lastWasCr = false;
    if (this.atStart && chunk.length > 0) {
      // A UTF-8 byte order mark at the very start of the stream is skipped (the SSE rule).
      this.atStart = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) start = 3;
    }
    for (let i = start; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte !== LF && byte !== CR) continue;
      if (byte === LF && this.lastWasCr && i === 0) {
        // The LF of a CRLF split across two chunks.
        this.lastWasCr = false;
        start = i + 1;
        continue;
      }
      this.line(this.take(chunk.subarray(start, i)), out);
      if (byte === CR && chunk[i + 1] === LF) i++;
      // Only a CR that ends the chunk may have its LF at the start of the next one.
      this.lastWasCr = byte === CR && i === chunk.length - 1;
      start = i + 1;
    }
    if (start < chunk.length) {
      this.lastWasCr = false;
      this.keep(chunk.subarray(start));
    }
    return out;
  }

  /** The stream ended: an event without its blank line is not dispatched (the SSE rule). */
  end(): void {
    this.pending = [];
    this.pendingSize = 0;
    this.resetEvent();
  }

  private keep(bytes: Uint8Array): void {
    // A data line longer than the cap is counted, not kept.
    if (this.pendingSize + bytes.length > this.maxDataBytes + MAX_FIELD_LINE_BYTES) {
      const room = Math.max(0, HEAD_BYTES - this.pendingSize);
      if (room > 0) this.pending.push(bytes.slice(0, room));
      this.pendingSize += bytes.length;
      return;
    }
    this.pending.push(bytes.slice());
    this.pendingSize += bytes.length;
  }

  private take(tail: Uint8Array): { bytes: Uint8Array; size: number } {
    if (this.pendingSize === 0) return { bytes: tail, size: tail.length };
    this.keep(tail);
    const size = this.pendingSize;
    const bytes = concatBytes(this.pending);
    this.pending = [];
    this.pendingSize = 0;
    return { bytes, size };
  }

  private line({ bytes, size }: { bytes: Uint8Array; size: number }, out: SseEvent[]): void {
    if (size === 0) {
      this.dispatch(out);
      return;
    }
    if (bytes[0] === COLON) return;
    const colon = bytes.indexOf(COLON);
    const name = ascii.decode(colon === -1 ? bytes : bytes.subarray(0, colon));
    let valueStart = colon === -1 ? size : colon + 1;
    if (colon !== -1 && bytes[valueStart] === SPACE) valueStart++;
    if (name === "data") {
      this.addData(bytes.subarray(Math.min(valueStart, bytes.length)), size - valueStart);
      return;
    }
    if (size > MAX_FIELD_LINE_BYTES) {
      this.broken = true;
      return;
    }
    const value = ascii.decode(bytes.subarray(valueStart));
    if (name === "event") this.event = value;
    else if (name === "id" && !value.includes("\0")) this.lastEventId = value;
    else if (name === "retry" && /^\d{1,9}$/.test(value)) this.retryMs = Number(value);
  }

  private addData(value: Uint8Array, size: number): void {
    const separator = this.dataLines > 0 ? 1 : 0;
    this.dataLines++;
    if (this.overflow || this.dataSize + separator + size > this.maxDataBytes) {
      if (!this.overflow) {
        this.overflow = true;
        const head = concatBytes(this.data).subarray(0, HEAD_BYTES);
        this.data = [head];
      }
      const kept = this.data[0]?.length ?? 0;
      if (kept < HEAD_BYTES) this.data = [concatBytes([this.data[0] ?? new Uint8Array(0), value.subarray(0, HEAD_BYTES - kept)])];
      this.dataSize += separator + size;
      return;
    }
    if (separator) this.data.push(NEWLINE);
    this.data.push(value.slice());
    this.dataSize += separator + size;
  }

  private dispatch(out: SseEvent[]): void {
    if (this.dataLines > 0) {
      if (this.overflow) out.push({ kind: "oversize", size: this.dataSize, head: this.data[0] ?? new Uint8Array(0), id: this.lastEventId });
      else out.push({ kind: "event", data: concatBytes(this.data), event: this.event || "message", id: this.lastEventId });
    }
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.dataSize = 0;
    this.dataLines = 0;
    this.overflow = false;
    this.event = "";
  }
}

const NEWLINE = new Uint8Array([LF]);

