import { messageOf } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { SpanSink } from "./recorder.ts";
import type { Attributes, DropReason, SpanRecord, TracerStats } from "./tracer.ts";

export type QueuedSpan = { record: SpanRecord; resource: Attributes };
export type SendOutcome = { ok: true } | { ok: false; error: string };

export type QueueOptions = {
  /** Deliver one batch: the OTLP exporter, or (a wrap session's shim) the governance service. */
  send(batch: QueuedSpan[]): Promise<SendOutcome>;
  /** Where batches go, for the log lines ("OTLP export to http://…"). */
  target: string;
  maxQueue: number;
  maxBatch: number;
  delayMs: number;
  log: Pick<Logger, "warn" | "info">;
};

/**
 * Finished spans on their way out, so that exporting never touches a call: `push` only appends to
 * a bounded array (a full queue drops the span and counts it), and one batch at a time is sent in
 * the background, every `delayMs` or as soon as a batch is full. A collector that is down or slow
 * costs spans, counted by reason (`stats`, the service's `/metrics`), never time on a call. The
 * first failure is logged once, and so is the recovery with how many spans were lost meanwhile.
 */
export class SpanQueue implements SpanSink {
  readonly stats: TracerStats = { exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } };
  private items: QueuedSpan[] = [];
  private inFlight: { done: Promise<void>; size: number; abandoned: boolean } | null = null;
  private readonly timer: ReturnType<typeof setInterval>;
  private closed = false;
  private failingSince: number | null = null;

  constructor(private readonly options: QueueOptions) {
    this.timer = setInterval(() => this.kick(), options.delayMs);
    this.timer.unref();
  }

  push(record: SpanRecord, resource: Attributes): void {
    if (this.closed) return this.lost("shutdown", 1);
    if (this.items.length >= this.options.maxQueue) return this.lost("queue_full", 1);
    this.items.push({ record, resource });
    if (this.items.length >= this.options.maxBatch) this.kick();
  }

  lost(reason: DropReason, count: number): void {
    this.stats.dropped[reason] += count;
  }

  /** Send what is queued, for at most `budgetMs`; whatever is still queued or on its way then is dropped. */
  async close(budgetMs: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const deadline = performance.now() + budgetMs;
    while (this.items.length > 0 || this.inFlight) {
      this.kick();
      const left = deadline - performance.now();
      const current = this.inFlight;
      if (left <= 0 || !current) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([current.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
      if (this.inFlight === current && performance.now() >= deadline) break;
    }
    const stuck = this.inFlight;
    if (stuck) {
      stuck.abandoned = true;
      this.lost("shutdown", stuck.size);
    }
    this.lost("shutdown", this.items.length);
    this.items = [];
    const lost = Object.values(this.stats.dropped).reduce((sum, count) => sum + count, 0);
    if (lost > 0) this.options.log.warn(`${this.options.target}: ${lost} span(s) were not exported (${describeDrops(this.stats.dropped)})`);
  }

  private kick(): void {
    if (this.inFlight || this.items.length === 0) return;
    const batch = this.items.splice(0, this.options.maxBatch);
    const flight = { done: Promise.resolve(), size: batch.length, abandoned: false };
    flight.done = this.deliver(batch, flight).finally(() => {
      if (this.inFlight === flight) this.inFlight = null;
      if (!this.closed && this.items.length >= this.options.maxBatch) this.kick();
    });
    this.inFlight = flight;
  }

  private async deliver(batch: QueuedSpan[], flight: { abandoned: boolean }): Promise<void> {
    let outcome: SendOutcome;
    try {
      outcome = await this.options.send(batch);
    } catch (error) {
      outcome = { ok: false, error: messageOf(error) };
    }
    if (flight.abandoned) return; // counted as `shutdown` already
    if (outcome.ok) {
      this.stats.exported += batch.length;
      if (this.failingSince !== null) {
        const lostMeanwhile = this.stats.dropped.export_failed + this.stats.dropped.queue_full - this.failingSince;
        this.options.log.info(`${this.options.target} works again (${lostMeanwhile} span(s) dropped meanwhile)`);
        this.failingSince = null;
      }
      return;
    }
    if (this.failingSince === null) {
      this.failingSince = this.stats.dropped.export_failed + this.stats.dropped.queue_full;
      this.options.log.warn(`${this.options.target} failed (${outcome.error}); spans are dropped and counted until it works again`);
    }
    this.lost("export_failed", batch.length);
  }
}

function describeDrops(dropped: Record<DropReason, number>): string {
  return Object.entries(dropped)
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => `${reason.replace("_", " ")}: ${count}`)
    .join(", ");
}
