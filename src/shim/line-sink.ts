import type { FileSink } from "bun";
import { messageOf } from "../core/errors.ts";
import type { Sink } from "./router.ts";

const NEWLINE = new Uint8Array([0x0a]);

/**
 * A `Sink` over a Bun `FileSink` (a pipe). Writes are buffered and flushed once per turn of the
 * event loop, so a chunk of many lines costs one write syscall. `backpressure()` resolves when
 * the reader has caught up: the pumps await it before reading more, so a slow reader slows the
 * writer down instead of growing our memory.
 */
export class LineSink implements Sink {
  private flushScheduled = false;
  private pending: Promise<unknown> | null = null;
  private failed = false;

  constructor(
    private readonly sink: FileSink,
    private readonly onBroken: (reason: string) => void,
  ) {}

  send(bytes: Uint8Array): void {
    this.write(bytes);
  }

  sendText(line: string): void {
    this.write(line);
  }

  /** Resolves when everything written so far has been handed to the OS. */
  backpressure(): Promise<unknown> | null {
    if (this.flushScheduled) this.flush();
    return this.pending;
  }

  close(): void {
    this.flush();
    try {
      void this.sink.end();
    } catch {
      // Already closed by the peer: nothing left to deliver.
    }
  }

  private write(data: Uint8Array | string): void {
    if (this.failed) return;
    try {
      this.sink.write(data);
      this.sink.write(NEWLINE);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    if (!this.flushScheduled || this.failed) return;
    this.flushScheduled = false;
    try {
      const result = this.sink.flush();
      if (result instanceof Promise) {
        const pending: Promise<unknown> = result.then(
          () => {
            if (this.pending === pending) this.pending = null;
          },
          (error: unknown) => this.fail(error),
        );
        this.pending = pending;
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.pending = null;
    this.onBroken(messageOf(error));
  }
}
