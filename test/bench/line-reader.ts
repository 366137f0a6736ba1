/**
 * The bench client's view of a proxy's stdout: NDJSON lines, read with as little work as possible
 * so the client's own cost stays small next to what it measures. `next()` hands out one line at a
 * time (latency runs); `skip(n)` only counts newlines (throughput runs).
 */
const NEWLINE = 0x0a;
const EMPTY: Uint8Array = new Uint8Array(0);

/** The part of a stream reader used here (Bun's pipe readers and the DOM type differ in details). */
export type ByteReader = {
  read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
  cancel(): Promise<void>;
};

export class LineReader {
  /** Complete lines not handed out yet, from `queue[head]` on. */
  private queue: Uint8Array[] = [];
  private head = 0;
  /**
   * The start of a line whose newline has not arrived, piece by piece (copies: they outlive their
   * chunks). Joined once, when the newline comes: a 10 MiB line arrives in ~160 chunks, and joining
   * at every chunk would copy it ~80 times.
   */
  private partial: Uint8Array[] = [];
  /** Progress counters, for telling a slow proxy from a stalled one. */
  bytesRead = 0;
  linesConsumed = 0;

  constructor(private readonly reader: ByteReader) {}

  async next(): Promise<Uint8Array> {
    while (this.head === this.queue.length) this.split(await this.read());
    return this.take();
  }

  /** Consume `count` lines without splitting them out; returns the last one. */
  async skip(count: number): Promise<Uint8Array> {
    let last = EMPTY;
    let remaining = count;
    while (remaining > 0 && this.head < this.queue.length) {
      last = this.take();
      remaining -= 1;
    }
    while (remaining > 0) {
      const chunk = await this.read();
      let lineStart = 0;
      let newline = chunk.indexOf(NEWLINE);
      while (newline !== -1) {
        remaining -= 1;
        this.linesConsumed += 1;
        if (remaining === 0) {
          last = this.joinPartial(chunk.subarray(lineStart, newline));
          this.split(chunk.subarray(newline + 1));
          return last;
        }
        lineStart = newline + 1;
        this.partial = [];
        newline = chunk.indexOf(NEWLINE, lineStart);
      }
      if (lineStart < chunk.length) this.partial.push(chunk.slice(lineStart));
    }
    return last;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel();
  }

  private take(): Uint8Array {
    // Callers check `head < queue.length` first.
    const line = this.queue[this.head] as Uint8Array;
    this.head += 1;
    this.linesConsumed += 1;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    return line;
  }

  private async read(): Promise<Uint8Array> {
    const { value, done } = await this.reader.read();
    if (done || value === undefined) throw new Error("the proxy closed its stdout");
    this.bytesRead += value.length;
    return value;
  }

  private split(chunk: Uint8Array): void {
    let lineStart = 0;
    let newline = chunk.indexOf(NEWLINE);
    while (newline !== -1) {
      this.queue.push(this.joinPartial(chunk.subarray(lineStart, newline)));
      lineStart = newline + 1;
      newline = chunk.indexOf(NEWLINE, lineStart);
    }
    if (lineStart < chunk.length) this.partial.push(chunk.slice(lineStart));
  }

  /** The pieces waiting, then `piece`: the whole line (the pieces are cleared). */
  private joinPartial(piece: Uint8Array): Uint8Array {
    if (this.partial.length === 0) return piece;
    const pieces = [...this.partial, piece];
    this.partial = [];
    const joined = new Uint8Array(pieces.reduce((sum, p) => sum + p.length, 0));
    let offset = 0;
    for (const p of pieces) {
      joined.set(p, offset);
      offset += p.length;
    }
    return joined;
  }
}
