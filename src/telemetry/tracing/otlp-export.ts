/**
 * The one place that loads OpenTelemetry, and only when `telemetry.otlp` is configured (start.ts
 * imports this file dynamically): the design card's exporter, `@opentelemetry/exporter-trace-otlp-http`,
 * fed with the spans our own small recorder made (recorder.ts). Not the SDK's tracer provider and
 * batch processor: the spans of a wrap session's shims are recorded in other processes and must
 * go out through the same exporter, and the queue in front of it (span-queue.ts) must count what
 * it drops for `/metrics`, which the SDK's processor keeps to itself. Bundled, the exporter and
 * what it pulls in (api, core, resources, otlp-transformer's JSON path) is about 25 KB.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import type { QueuedSpan, SendOutcome } from "./span-queue.ts";
import type { Attributes, SpanKind, SpanRecord } from "./tracer.ts";
import type { OtlpSettings } from "./otlp-target.ts";
import { VERSION } from "../../version.ts";

type ReadableSpan = Parameters<OTLPTraceExporter["export"]>[0][number];
type Resource = ReadableSpan["resource"];
type HrTime = ReadableSpan["startTime"];

/** OpenTelemetry's SpanKind and SpanStatusCode values (the api package's enums). */
const KIND: Record<SpanKind, number> = { internal: 0, server: 1, client: 2 };
const STATUS_ERROR = 2;
const STATUS_UNSET = 0;
const SAMPLED = 1;
const EXPORT_SUCCESS = 0;

const SCOPE = { name: "thoughtgate", version: VERSION };

export type OtlpSender = { send(batch: QueuedSpan[]): Promise<SendOutcome>; shutdown(): Promise<void> };

/**
 * An exporter for `url` (already checked: otlp-target.ts) with the policy's headers. Timeout,
 * compression, certificates and further headers come from the standard OTEL_EXPORTER_OTLP_*
 * variables, which the exporter reads itself; the policy's headers win over theirs.
 */
export function otlpSender(url: string, settings: OtlpSettings): OtlpSender {
  const exporter = new OTLPTraceExporter({ url, headers: { ...(settings.headers ?? {}) } });
  const resources = new WeakMap<Attributes, Resource>();
  const resourceOf = (attributes: Attributes): Resource => {
    let found = resources.get(attributes);
    if (!found) {
      found = resourceFromAttributes(attributes);
      resources.set(attributes, found);
    }
    return found;
  };
  return {
    send: (batch) =>
      new Promise<SendOutcome>((resolve) => {
        const spans = batch.map(({ record, resource }) => readable(record, resourceOf(resource)));
        exporter.export(spans, (result) => {
          resolve(result.code === EXPORT_SUCCESS ? { ok: true } : { ok: false, error: result.error?.message ?? "export failed" });
        });
      }),
    shutdown: () => exporter.shutdown(),
  };
}

/** Our record as the exporter's `ReadableSpan`: the transformer reads exactly these fields. */
function readable(record: SpanRecord, resource: Resource): ReadableSpan {
  const context = { traceId: record.traceId, spanId: record.spanId, traceFlags: SAMPLED };
  return {
    name: record.name,
    kind: KIND[record.kind],
    spanContext: () => context,
    ...(record.parentSpanId ? { parentSpanContext: { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: SAMPLED } } : {}),
    startTime: hrTime(record.startMs),
    endTime: hrTime(record.endMs),
    duration: hrTime(record.endMs - record.startMs),
    status: record.status.code === "error" ? { code: STATUS_ERROR, ...(record.status.message ? { message: record.status.message } : {}) } : { code: STATUS_UNSET },
    attributes: record.attributes,
    links: record.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: SAMPLED } })),
    events: record.events.map((event) => ({ name: event.name, time: hrTime(event.timeMs), attributes: event.attributes })),
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}
