import { hostname } from "node:os";
import { ThoughtGateError } from "../core/errors.ts";
import { localUserName } from "../core/user-name.ts";
import { checkProtocol, signalUrl, type OtlpSettings } from "../telemetry/tracing/otlp-target.ts";
import { VERSION } from "../version.ts";
import { tailCalls } from "./follow.ts";
import type { AuditExportStats } from "./otlp-logs.ts";

export type { AuditExportStats };

/** At the session's end, how long the records still queued may take to leave. */
export const AUDIT_FLUSH_MS = 2_000;
/** One export's limit when no OTEL_EXPORTER_OTLP_*TIMEOUT says otherwise (the OpenTelemetry default). */
const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;

export type AuditExport = { readonly url: string; stats(): AuditExportStats; stop(): Promise<void> };

/**
 * Send a session's record on to the team's log pipeline as OTLP logs (docs/governance.md, "The
 * audit in your log pipeline"): every call of the record file as it ends, read from the file by
 * the process that runs the session (wrap), never by the shims, so a slow or absent collector
 * costs the calls nothing. The URL is `telemetry.otlp.endpoint` + `/v1/logs` (or the standard
 * OTEL_EXPORTER_OTLP_* variables), checked as the traces' is; OpenTelemetry loads only here.
 */
export async function startAuditExport(options: { eventsPath: string; session: string; otlp: OtlpSettings; env?: NodeJS.ProcessEnv }): Promise<AuditExport> {
  const env = options.env ?? process.env;
  checkProtocol(env, "logs");
  const { url } = signalUrl("logs", options.otlp, env);
  const { AuditLogExporter } = await import("./otlp-logs.ts");
  const timeoutMs = exportTimeoutMs(env);
  const exporter = new AuditLogExporter(
    url,
    options.otlp.headers ?? {},
    {
      "service.name": env.OTEL_SERVICE_NAME?.trim() || "thoughtgate",
      "service.version": VERSION,
      "user.name": localUserName(env) ?? "unknown",
      "host.name": hostname(),
    },
    timeoutMs,
  );
  const tail = tailCalls(options.eventsPath, options.session, (call) => exporter.emit(call));
  return {
    url,
    stats: () => exporter.stats,
    async stop() {
      tail.stop();
      await exporter.close(AUDIT_FLUSH_MS);
    },
  };
}

/**
 * OTEL_EXPORTER_OTLP_LOGS_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT: milliseconds, as the
 * OpenTelemetry exporter specification has them; else 10 s. A value that is not a whole number is
 * the same kind of error as an OTLP protocol this exporter does not speak (otlp-target.ts).
 */
function exportTimeoutMs(env: NodeJS.ProcessEnv): number {
  for (const name of ["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"]) {
    const value = env[name]?.trim();
    if (value === undefined || value === "") continue;
    if (!/^\d+$/.test(value) || Number(value) === 0) throw new ThoughtGateError("CONFIG", `$${name}=${value}: expected the export timeout in milliseconds (a whole number above 0, e.g. 10000)`);
    return Number(value);
  }
  return DEFAULT_EXPORT_TIMEOUT_MS;
}
