/**
 * A loopback OpenTelemetry collector for tests: an OTLP/HTTP trace and log receiver (POST /v1/traces,
 * POST /v1/logs) on port 0 that decodes what ThoughtGate's exporters send (the logs exporter is
 * `@opentelemetry/exporter-logs-otlp-http`, the same OTLP/JSON). `@opentelemetry/exporter-trace-otlp-http`
 * sends `Content-Type: application/json` (OTLP/JSON: the protobuf JSON mapping with the OTLP
 * exceptions: trace and span ids as hex, enums as integers, 64-bit integers as strings or numbers),
 * optionally gzipped; anything else is refused with 415, and a body that does not decode with 400,
 * and both are recorded in `problems` so a test sees them. The decoding is strict: a field of the
 * wrong type is a problem, not a guess.
 */
import { gunzipSync } from "node:zlib";
import { waitFor } from "./harness.ts";

export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
export type DecodedEvent = { name: string; timeNs: bigint; attributes: Record<string, Value> };
export type DecodedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: "unspecified" | "internal" | "server" | "client" | "producer" | "consumer";
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, Value>;
  events: DecodedEvent[];
  links: Array<{ traceId: string; spanId: string }>;
  status: { code: "unset" | "ok" | "error"; message?: string };
  resource: Record<string, Value>;
  scope: { name: string; version?: string };
};
export type Received = { headers: Record<string, string>; contentType: string; spans: DecodedSpan[] };
export type DecodedLog = {
  timeNs: bigint;
  severityNumber: number;
  severityText: string;
  eventName: string | null;
  body: Value;
  attributes: Record<string, Value>;
  resource: Record<string, Value>;
  scope: { name: string; version?: string };
};

const KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;
const STATUS = ["unset", "ok", "error"] as const;

export class FakeOtlpCollector {
  readonly requests: Received[] = [];
  /** Every log record received, in order. */
  readonly logs: DecodedLog[] = [];
  readonly problems: string[] = [];
  /** When set, every export is answered with this HTTP status instead of 200. */
  failWith: number | null = null;
  private readonly server: ReturnType<typeof Bun.serve>;

  constructor() {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) => this.receive(request),
    });
  }

  /** The base URL, as `telemetry.otlp.endpoint` or OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  get spans(): DecodedSpan[] {
    return this.requests.flatMap((request) => request.spans);
  }

  /** Wait until the spans received satisfy `ready` (e.g. a span of a name arrived). */
  async until(ready: (spans: DecodedSpan[]) => boolean, what: string, timeoutMs = 20_000): Promise<DecodedSpan[]> {
    await waitFor(() => ready(this.spans) || this.problems.length > 0, what, timeoutMs);
    if (this.problems.length > 0) throw new Error(`the collector could not decode what it got: ${this.problems.join("; ")}`);
    return this.spans;
  }

  /** Wait until the log records received satisfy `ready`. */
  async untilLogs(ready: (logs: DecodedLog[]) => boolean, what: string, timeoutMs = 20_000): Promise<DecodedLog[]> {
    await waitFor(() => ready(this.logs) || this.problems.length > 0, what, timeoutMs);
    if (this.problems.length > 0) throw new Error(`the collector could not decode what it got: ${this.problems.join("; ")}`);
    return this.logs;
  }

  async stop(): Promise<void> {
    await this.server.stop(true);
  }

  private async receive(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/logs")) {
      this.problems.push(`${request.method} ${path}: not the OTLP/HTTP traces or logs path`);
      return new Response("not found", { status: 404 });
    }
    const contentType = request.headers.get("content-type") ?? "";
    if (!contentType.startsWith("application/json")) {
      this.problems.push(`content-type ${contentType}: expected application/json`);
      return new Response("unsupported media type", { status: 415 });
    }
    let bytes = new Uint8Array(await request.arrayBuffer());
    if (request.headers.get("content-encoding") === "gzip") bytes = new Uint8Array(gunzipSync(bytes));
    if (path === "/v1/logs") {
      try {
        this.logs.push(...decodeLogsRequest(JSON.parse(new TextDecoder().decode(bytes))));
      } catch (error) {
        this.problems.push(`undecodable logs export: ${error instanceof Error ? error.message : String(error)}`);
        return new Response("bad request", { status: 400 });
      }
      if (this.failWith !== null) return new Response("failing on purpose", { status: this.failWith });
      return Response.json({ partialSuccess: {} });
    }
    let spans: DecodedSpan[];
    try {
      spans = decodeTraceRequest(JSON.parse(new TextDecoder().decode(bytes)));
    } catch (error) {
      this.problems.push(`undecodable export: ${error instanceof Error ? error.message : String(error)}`);
      return new Response("bad request", { status: 400 });
    }
    this.requests.push({ headers: Object.fromEntries(request.headers), contentType, spans });
    if (this.failWith !== null) return new Response("failing on purpose", { status: this.failWith });
    return Response.json({ partialSuccess: {} });
  }
}

/** ExportLogsServiceRequest (opentelemetry/proto/collector/logs/v1) in its OTLP/JSON form. */
export function decodeLogsRequest(body: unknown): DecodedLog[] {
  return eachItem(body, ["resourceLogs", "scopeLogs", "logRecords"], (record, resource, scope) => {
    const eventName = optional(record, "eventName");
    return {
      timeNs: nanos(field(record, "timeUnixNano"), "timeUnixNano"),
      severityNumber: integer(optional(record, "severityNumber") ?? 0, "severityNumber"),
      severityText: text(optional(record, "severityText") ?? "", "severityText"),
      eventName: eventName === undefined || eventName === "" ? null : text(eventName, "eventName"),
      body: optional(record, "body") === undefined ? null : anyValue(field(record, "body"), "body"),
      attributes: keyValues(optional(record, "attributes"), "attributes"),
      resource,
      scope,
    };
  });
}

/** ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1) in its OTLP/JSON form. */
export function decodeTraceRequest(body: unknown): DecodedSpan[] {
  return eachItem(body, ["resourceSpans", "scopeSpans", "spans"], decodeSpan);
}

/** Every item of an export request (resource → scope → item), decoded with its resource and scope. */
function eachItem<T>(body: unknown, [resources, scopes, items]: [string, string, string], decode: (item: unknown, resource: Record<string, Value>, scope: DecodedSpan["scope"]) => T): T[] {
  const out: T[] = [];
  for (const resourceItems of list(field(body, resources), resources)) {
    const resource = keyValues(optional(field(resourceItems, "resource"), "attributes"), "resource.attributes");
    for (const scopeItems of list(field(resourceItems, scopes), scopes)) {
      const scopeField = field(scopeItems, "scope");
      const scope = { name: text(field(scopeField, "name"), "scope.name"), ...(optional(scopeField, "version") === undefined ? {} : { version: text(field(scopeField, "version"), "scope.version") }) };
      for (const item of list(field(scopeItems, items), items)) out.push(decode(item, resource, scope));
    }
  }
  return out;
}

function decodeSpan(span: unknown, resource: Record<string, Value>, scope: DecodedSpan["scope"]): DecodedSpan {
  const parent = optional(span, "parentSpanId");
  const status = optional(span, "status");
  const code = status === undefined ? 0 : integer(optional(status, "code") ?? 0, "status.code");
  const message = status === undefined ? undefined : optional(status, "message");
  return {
    traceId: hexId(field(span, "traceId"), 32, "traceId"),
    spanId: hexId(field(span, "spanId"), 16, "spanId"),
    parentSpanId: parent === undefined || parent === "" ? null : hexId(parent, 16, "parentSpanId"),
    name: text(field(span, "name"), "name"),
    kind: enumOf(KINDS, integer(optional(span, "kind") ?? 0, "kind"), "kind"),
    startNs: nanos(field(span, "startTimeUnixNano"), "startTimeUnixNano"),
    endNs: nanos(field(span, "endTimeUnixNano"), "endTimeUnixNano"),
    attributes: keyValues(optional(span, "attributes"), "attributes"),
    events: list(optional(span, "events") ?? [], "events").map((event) => ({
      name: text(field(event, "name"), "event.name"),
      timeNs: nanos(field(event, "timeUnixNano"), "event.timeUnixNano"),
      attributes: keyValues(optional(event, "attributes"), "event.attributes"),
    })),
    links: list(optional(span, "links") ?? [], "links").map((link) => ({ traceId: hexId(field(link, "traceId"), 32, "link.traceId"), spanId: hexId(field(link, "spanId"), 16, "link.spanId") })),
    status: { code: enumOf(STATUS, code, "status.code"), ...(message === undefined || message === "" ? {} : { message: text(message, "status.message") }) },
    resource,
    scope,
  };
}

/** AnyValue: exactly one of its fields. */
function anyValue(value: unknown, at: string): Value {
  const entries = Object.entries(object(value, at));
  if (entries.length === 0) return null;
  if (entries.length > 1) throw new Error(`${at}: an AnyValue with ${entries.length} fields`);
  const [kind, inner] = entries[0] as [string, unknown];
  switch (kind) {
    case "stringValue":
      return text(inner, at);
    case "boolValue":
      if (typeof inner !== "boolean") throw new Error(`${at}: boolValue is not a boolean`);
      return inner;
    case "intValue":
      return Number(integerText(inner, at));
    case "doubleValue":
      if (typeof inner !== "number") throw new Error(`${at}: doubleValue is not a number`);
      return inner;
    case "arrayValue":
      return list(optional(inner, "values") ?? [], at).map((item, i) => anyValue(item, `${at}[${i}]`));
    case "kvlistValue":
      return keyValues(optional(inner, "values"), at);
    case "bytesValue":
      return Buffer.from(text(inner, at), "base64").toString("hex");
    default:
      throw new Error(`${at}: unknown AnyValue field ${kind}`);
  }
}

function keyValues(value: unknown, at: string): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const item of list(value ?? [], at)) {
    const key = text(field(item, "key"), `${at}.key`);
    if (key in out) throw new Error(`${at}: key ${key} twice`);
    out[key] = anyValue(field(item, "value"), `${at}.${key}`);
  }
  return out;
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${at}: expected an object`);
  return value as Record<string, unknown>;
}

function optional(value: unknown, name: string): unknown {
  return object(value, name)[name];
}

function field(value: unknown, name: string): unknown {
  const found = optional(value, name);
  if (found === undefined) throw new Error(`missing ${name}`);
  return found;
}

function list(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${at}: expected a list`);
  return value;
}

function text(value: unknown, at: string): string {
  if (typeof value !== "string") throw new Error(`${at}: expected a string`);
  return value;
}

function hexId(value: unknown, digits: number, at: string): string {
  const id = text(value, at);
  if (!new RegExp(`^[0-9a-f]{${digits}}$`).test(id)) throw new Error(`${at}: ${JSON.stringify(id)} is not ${digits} hex digits`);
  return id;
}

function integerText(value: unknown, at: string): string {
  if (typeof value === "number" && Number.isInteger(value)) return String(value);
  if (typeof value === "string" && /^-?\d+$/.test(value)) return value;
  throw new Error(`${at}: expected an integer`);
}

function integer(value: unknown, at: string): number {
  return Number(integerText(value, at));
}

function nanos(value: unknown, at: string): bigint {
  return BigInt(integerText(value, at));
}

function enumOf<T extends readonly string[]>(names: T, index: number, at: string): T[number] {
  const name = names[index];
  if (name === undefined) throw new Error(`${at}: ${index} is not a known value`);
  return name;
}
