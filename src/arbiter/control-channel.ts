import type { FileSink } from "bun";
import { bestEffort, messageOf } from "../core/errors.ts";
import type { ControlMessage } from "./protocol.ts";

/**
 * The only writer of the child's stdin (docs/codecli-protocol.md §5.1). Each command is one JSON
 * line handed to the pipe in one write, so lines never interleave.
 * A write that fails means the child can no longer be controlled: `onBroken` is called once and
 * every later send is refused.
 */
export class ControlChannel {
  private failed: string | null = null;
  /** Lines handed to the pipe. */
  sent = 0;

  constructor(
    private readonly sink: FileSink,
    private readonly onBroken: (reason: string) => void,
  ) {}

  get broken(): boolean {
    return this.failed !== null;
  }

  /** false when the channel is broken (now or before): the message was not delivered. */
  send(message: ControlMessage): boolean {
    if (this.failed !== null) return false;
    try {
      this.sink.write(`${JSON.stringify(message)}\n`);
      // Flush now, not at the end of the turn: the child is blocked until it reads this line.
      const flushed = this.sink.flush();
      if (flushed instanceof Promise) flushed.catch((error: unknown) => this.fail(error));
    } catch (error) {
      this.fail(error);
      return false;
    }
    this.sent += 1;
    return true;
  }

  /** End the child's stdin (the first step of the staged shutdown); later sends are refused quietly. */
  close(): void {
    if (this.failed === null) this.failed = "closed";
    bestEffort(() => this.sink.end());
  }

  private fail(error: unknown): void {
    if (this.failed !== null) return;
    this.failed = messageOf(error);
    this.onBroken(this.failed);
  }
}
