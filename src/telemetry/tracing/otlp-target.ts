import { isSafeUrl } from "../../core/safe-url.ts";
import { ThoughtGateError } from "../../core/errors.ts";

/** `telemetry.otlp` of the user's policy (core/config/schema.ts). */
export type OtlpSettings = { endpoint?: string | undefined; headers?: Record<string, string> | undefined };

const DEFAULT_BASE = "http://localhost:4318/";

/** The OTLP signals ThoughtGate exports: spans, and the audit's calls as log records. */
export type Signal = "traces" | "logs";

/**
 * Where spans are posted, as the OpenTelemetry exporter specification says, the policy's value
 * first: `telemetry.otlp.endpoint` (a collector's base URL, like OTEL_EXPORTER_OTLP_ENDPOINT:
 * `/v1/traces` is appended unless the URL already ends with it), then
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is), then OTEL_EXPORTER_OTLP_ENDPOINT (base),
 * then `http://localhost:4318/v1/traces`. The URL is passed to the exporter explicitly, so the one
 * checked here is the one used: https, or plain http only to this machine (the same rule as a
 * Slack `base_url`), never with `user:password@`. Spans name tools, servers and rules, and the
 * headers usually carry the collector's API key: neither goes over the network in clear text.
 */
export function tracesUrl(settings: OtlpSettings, env: NodeJS.ProcessEnv): { url: string; from: string } {
  return signalUrl("traces", settings, env);
}

/**
 * The same for any signal: `/v1/logs` and OTEL_EXPORTER_OTLP_LOGS_ENDPOINT for the audit's log
 * records (docs/governance.md, "The audit in your log pipeline"), by the same rules.
 */
export function signalUrl(signal: Signal, settings: OtlpSettings, env: NodeJS.ProcessEnv): { url: string; from: string } {
  const path = `v1/${signal}`;
  const specific = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`;
  const given = settings.endpoint !== undefined
    ? { value: withPath(settings.endpoint, path), from: "telemetry.otlp.endpoint" }
    : nonEmpty(env[specific])
      ? { value: (env[specific] as string).trim(), from: `$${specific}` }
      : nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)
        ? { value: withPath((env.OTEL_EXPORTER_OTLP_ENDPOINT as string).trim(), path), from: "$OTEL_EXPORTER_OTLP_ENDPOINT" }
        : { value: `${DEFAULT_BASE}${path}`, from: "the OTLP default" };
  if (!isSafeUrl(given.value)) {
    throw new ThoughtGateError("CONFIG", `${given.from}: OTLP ${signal} go only to an https:// URL, or http:// to 127.0.0.1, [::1] or localhost, without user:password@ (got ${describe(given.value)})`);
  }
  return { url: given.value, from: given.from };
}

/**
 * The exporter speaks OTLP over HTTP with JSON bodies, which every OTLP/HTTP receiver accepts
 * alongside protobuf; gRPC is another port and protocol altogether, so asking for it is an error
 * rather than spans sent where nothing understands them.
 */
export function checkProtocol(env: NodeJS.ProcessEnv, signal: Signal = "traces"): void {
  for (const name of [`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`, "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const value = env[name]?.trim();
    if (value === undefined || value === "") continue;
    if (value === "http/json" || value === "http/protobuf") return;
    throw new ThoughtGateError("CONFIG", `$${name}=${value}: ThoughtGate exports OTLP ${signal} over HTTP (http/json); use the collector's OTLP/HTTP endpoint (port 4318) and unset it or set http/json`);
  }
}

function withPath(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith(`/${path}`) ? trimmed : `${trimmed}/${path}`;
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}

/** The URL without anything that could be a credential (user info, query), for an error line. */
function describe(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "a value that is not a URL";
  }
}
