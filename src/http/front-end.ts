import { randomUUID, timingSafeEqual } from "node:crypto";
import type { JsonRpcId } from "../core/jsonrpc.ts";
import { AgentStreams } from "./agent-streams.ts";
import { readCapped } from "./body.ts";
import { isLoopbackHost } from "../core/safe-url.ts";
import { modernVersionOf } from "./request-metadata.ts";

/**
 * `shim --listen`: the proxy's agent side as a Streamable HTTP server, for agents that reach MCP
 * servers only over HTTP. One endpoint (`/mcp`) for both eras: a 2025-11-25 agent gets a session
 * (`Mcp-Session-Id`, one per shim, ended by DELETE) and a GET stream; a 2026-07-28 agent sends
 * stateless requests, and closing a request's stream cancels it. Every request to `/mcp` needs the
 * configured bearer token; `Host` must be the listening address and a browser's `Origin` its own
 * (no DNS rebinding). `GET /health` answers without a token and says nothing else.
 */
export type FrontEndOptions = {
  hostname: string;
  port: number;
  token: string;
  maxMessageBytes: number;
};

/** What one POSTed message was, as the proxy judged it. */
export type Judged = { kind: "request"; id: JsonRpcId; method: string; params: unknown } | { kind: "other" } | { kind: "rejected" };

export type FrontEndHandlers = {
  /** One message from the agent (validated and routed by the caller). */
  message(bytes: Uint8Array): Judged;
  /** A message too large to read. */
  oversize(size: number, head: Uint8Array): void;
  /** A 2026-07-28 agent closed a request's stream before its answer: cancel it. */
  cancelled(id: JsonRpcId): void;
  /** The agent ended its session (DELETE). */
  ended(): void;
  /** Wait here before taking the next message (backpressure and the decision slots). */
  ready(): Promise<void> | null;
};

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" };

export class FrontEnd {
  readonly streams = new AgentStreams();
  private server: ReturnType<typeof Bun.serve> | null = null;
  private sessionId: string | null = null;
  private sessionEnded = false;
  private handlers: FrontEndHandlers | null = null;
  private readonly token: Buffer;

  constructor(private readonly options: FrontEndOptions) {
    this.token = Buffer.from(options.token);
  }

  /** Start listening; returns the URL of the MCP endpoint. */
  listen(handlers: FrontEndHandlers): string {
    this.handlers = handlers;
    this.server = Bun.serve({ hostname: this.options.hostname, port: this.options.port, idleTimeout: 0, fetch: (request) => this.handle(request) });
    return `http://${this.hostLabel()}:${this.server.port}/mcp`;
  }

  stop(): void {
    this.streams.closeAll();
    this.server?.stop(true);
  }

  private hostLabel(): string {
    return this.options.hostname.includes(":") ? `[${this.options.hostname}]` : this.options.hostname;
  }

  private async handle(request: Request): Promise<Response> {
    const port = this.server?.port ?? 0;
    const host = request.headers.get("host");
    const hosts = new Set([`${this.hostLabel()}:${port}`, ...(isLoopbackHost(this.options.hostname) ? [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`] : [])]);
    if (host === null || !hosts.has(host)) return plain(403, "unexpected Host header");
    const origin = request.headers.get("origin");
    if (origin !== null && ![...hosts].some((allowed) => origin === `http://${allowed}`)) return plain(403, "cross-origin requests are refused");
    const path = new URL(request.url).pathname;
    if (path === "/health" && request.method === "GET") return Response.json({ status: "ok" });
    if (path !== "/mcp") return plain(404, "not found");
    if (!this.authorized(request)) return new Response("a bearer token is required", { status: 401, headers: { "www-authenticate": 'Bearer realm="thoughtgate"' } });
    if (request.method === "POST") return this.post(request);
    if (request.method === "GET") return this.get(request);
    if (request.method === "DELETE") return this.delete(request);
    return new Response(null, { status: 405, headers: { allow: "GET, POST, DELETE" } });
  }

  private authorized(request: Request): boolean {
    const header = request.headers.get("authorization") ?? "";
    const given = Buffer.from(header.startsWith("Bearer ") ? header.slice(7) : "");
    return given.length === this.token.length && timingSafeEqual(given, this.token);
  }

  private async post(request: Request): Promise<Response> {
    const handlers = this.handlers as FrontEndHandlers;
    const body = await readCapped(request.body, this.options.maxMessageBytes);
    const peek = peekRequest(body.kind === "body" ? body.bytes : null);
    const modern = peek !== null && modernVersionOf(peek.params) !== null;
    if (!modern) {
      const problem = this.sessionProblem(request, peek?.method === "initialize");
      if (problem) return problem;
    }
    await handlers.ready();
    if (peek && (this.streams.has(peek.id) || (peek.method === "initialize" && this.sessionId !== null))) {
      const why = peek.method === "initialize" ? "this shim serves one session, and it is in use" : "the request id is in use by a pending request";
      return Response.json({ jsonrpc: "2.0", id: peek.id, error: { code: -32600, message: `ThoughtGate refused the request: ${why}` } }, { status: 400 });
    }
    // The stream is open before the message is routed: an answer the proxy writes at once (a
    // denial, a framing error) already has somewhere to go.
    const headers: Record<string, string> = { ...SSE_HEADERS };
    if (peek?.method === "initialize" && !modern) {
      this.sessionId = randomUUID();
      headers["mcp-session-id"] = this.sessionId;
    }
    const stream = peek ? this.streams.open(peek.id, progressTokenOf(peek.params), modern, (closed) => closed.modern && handlers.cancelled(closed.id)) : null;
    if (body.kind === "oversize") {
      handlers.oversize(body.size, body.head);
      return stream ? new Response(stream, { headers }) : plain(413, "message too large");
    }
    const judged = handlers.message(body.bytes);
    if (stream) return new Response(stream, { headers });
    return judged.kind === "rejected" ? plain(400, "the message was rejected") : new Response(null, { status: 202 });
  }

  private get(request: Request): Response {
    const problem = this.sessionProblem(request, false);
    if (problem) return problem;
    const stream = this.streams.openListen(() => {});
    if (!stream) return plain(409, "a stream for this session is open already");
    return new Response(stream, { headers: { ...SSE_HEADERS, ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}) } });
  }

  private delete(request: Request): Response {
    const problem = this.sessionProblem(request, false);
    if (problem) return problem;
    this.sessionEnded = true;
    this.handlers?.ended();
    return new Response(null, { status: 200 });
  }

  /** MCP 2025-11-25 sessions: after `initialize`, the session's id on every request; an unknown or ended one is 404. */
  private sessionProblem(request: Request, initializing: boolean): Response | null {
    const given = request.headers.get("mcp-session-id");
    if (this.sessionEnded) return plain(404, "the session has ended");
    if (initializing) return given === null ? null : plain(404, "unknown session");
    if (this.sessionId === null) return given === null ? null : plain(404, "unknown session");
    if (given === null) return plain(400, "Mcp-Session-Id is required");
    return given === this.sessionId ? null : plain(404, "unknown session");
  }
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** The id, method and params of a request, read before the proxy judges it (null for anything else). */
function peekRequest(bytes: Uint8Array | null): { id: JsonRpcId; method: string; params: unknown } | null {
  if (bytes === null) return null;
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as { id?: unknown; method?: unknown; params?: unknown };
    const id = value.id;
    if (typeof value.method !== "string" || !(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return null;
    return { id, method: value.method, params: value.params };
  } catch {
    return null;
  }
}

function progressTokenOf(params: unknown): unknown {
  const meta = (params as { _meta?: { progressToken?: unknown } } | undefined)?._meta;
  return meta?.progressToken;
}
