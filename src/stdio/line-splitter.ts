import { concatBytes } from "../core/bytes.ts";

/**
 * Splits a byte stream into NDJSON lines. A partial line is buffered until its newline arrives;
 * a line that grows past `maxLineBytes` is discarded as it streams in, so a
 * sender can never make us buffer more than the limit. Only its head and tail are
 * kept, for the log and for recovering the request id.
 */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
const KEEP_BYTES = 256;
const NEWLINE = 0x0a;

export type SplitLine =
  | { kind: "line"; bytes: Uint8Array }
  | { kind: "oversize"; size: number; head: Uint8Array; tail: Uint8Array };

export class LineSplitter {
  private partial: Uint8Array[] = [];
  private partialSize = 0;
  /** While discarding an oversize line: its size so far, first and last bytes. */
  private discarding: { size: number; head: Uint8Array; tail: Uint8Array } | null = null;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {}

  /** Feed one chunk; returns the lines it completed, in order. */
  push(chunk: Uint8Array): SplitLine[] {
    const lines: SplitLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (newline === -1) {
        this.append(piece);
        break;
      }
      lines.push(this.complete(piece));
      start = newline + 1;
    }
    return lines;
  }

  /** Bytes of an unterminated last line at EOF, if any (never forwarded: it is not a framed message). */
  end(): number {
    const size = this.discarding?.size ?? this.partialSize;
    this.reset();
    return size;
  }

  private append(piece: Uint8Array): void {
    if (this.discarding) {
      this.extendDiscard(piece);
      return;
    }
    if (this.partialSize + piece.length > this.maxLineBytes) {
      this.startDiscard();
      this.extendDiscard(piece);
      return;
    }
    // Copy: the stream may reuse the chunk's memory for the next read.
    this.partial.push(piece.slice());
    this.partialSize += piece.length;
  }

  private complete(piece: Uint8Array): SplitLine {
    if (this.discarding) {
      this.extendDiscard(piece);
      const { size, head, tail } = this.discarding;
      this.discarding = null;
      return { kind: "oversize", size, head, tail };
    }
    if (this.partialSize === 0) {
      if (piece.length > this.maxLineBytes) {
        return { kind: "oversize", size: piece.length, head: piece.slice(0, KEEP_BYTES), tail: piece.slice(-KEEP_BYTES) };
      }
      return { kind: "line", bytes: piece };
    }
    if (this.partialSize + piece.length > this.maxLineBytes) {
      this.startDiscard();
      return this.complete(piece);
    }
    this.partial.push(piece);
    return { kind: "line", bytes: this.takePartial() };
  }

  /** Switch to discarding, keeping only the head and tail of what was buffered (no copy of the rest). */
  private startDiscard(): void {
    const parts = this.partial;
    const size = this.partialSize;
    this.partial = [];
    this.partialSize = 0;
    const head = concatBytes(parts.slice(0, Math.ceil(KEEP_BYTES / Math.max(1, parts[0]?.length ?? 1)) + 1)).slice(0, KEEP_BYTES);
    this.discarding = { size: 0, head, tail: new Uint8Array(0) };
    for (const part of parts.slice(-2)) this.extendDiscard(part, 0);
    this.discarding.size = size;
  }

  private extendDiscard(piece: Uint8Array, counted = piece.length): void {
    const state = this.discarding;
    if (!state) return;
    state.size += counted;
    if (piece.length >= KEEP_BYTES) state.tail = piece.slice(-KEEP_BYTES);
    else if (piece.length > 0) state.tail = concatBytes([state.tail, piece]).slice(-KEEP_BYTES);
  }

  private takePartial(): Uint8Array {
    const joined = concatBytes(this.partial);
    this.partial = [];
    this.partialSize = 0;
    return joined;
  }

  private reset(): void {
    this.partial = [];
    this.partialSize = 0;
    this.discarding = null;
  }
}

