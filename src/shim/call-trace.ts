import type { JsonRpcRequest, JsonRpcResponse } from "../core/jsonrpc.ts";
import { argsHash } from "../core/canonical-json.ts";
import type { Profile } from "../core/profile.ts";
import { callSpanName, requestAttributes, ToolCallSpans } from "../pipeline/call-spans.ts";
import type { CallStatus } from "../telemetry/events.ts";
import { withTraceparent } from "../telemetry/tracing/meta-splice.ts";
import { formatTraceparent, parseTraceparent } from "../telemetry/tracing/trace-context.ts";
import type { Attributes, Span, Tracer } from "../telemetry/tracing/tracer.ts";
import { metaOf, META_VERSION } from "./era.ts";

export type CallTracerOptions = {
  tracer: Tracer;
  serverId: string;
  profile: Profile;
  runId: string;
  /** How the agent reaches the shim, and the shim the server (`network.transport`: pipe for stdio, tcp for HTTP). */
  agentTransport: "pipe" | "tcp";
  serverTransport: "pipe" | "tcp";
  /** A remote server's host and port (`server.address`, `server.port`). */
  serverAddress?: { host: string; port: number };
};

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The shim's spans of governed requests, after the OpenTelemetry semantic conventions for MCP: a
 * SERVER span per request from the agent (`tools/call echo`), continuing the agent's
 * `params._meta.traceparent` when it sent one (the shim's session span is then a link) and
 * hanging under the session's span when not. It carries the decision, and the gates as events
 * (or, decided by the governance service, that service's span beneath it); under it a
 * `thoughtgate.approval` span for the time a person took, and a CLIENT span for the call to the
 * server, whose context the server gets in `_meta`. Two spans for a call that is let through: a
 * third for the decision alone measured as a quarter more CPU per traced call, for a span whose
 * time is the request's own up to the forward. Loaded only when tracing is on (proxy.ts); no attribute holds arguments, and
 * every text that could hold a credential goes through the redactor.
 */
export class CallTracer {
  /** The protocol version the server answered `initialize` with (legacy era; modern requests carry theirs). */
  private negotiated: string | null = null;

  constructor(private readonly options: CallTracerOptions) {}

  begin(request: JsonRpcRequest, knownArgsHash: string | undefined): RequestTrace {
    const { tracer } = this.options;
    const name = callSpanName(request);
    const meta = metaOf(request.params);
    const version = typeof meta?.[META_VERSION] === "string" ? (meta[META_VERSION] as string) : this.negotiated;
    const call = requestAttributes(request, this.options.serverId);
    const attributes: Attributes = {
      ...call,
      "network.transport": this.options.agentTransport,
      "thoughtgate.profile": this.options.profile,
      "thoughtgate.run_id": this.options.runId,
    };
    if (version) attributes["mcp.protocol.version"] = version;
    if (request.method === "tools/call") {
      attributes["thoughtgate.args_hash"] = knownArgsHash || argsHash((request.params as { arguments?: unknown }).arguments);
    }
    // The agent's context is the parent (its trace goes on through us); the session's span, the
    // ambient context, is linked (OpenTelemetry semantic conventions for MCP, "Context propagation").
    const agentParent = parseTraceparent(meta?.traceparent);
    const root = tracer.root;
    const span = tracer.start(name, {
      kind: "server",
      ...(agentParent ? { parent: agentParent, links: root ? [root] : [] } : {}),
      attributes,
    });
    const server: Attributes = { "network.transport": this.options.serverTransport };
    if (this.options.serverAddress) Object.assign(server, { "server.address": this.options.serverAddress.host, "server.port": this.options.serverAddress.port });
    return new RequestTrace(tracer, span, name, { ...call, ...server });
  }

  /** A response to the agent's request: `initialize`'s protocol version is remembered; a governed call's spans end. */
  response(entry: { method: string; trace?: RequestTrace }, message: JsonRpcResponse): void {
    if (entry.method === "initialize" && !message.isError) {
      const version = (message.body.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof version === "string") this.negotiated = version.slice(0, 64);
    }
    entry.trace?.answered(message);
  }
}

/**
 * One governed request's spans, ended exactly once whichever way the request ends: those of any
 * call (call-spans.ts), and the CLIENT span of its call to the server.
 */
export class RequestTrace extends ToolCallSpans {
  private client: Span | null = null;

  constructor(
    tracer: Tracer,
    span: Span,
    private readonly name: string,
    private readonly call: Attributes,
  ) {
    super(tracer, span, call["thoughtgate.server_id"] as string);
  }

  /** The request goes to the server: its CLIENT span starts, and its context goes in a copy of the bytes. */
  forwarded(bytes: Uint8Array): Uint8Array {
    if (this.done) return bytes;
    this.client = this.tracer.start(this.name, { kind: "client", parent: this.span.context, attributes: this.call });
    const context = this.client.context;
    if (!context) return bytes;
    const spliced = withTraceparent(decoder.decode(bytes), formatTraceparent(context));
    return spliced === null ? bytes : encoder.encode(spliced);
  }

  answered(message: JsonRpcResponse): void {
    if (this.done) return;
    if (message.isError) {
      const error = message.body.error as { code?: unknown; message?: unknown } | undefined;
      const code = typeof error?.code === "number" ? String(error.code) : "_OTHER";
      const text = typeof error?.message === "string" ? error.message : code;
      for (const span of [this.client, this.span]) if (span) this.fail(span, code, text);
    } else if ((message.body.result as { isError?: unknown } | undefined)?.isError === true) {
      for (const span of [this.client, this.span]) {
        span?.set({ "error.type": "tool_error" });
        span?.fail("tool_error");
      }
      this.failed = true;
    }
    this.finish();
  }

  /** A request that ended another way (cancelled, the server gone) is named by its status; an error the server answered went through `answered`. */
  protected override errorType(status: CallStatus): string {
    return status;
  }

  protected override failedAs(type: string): void {
    super.failedAs(type);
    this.client?.set({ "error.type": type });
    this.client?.fail(type);
  }

  protected override finish(): void {
    this.done = true;
    for (const span of [this.wait, this.client, this.span]) span?.end();
  }
}
