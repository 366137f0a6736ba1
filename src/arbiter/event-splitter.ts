import { concatBytes } from "../core/bytes.ts";
import { MAX_LINE_BYTES } from "../stdio/line-splitter.ts";

/**
 * Splits a child's output stream into what passes through and the lines that may be events
 * (docs/codecli-protocol.md §1). Unlike the shim's `LineSplitter`, nothing is ever dropped and
 * ordinary output is not held until its newline: a codecli streams model output token by token
 * (the user-visible stream must not block), so a line is forwarded as soon as its first bytes show
 * it cannot be an event. Only an event candidate — a line starting with the prefix, or with `{`
 * when there is none — is buffered, up to `maxLineBytes`; past that it is forwarded as output.
 */
export type Piece =
  | { kind: "output"; bytes: Uint8Array }
  /**
   * A whole candidate line, newline included (forwarded as is if it is not a valid event).
   * `complete` false: it outgrew the limit or the stream ended first; it is passed through.
   */
  | { kind: "candidate"; bytes: Uint8Array; payloadStart: number; complete: boolean };

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

type Mode = "start" | "output" | "candidate";

export class EventSplitter {
  private mode: Mode = "start";
  private held: Uint8Array[] = [];
  private heldSize = 0;
  private readonly prefix: Uint8Array | null;

  constructor(
    prefix: string | null,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {
    this.prefix = prefix ? new TextEncoder().encode(prefix) : null;
  }

  /** Feed one chunk; returns its pieces in stream order. Output pieces may alias `chunk`. */
  push(chunk: Uint8Array): Piece[] {
    const pieces: Piece[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.mode === "output") {
        const newline = chunk.indexOf(NEWLINE, i);
        const end = newline === -1 ? chunk.length : newline + 1;
        pieces.push({ kind: "output", bytes: chunk.subarray(i, end) });
        if (newline !== -1) this.mode = "start";
        i = end;
      } else if (this.mode === "candidate") {
        const newline = chunk.indexOf(NEWLINE, i);
        const end = newline === -1 ? chunk.length : newline + 1;
        this.hold(chunk.subarray(i, end));
        i = end;
        if (newline !== -1) {
          pieces.push(this.takeCandidate(true));
          this.mode = "start";
        } else if (this.heldSize > this.maxLineBytes) {
          pieces.push(this.takeCandidate(false));
          this.mode = "output";
        }
      } else {
        i = this.classify(chunk, i, pieces);
      }
    }
    return pieces;
  }

  /** At EOF: whatever is held goes out as it is (an unterminated line is not an event). */
  end(): Piece[] {
    if (this.heldSize === 0) return [];
    const piece = this.mode === "candidate" ? this.takeCandidate(false) : { kind: "output" as const, bytes: this.takeHeld() };
    this.mode = "start";
    return [piece];
  }

  /** At the start of a line: decide from its first bytes; returns where to continue. */
  private classify(chunk: Uint8Array, i: number, pieces: Piece[]): number {
    const prefix = this.prefix;
    if (prefix === null) {
      this.mode = chunk[i] === OPEN_BRACE ? "candidate" : "output";
      return i;
    }
    // Hold the bytes that still match the prefix (it may be split across chunks).
    const matched = this.heldSize;
    let at = i;
    while (at < chunk.length && matched + (at - i) < prefix.length) {
      if (chunk[at] !== prefix[matched + (at - i)]) {
        // Not an event: what matched so far goes out as output, and the rest of the line streams.
        this.hold(chunk.subarray(i, at));
        if (this.heldSize > 0) pieces.push({ kind: "output", bytes: this.takeHeld() });
        this.mode = "output";
        return at;
      }
      at += 1;
    }
    this.hold(chunk.subarray(i, at));
    if (this.heldSize >= prefix.length) this.mode = "candidate";
    return at;
  }

  private hold(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    // Copy: the stream may reuse the chunk's memory for the next read.
    this.held.push(bytes.slice());
    this.heldSize += bytes.length;
  }

  private takeHeld(): Uint8Array {
    const bytes = concatBytes(this.held);
    this.held = [];
    this.heldSize = 0;
    return bytes;
  }

  private takeCandidate(complete: boolean): Piece {
    return { kind: "candidate", bytes: this.takeHeld(), payloadStart: this.prefix?.length ?? 0, complete };
  }
}
