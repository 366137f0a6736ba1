import { VERSION } from "../../version.ts";

/**
 * Traces (docs/governance.md, "Traces"): what the shim and the governance service record spans
 * through. Without `telemetry.otlp` in the user's policy everything goes to `NO_TRACER`, which
 * records and allocates nothing; a governed request costs one `tracer.on` check. The recording
 * tracer, the export queue and the OTLP exporter are loaded (dynamic import, start.ts) only when
 * tracing is configured, so a shim without it keeps its start-up time and memory.
 */
export type SpanKind = "internal" | "server" | "client";
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** One span's W3C trace context: 32 and 16 lower-case hex digits. */
export type SpanContext = { traceId: string; spanId: string };

export type StartOptions = {
  kind?: SpanKind;
  /** The parent; absent: the tracer's root (the session's span), null: a new trace. */
  parent?: SpanContext | null;
  links?: SpanContext[];
  attributes?: Attributes;
};

export interface Span {
  /** null for the no-op span (tracing is off). */
  readonly context: SpanContext | null;
  set(attributes: Attributes): void;
  event(name: string, attributes?: Attributes): void;
  /** Status ERROR with this description (already redacted by the caller). */
  fail(description: string): void;
  /** Idempotent: only the first end counts. */
  end(): void;
}

/** What is kept of a span once it ended: what the exporter and the relay to the service carry. */
export type SpanRecord = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  /** Milliseconds since the epoch, with a fraction. */
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events: Array<{ name: string; timeMs: number; attributes: Attributes }>;
  links: SpanContext[];
  status: { code: "unset" | "error"; message?: string };
};

/** Why spans were lost: the bounded queue was full, the collector refused or was unreachable, or time ran out at exit. */
export const DROP_REASONS = ["queue_full", "export_failed", "shutdown"] as const;
export type DropReason = (typeof DROP_REASONS)[number];
export type TracerStats = { exported: number; dropped: Record<DropReason, number> };

export interface Tracer {
  readonly on: boolean;
  /** The root every span without a parent of its own hangs under (the session's span), if any. */
  readonly root: SpanContext | null;
  /** Start the session's span (a shim's, or a wrap or serve service's): it becomes the root. */
  session(name: string, attributes: Attributes): Span;
  start(name: string, options?: StartOptions): Span;
  /** Spans recorded in another process (a wrap session's shims), handed to this tracer's exporter. */
  ingest(records: SpanRecord[], resource: Attributes, droppedThere: Partial<Record<DropReason, number>>): void;
  readonly stats: TracerStats;
  /** Export what is queued, waiting at most `budgetMs`; what is left is dropped (`shutdown`). */
  close(budgetMs?: number): Promise<void>;
}

/** What spans come from (the OTLP resource): $OTEL_SERVICE_NAME or `thoughtgate`, and which part of it. */
export function baseResource(component: "shim" | "wrap" | "serve" | "arbiter" | "hook", env: NodeJS.ProcessEnv = process.env): Attributes {
  return { "service.name": env.OTEL_SERVICE_NAME?.trim() || "thoughtgate", "service.version": VERSION, "thoughtgate.component": component };
}

const NO_SPAN: Span = {
  context: null,
  set: () => {},
  event: () => {},
  fail: () => {},
  end: () => {},
};

const NO_STATS: TracerStats = { exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } };

export const NO_TRACER: Tracer = {
  on: false,
  root: null,
  session: () => NO_SPAN,
  start: () => NO_SPAN,
  ingest: () => {},
  stats: NO_STATS,
  close: async () => {},
};
