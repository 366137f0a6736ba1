import type { JsonRpcRequest, JsonRpcResponse } from "../core/jsonrpc.ts";
import { argsHash } from "../core/canonical-json.ts";
import type { Profile } from "../core/profile.ts";
import type { Verdict } from "../governance/verdict/decider.ts";
import { callSpanName, requestAttributes, verdictAttributes } from "../pipeline/call-spans.ts";
import type { CallStatus } from "../telemetry/events.ts";
import { redactText } from "../telemetry/redact.ts";
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

/** One governed request's spans, ended exactly once whichever way the request ends. */
export class RequestTrace {
  private wait: Span | null = null;
  private client: Span | null = null;
  private failed = false;
  private done = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly name: string,
    private readonly call: Attributes,
  ) {}

  /** Where the decider records the gates (or whose context it hands to the governance service): the request's span. */
  get deciding(): Span {
    return this.span;
  }

  /** The decision now waits for a person. */
  waiting(): void {
    if (this.wait || this.done) return;
    this.wait = this.tracer.start("thoughtgate.approval", { parent: this.span.context, attributes: { "thoughtgate.server_id": this.call["thoughtgate.server_id"] as string } });
  }

  decided(verdict: Verdict): void {
    if (this.done) return;
    this.span.set(verdictAttributes(verdict));
    if (this.wait) {
      this.wait.set({ "thoughtgate.approval.outcome": verdict.action === "forward" ? "approved" : "denied", ...(verdict.action === "forward" && verdict.approvedBy ? { "thoughtgate.approved_by": verdict.approvedBy } : {}) });
      this.wait.end();
      this.wait = null;
    }
    if (verdict.action === "deny") this.fail(this.span, String(verdict.error.code), verdict.error.message);
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

  /** The request ended another way (denied, cancelled, the server gone, answered by our question). */
  end(status: CallStatus): void {
    if (this.done) return;
    if (!this.failed && status !== "ok" && status !== "input_required" && status !== "denied") {
      this.span.set({ "error.type": status });
      this.span.fail(status);
      this.client?.set({ "error.type": status });
      this.client?.fail(status);
    }
    this.finish();
  }

  private fail(span: Span, code: string, message: string): void {
    span.set({ "error.type": code, "rpc.response.status_code": code });
    span.fail(redactText(message));
    if (span === this.span) this.failed = true;
  }

  private finish(): void {
    this.done = true;
    for (const span of [this.wait, this.client, this.span]) span?.end();
  }
}
