import { newSpanId, newTraceId } from "./trace-context.ts";
import type { Attributes, AttributeValue, DropReason, Span, SpanContext, SpanRecord, StartOptions, Tracer, TracerStats } from "./tracer.ts";

/** Bounds on what one span holds, so a hostile value cannot make a span (or a batch) huge. */
export const MAX_ATTRIBUTE_CHARS = 512;
export const MAX_ATTRIBUTES = 32;
export const MAX_EVENTS = 8;
export const MAX_EVENT_ATTRIBUTES = 8;
export const MAX_LINKS = 4;
export const MAX_NAME_CHARS = 128;

/** Where finished spans go: the export queue (span-queue.ts), with the resource they belong to. */
export type SpanSink = {
  push(record: SpanRecord, resource: Attributes): void;
  /** Spans lost before they reached this process (a shim's relay), counted with this queue's own. */
  lost(reason: DropReason, count: number): void;
  readonly stats: TracerStats;
  close(budgetMs: number): Promise<void>;
};

/** Wall-clock milliseconds with a sub-millisecond fraction (performance.now() does not jump). */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The tracer in use when tracing is configured: spans are plain records handed to a sink. */
export class RecordingTracer implements Tracer {
  readonly on = true;

  /** `parent`: where the session's span hangs (a wrap session's, or $TRACEPARENT's), if anywhere. */
  constructor(
    private readonly sink: SpanSink,
    private readonly resource: Attributes,
    private parent: SpanContext | null,
  ) {}

  get root(): SpanContext | null {
    return this.parent;
  }

  session(name: string, attributes: Attributes): Span {
    const span = this.start(name, { attributes });
    this.parent = span.context;
    return span;
  }

  get stats(): TracerStats {
    return this.sink.stats;
  }

  start(name: string, options: StartOptions = {}): Span {
    const parent = options.parent === undefined ? this.parent : options.parent;
    const record: SpanRecord = {
      traceId: parent?.traceId ?? newTraceId(),
      spanId: newSpanId(),
      parentSpanId: parent?.spanId ?? null,
      name: cap(name, MAX_NAME_CHARS),
      kind: options.kind ?? "internal",
      startMs: nowMs(),
      endMs: 0,
      attributes: {},
      events: [],
      links: (options.links ?? []).slice(0, MAX_LINKS),
      status: { code: "unset" },
    };
    const span = new RecordedSpan(record, (done) => this.sink.push(done, this.resource));
    if (options.attributes) span.set(options.attributes);
    return span;
  }

  ingest(records: SpanRecord[], resource: Attributes, droppedThere: Partial<Record<DropReason, number>>): void {
    for (const record of records) this.sink.push(record, resource);
    for (const [reason, count] of Object.entries(droppedThere) as Array<[DropReason, number]>) if (count > 0) this.sink.lost(reason, count);
  }

  close(budgetMs = 1_000): Promise<void> {
    return this.sink.close(budgetMs);
  }
}

class RecordedSpan implements Span {
  private ended = false;
  private attributeCount = 0;
  readonly context: SpanContext;

  constructor(
    private readonly record: SpanRecord,
    private readonly finish: (record: SpanRecord) => void,
  ) {
    this.context = { traceId: record.traceId, spanId: record.spanId };
  }

  set(attributes: Attributes): void {
    if (this.ended) return;
    const target = this.record.attributes;
    for (const key in attributes) {
      if (!(key in target)) {
        if (this.attributeCount >= MAX_ATTRIBUTES) break;
        this.attributeCount += 1;
      }
      target[key] = bounded(attributes[key] as AttributeValue);
    }
  }

  event(name: string, attributes: Attributes = {}): void {
    if (this.ended || this.record.events.length >= MAX_EVENTS) return;
    const kept: Attributes = {};
    for (const [key, value] of Object.entries(attributes).slice(0, MAX_EVENT_ATTRIBUTES)) kept[key] = bounded(value);
    this.record.events.push({ name: cap(name, MAX_NAME_CHARS), timeMs: nowMs(), attributes: kept });
  }

  fail(description: string): void {
    if (this.ended) return;
    this.record.status = { code: "error", message: cap(description, MAX_ATTRIBUTE_CHARS) };
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.record.endMs = Math.max(nowMs(), this.record.startMs);
    this.finish(this.record);
  }
}

function bounded(value: AttributeValue): AttributeValue {
  return typeof value === "string" ? cap(value, MAX_ATTRIBUTE_CHARS) : value;
}

function cap(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
