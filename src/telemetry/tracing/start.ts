import { log } from "../../core/log.ts";
import { RecordingTracer } from "./recorder.ts";
import { SpanQueue, type QueuedSpan, type SendOutcome } from "./span-queue.ts";
import { parseTraceparent } from "./trace-context.ts";
import { NO_TRACER, type Attributes, type DropReason, type SpanContext, type SpanRecord, type Tracer } from "./tracer.ts";
import type { OtlpSettings } from "./otlp-target.ts";

/** What one POST /governance/spans carries: a shim's finished spans and what it lost since the last one. */
export type RelayBody = { spans: SpanRecord[]; dropped: Partial<Record<DropReason, number>> };

/**
 * How a process traces: `export` (a standalone shim, `serve`, `wrap`'s service: its own exporter,
 * from `telemetry.otlp` of the user's policy), or `relay` (a shim under a governance service that
 * traces: its spans go to the service, which exports them with its own, so the collector's
 * address and headers never leave the service and the shim never loads OpenTelemetry).
 */
export type TracingPlan =
  | { kind: "export"; otlp: OtlpSettings }
  | { kind: "relay"; parent: SpanContext; target: string; send(body: RelayBody): Promise<SendOutcome> };

/** The standard batch settings (OpenTelemetry SDK configuration, OTEL_BSP_*), and their defaults. */
const BATCH_DEFAULTS = { OTEL_BSP_SCHEDULE_DELAY: 5_000, OTEL_BSP_MAX_QUEUE_SIZE: 2_048, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 512 };
/** A relay body stays far below the service's body limit whatever the batch setting. */
const MAX_RELAY_BATCH = 128;

/**
 * The tracer for `plan`. `resource`: what the spans come from (service.name and the like). Throws a
 * CONFIG error for a collector URL that is not allowed (otlp-target.ts); OTEL_SDK_DISABLED=true
 * turns tracing off, as it does for every OpenTelemetry SDK.
 */
export async function startTracer(plan: TracingPlan, resource: Attributes, env: NodeJS.ProcessEnv = process.env): Promise<Tracer> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") {
    log.info("OTEL_SDK_DISABLED=true: traces are not exported");
    return NO_TRACER;
  }
  const batch = {
    delayMs: setting(env, "OTEL_BSP_SCHEDULE_DELAY", 0),
    maxQueue: setting(env, "OTEL_BSP_MAX_QUEUE_SIZE", 1),
    maxBatch: setting(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1),
  };
  batch.maxBatch = Math.min(batch.maxBatch, batch.maxQueue);
  if (plan.kind === "relay") {
    const reported: Record<DropReason, number> = { queue_full: 0, export_failed: 0, shutdown: 0 };
    const queue: SpanQueue = new SpanQueue({
      ...batch,
      maxBatch: Math.min(batch.maxBatch, MAX_RELAY_BATCH),
      target: plan.target,
      log,
      send: async (items: QueuedSpan[]) => {
        // What this shim lost since its last delivered report goes with the spans, for the service's /metrics.
        const snapshot = { ...queue.stats.dropped };
        const outcome = await plan.send({ spans: items.map((item) => item.record), dropped: sinceLastReport(snapshot, reported) });
        if (outcome.ok) Object.assign(reported, snapshot);
        return outcome;
      },
    });
    return new RecordingTracer(queue, resource, plan.parent);
  }
  const { checkProtocol, tracesUrl } = await import("./otlp-target.ts");
  checkProtocol(env);
  const { url } = tracesUrl(plan.otlp, env);
  const { otlpSender } = await import("./otlp-export.ts");
  const sender = otlpSender(url, plan.otlp);
  const queue = new SpanQueue({ ...batch, target: `OTLP export to ${url}`, log, send: (items) => sender.send(items) });
  // OpenTelemetry's environment carrier: a process started inside a trace ($TRACEPARENT) joins it.
  return new RecordingTracer(queue, resource, parseTraceparent(env.TRACEPARENT));
}

function setting(env: NodeJS.ProcessEnv, name: keyof typeof BATCH_DEFAULTS, min: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return BATCH_DEFAULTS[name];
  const value = Number(raw);
  if (Number.isInteger(value) && value >= min) return value;
  log.warn(`$${name}=${raw} is not a whole number of at least ${min}; using ${BATCH_DEFAULTS[name]}`);
  return BATCH_DEFAULTS[name];
}

function sinceLastReport(now: Record<DropReason, number>, reported: Record<DropReason, number>): Partial<Record<DropReason, number>> {
  const delta: Partial<Record<DropReason, number>> = {};
  for (const reason of Object.keys(now) as DropReason[]) {
    const change = now[reason] - reported[reason];
    if (change > 0) delta[reason] = change;
  }
  return delta;
}
