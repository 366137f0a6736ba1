/**
 * The audit's calls as OTLP log records (docs/governance.md, "The audit in your log pipeline"):
 * loaded only when the user's policy has `telemetry.otlp` (audit-export.ts imports this file on
 * demand). The OpenTelemetry SDK does the batching (`BatchLogRecordProcessor`) and the exporter the
 * wire (`@opentelemetry/exporter-logs-otlp-http`, OTLP/HTTP JSON); in front of them a bound of our
 * own, so nothing the SDK would drop silently is lost uncounted: a record is handed to the SDK only
 * while fewer than the queue's size are on their way, otherwise it is counted `queue_full`; a batch
 * the collector did not take is counted `export_failed`, and what is still on its way at exit
 * `shutdown` (for `/metrics`). The local JSONL is the record either way: nothing here writes it.
 *
 * Each call becomes one record when it ends, with the arguments as `thoughtgate log` shows them
 * (redacted). The resource says where it comes from, for a collector to route on: the user, the
 * host, the agent, the project, the session and the server (one logger provider per such place).
 */
import type { Attributes, Logger } from "@opentelemetry/api";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { messageOf } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { decidedByText, type LogCall } from "./log-call.ts";
import { redact, redactText } from "../telemetry/redact.ts";

/** Records on their way (in the SDK's queue or being exported) before new ones are counted as dropped. */
const AUDIT_QUEUE_RECORDS = 2_048;
const BATCH_RECORDS = 512;
const SCHEDULED_DELAY_MS = 1_000;
const EXPORT_SUCCESS = 0;
/** OpenTelemetry's SeverityNumber: INFO, WARN, ERROR. */
const SEVERITY = { info: 9, warn: 13, error: 17 } as const;

type AuditDropReason = "queue_full" | "export_failed" | "shutdown";
export type AuditExportStats = { exported: number; dropped: Record<AuditDropReason, number> };

/** Where the records come from, the same for every call of this exporter (user, host, service). */
export type AuditResource = Record<string, string>;

export class AuditLogExporter {
  readonly stats: AuditExportStats = { exported: 0, dropped: { queue_full: 0, export_failed: 0, shutdown: 0 } };
  private onTheirWay = 0;
  /** While the collector fails: how many had been dropped when it started failing (said once, as the traces' queue does). */
  private failingSince: number | null = null;
  private readonly exporter: OTLPLogExporter;
  private readonly providers = new Map<string, { provider: LoggerProvider; logger: Logger }>();

  /** `timeoutMs`: how long one export may take (OTEL_EXPORTER_OTLP_LOGS_TIMEOUT / _TIMEOUT: audit-export.ts). */
  constructor(
    private readonly url: string,
    headers: Record<string, string>,
    private readonly resource: AuditResource,
    private readonly timeoutMs: number,
  ) {
    this.exporter = new OTLPLogExporter({ url, headers: { ...headers }, timeoutMillis: timeoutMs });
  }

  /** One ended call, out of the call path: queued, or counted as dropped when the queue is full. */
  emit(call: LogCall): void {
    if (this.onTheirWay >= AUDIT_QUEUE_RECORDS) {
      this.stats.dropped.queue_full += 1;
      return;
    }
    this.onTheirWay += 1;
    const severity = call.outcome === "errored" ? "error" : call.outcome === "denied" ? "warn" : "info";
    this.loggerFor(call).emit({
      timestamp: new Date(call.ended ?? call.time),
      severityNumber: SEVERITY[severity],
      severityText: severity.toUpperCase(),
      eventName: "thoughtgate.call",
      body: `${call.server}.${redactText(call.tool)} ${call.outcome}${call.decided_by ? ` by ${decidedByText(call.decided_by)}` : ""}`,
      attributes: attributesOf(call),
    });
  }

  /** Send what is queued (within `timeoutMs`), then stop; whatever did not leave is counted `shutdown`. */
  async close(timeoutMs: number): Promise<void> {
    const all = Promise.all([...this.providers.values()].map(({ provider }) => provider.shutdown()));
    await Promise.race([all, Bun.sleep(timeoutMs)]);
    this.stats.dropped.shutdown += this.onTheirWay;
    this.onTheirWay = 0;
    await Promise.race([this.exporter.shutdown(), Bun.sleep(100)]);
  }

  private loggerFor(call: LogCall): Logger {
    const key = JSON.stringify([call.server, call.agent, call.project, call.session]);
    let found = this.providers.get(key);
    if (!found) {
      const resource = resourceFromAttributes({
        ...this.resource,
        "thoughtgate.server_id": call.server,
        ...(call.agent ? { "thoughtgate.agent": call.agent } : {}),
        ...(call.agent_command ? { "thoughtgate.agent.command": call.agent_command.join(" ") } : {}),
        ...(call.project ? { "thoughtgate.project": call.project } : {}),
        ...(call.session ? { "thoughtgate.session": call.session } : {}),
      });
      const processor = new BatchLogRecordProcessor({
        exporter: this.counting(),
        maxQueueSize: AUDIT_QUEUE_RECORDS,
        maxExportBatchSize: BATCH_RECORDS,
        scheduledDelayMillis: SCHEDULED_DELAY_MS,
        exportTimeoutMillis: this.timeoutMs,
      });
      const provider = new LoggerProvider({ resource, processors: [processor] });
      found = { provider, logger: provider.getLogger("thoughtgate.audit") };
      this.providers.set(key, found);
    }
    return found.logger;
  }

  private exported(count: number): void {
    this.stats.exported += count;
    if (this.failingSince === null) return;
    log.info(`OTLP logs export to ${this.url} works again (${this.stats.dropped.export_failed - this.failingSince} record(s) dropped meanwhile)`);
    this.failingSince = null;
  }

  /** Counted; said once until the collector takes a batch again (the session's log, or stderr). */
  private failed(count: number, why: string): void {
    if (this.failingSince === null) {
      this.failingSince = this.stats.dropped.export_failed;
      log.warn(`OTLP logs export to ${this.url} failed (${why}); the audit's records are dropped and counted until it works again (the local record keeps every call)`);
    }
    this.stats.dropped.export_failed += count;
  }

  /** The exporter, counting what the collector took and what it did not. */
  private counting(): LogRecordExporter {
    return {
      export: (records, done) => {
        this.exporter.export(records, (result) => {
          this.onTheirWay -= records.length;
          if (result.code === EXPORT_SUCCESS) this.exported(records.length);
          else this.failed(records.length, result.error === undefined ? "export failed" : messageOf(result.error));
          done(result);
        });
      },
      // The one exporter is shared by every provider: it is shut down once, in close().
      shutdown: async () => {},
      forceFlush: async () => {},
    };
  }
}

/** A call's fields as log attributes (the arguments as one JSON string, redacted again). */
function attributesOf(call: LogCall): Attributes {
  const attributes: Attributes = {
    "thoughtgate.call_id": call.call_id,
    "thoughtgate.run_id": call.run_id,
    "mcp.method.name": call.method,
    "thoughtgate.outcome": call.outcome,
    "thoughtgate.asked": call.asked,
  };
  if (call.method === "tools/call") attributes["gen_ai.tool.name"] = redactText(call.tool);
  else attributes["thoughtgate.target"] = redactText(call.tool);
  const optional: Array<[string, string | number | null]> = [
    ["thoughtgate.decision", call.decision],
    ["thoughtgate.status", call.status],
    ["thoughtgate.gate", call.gate],
    ["thoughtgate.rule_id", call.rule_id],
    ["thoughtgate.policy_id", call.policy_id],
    ["thoughtgate.reason", call.reason === null ? null : redactText(call.reason)],
    ["thoughtgate.decided_by.channel", call.decided_by?.channel ?? null],
    ["thoughtgate.decided_by.who", call.decided_by?.who ?? null],
    ["thoughtgate.decided_by.scope", call.decided_by?.scope ?? null],
    ["thoughtgate.person_reason", call.person_reason === null ? null : redactText(call.person_reason)],
    ["thoughtgate.arguments", call.arguments === null ? null : JSON.stringify(redact(call.arguments))],
    ["thoughtgate.args_hash", call.args_hash],
    ["thoughtgate.latency_ms", call.latency_ms],
    ["thoughtgate.bytes_out", call.bytes_out],
  ];
  for (const [key, value] of optional) if (value !== null) attributes[key] = value;
  return attributes;
}
