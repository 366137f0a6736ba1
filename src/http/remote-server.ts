import { classify, type JsonObject, type JsonRpcId, type Message } from "../core/jsonrpc.ts";
import { messageOf } from "../core/errors.ts";
import { log as rootLog } from "../core/log.ts";
import { excerpt, readCapped } from "./body.ts";
import { fetchWithinOrigin } from "./fetch-policy.ts";
import { ListenStream, sleepUnlessAborted } from "./listen-stream.ts";
import { modernVersionOf, ParameterHeaders } from "./request-metadata.ts";
import { answeredId, readEventStream, resumableEventId, type StreamSink } from "./sse-reader.ts";

/**
 * A Streamable HTTP connection to one remote MCP server, for a proxy: it sends what the agent
 * wrote, one POST per message, and hands back every message the server sends (JSON bodies and SSE
 * events alike) as bytes for the caller to validate. Both eras of the transport, chosen per
 * message as the agent chose them: a request whose `_meta` names a protocol version is a 2026-07-28
 * request (no session, the request metadata headers, closing its stream cancels it); everything
 * else is 2025-11-25 (the `Mcp-Session-Id` the server gave at `initialize`, the negotiated
 * `MCP-Protocol-Version`, a GET stream for the server's own requests, resumption by `Last-Event-ID`).
 * One class: the pending table, the session and the streams share one lifetime.
 */
export type Authorizer = {
  /** The `Authorization` header value to send, or null. */
  header(): Promise<string | null>;
  /** The server answered 401 with this challenge: whether a new credential is ready (then the request is sent once more). */
  unauthorized(challenge: string | null): Promise<boolean>;
  /** What the user should do when the server keeps refusing. */
  readonly remedy: string;
};

export type RemoteHandlers = Omit<StreamSink, "answered"> & {
  /** A request the server will never answer, and why (the caller answers the agent). */
  unanswered(id: JsonRpcId, detail: string): void;
  /** The server ended the session (2025-11-25: HTTP 404 on it): nothing more will work. */
  ended(detail: string): void;
};

export type RemoteOptions = {
  url: URL;
  headers: ReadonlyArray<readonly [string, string]>;
  auth: Authorizer | null;
  maxMessageBytes: number;
  /** Answer (and cancel) a request the server has not answered after this long; null: no limit. */
  requestTimeoutMs: number | null;
  fetch?: typeof fetch;
};

type Pending = { id: JsonRpcId; method: string; modern: boolean; controller: AbortController; timer: ReturnType<typeof setTimeout> | null };

const RESUME_ATTEMPTS = 3;
const log = rootLog.withTag("http");

export class RemoteServer {
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly parameterHeaders = new ParameterHeaders();
  private readonly listen: ListenStream;
  private readonly fetchImpl: typeof fetch;
  private sessionId: string | null = null;
  private protocolVersion: string | null = null;
  private closed = false;
  private readonly background = new Set<Promise<unknown>>();

  constructor(
    private readonly options: RemoteOptions,
    private readonly handlers: RemoteHandlers,
  ) {
    this.fetchImpl = options.fetch ?? fetch;
    this.listen = new ListenStream({ get: (lastEventId, signal) => this.get(lastEventId, signal), sink: this.sink(), maxMessageBytes: options.maxMessageBytes, ended: (detail) => this.handlers.ended(detail) });
  }

  /** One message from the agent, as validated bytes. */
  send(bytes: Uint8Array): void {
    if (this.closed) return;
    const classified = classify(JSON.parse(new TextDecoder().decode(bytes)) as JsonObject);
    if (!classified.ok) return;
    this.track(this.dispatch(classified.message, bytes));
  }

  /** Stop: every stream is closed, and a 2025-11-25 session is ended with DELETE (best effort, bounded). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listen.stop();
    for (const pending of this.pending.values()) this.forget(pending);
    if (this.sessionId !== null) {
      const deleted = await fetchWithinOrigin(this.options.url, { method: "DELETE", headers: await this.headers(null, []), signal: AbortSignal.timeout(2_000) }, this.fetchImpl);
      if (deleted.ok) void deleted.response.body?.cancel().catch(() => undefined);
      log.debug(`session ended: ${deleted.ok ? `HTTP ${deleted.response.status}` : deleted.detail}`);
    }
    await Promise.allSettled([...this.background]);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  private async dispatch(message: Message, bytes: Uint8Array): Promise<void> {
    if (message.kind === "request") {
      try {
        await this.request(message.id, message.method, message.params, bytes);
      } catch (error) {
        // Whatever went wrong, the agent gets an answer for its id: never a request left waiting.
        const pending = this.pending.get(message.id);
        if (pending) this.fail(pending, `the request to the server failed: ${messageOf(error)}`);
        else throw error;
      }
      return;
    }
    if (message.kind === "notification" && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      const pending = typeof requestId === "string" || typeof requestId === "number" ? this.pending.get(requestId) : undefined;
      if (pending?.modern) {
        // MCP 2026-07-28, Cancellation: closing the request's stream is the cancellation; no notification is sent.
        this.forget(pending);
        return;
      }
    }
    const answer = await this.post(bytes, null, this.protocolVersion === null ? [] : [["mcp-protocol-version", this.protocolVersion]], undefined);
    if (!answer.ok) {
      log.warn(`the server did not take a ${message.kind === "notification" ? message.method : "response"}: ${answer.detail}`);
      return;
    }
    void answer.response.body?.cancel().catch(() => undefined);
    if (answer.response.status === 404 && this.sessionId !== null) this.sessionEnded();
    else if (answer.response.status !== 202 && answer.response.status !== 200) {
      log.warn(`the server refused a ${message.kind === "notification" ? message.method : "response"}: HTTP ${answer.response.status}`);
    } else if (message.kind === "notification" && message.method === "notifications/initialized") {
      this.listen.start();
    }
  }

  private async request(id: JsonRpcId, method: string, params: unknown, bytes: Uint8Array): Promise<void> {
    const version = modernVersionOf(params);
    const pending: Pending = { id, method, modern: version !== null, controller: new AbortController(), timer: null };
    this.pending.set(id, pending);
    if (this.options.requestTimeoutMs !== null) pending.timer = setTimeout(() => this.timedOut(pending), this.options.requestTimeoutMs);
    const extra: Array<[string, string]> =
      version !== null ? [["mcp-protocol-version", version], ...this.parameterHeaders.headersFor(method, params)] : this.protocolVersion === null ? [] : [["mcp-protocol-version", this.protocolVersion]];
    const answer = await this.post(bytes, pending, extra, pending.controller.signal);
    if (!this.pending.has(id)) {
      if (answer.ok) void answer.response.body?.cancel().catch(() => undefined);
      return;
    }
    if (!answer.ok) {
      this.fail(pending, answer.detail);
      return;
    }
    const { response } = answer;
    if (method === "initialize" && response.ok) this.adoptSession(response.headers.get("mcp-session-id"));
    const type = response.headers.get("content-type") ?? "";
    if (response.ok && type.startsWith("text/event-stream") && response.body) {
      await this.follow(pending, response.body, null, 0);
      return;
    }
    const body = await readCapped(response.body, this.options.maxMessageBytes, pending.controller.signal);
    if (!this.pending.has(id)) return;
    if (body.kind === "oversize") {
      const delivery = this.handlers.oversize(body.size, body.head);
      if (answeredId(delivery) === id) this.answered(id, null);
      else this.fail(pending, `the server's answer (${body.size} bytes) is over the ${this.options.maxMessageBytes}-byte limit`);
      return;
    }
    if (response.status === 404 && this.sessionId !== null && !pending.modern) {
      this.fail(pending, "the server ended the session (HTTP 404)");
      this.sessionEnded();
      return;
    }
    const jsonAnswer = type.startsWith("application/json") && body.bytes.length > 0;
    // A JSON-RPC error for this id is the server's own answer, also on 400 and 404 (MCP 2026-07-28
    // answers an unsupported version, a missing capability or an unknown method that way).
    // Anything else on an error status is not passed on: the agent gets one clear error for its id.
    const keep = response.ok || ((response.status === 400 || response.status === 404) && isErrorFor(body.bytes, id));
    if (jsonAnswer && keep) {
      const delivery = this.handlers.message(body.bytes);
      if (answeredId(delivery) === id) {
        this.answered(id, delivery.ok ? delivery.message : null);
        return;
      }
    }
    this.fail(pending, response.ok ? `HTTP ${response.status} without an answer to the request` : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""} from ${this.options.url.origin}${detailOf(body.bytes)}`);
  }

  /** Read a request's SSE stream; a 2025-11-25 stream that ends early is resumed with GET and `Last-Event-ID`. */
  private async follow(pending: Pending, body: ReadableStream<Uint8Array>, lastEventId: string | null, attempt: number): Promise<void> {
    const end = await readEventStream(body, this.sink(), this.options.maxMessageBytes, lastEventId);
    if (!this.pending.has(pending.id)) return;
    if (!pending.modern && end.lastEventId !== null && !resumableEventId(end.lastEventId)) {
      this.fail(pending, "the server closed the stream before answering, and its event id cannot be sent back in Last-Event-ID (not visible ASCII), so the stream was not resumed");
      return;
    }
    if (!pending.modern && end.lastEventId !== null && attempt < RESUME_ATTEMPTS && !this.closed) {
      await sleepUnlessAborted(end.retryMs ?? 0, pending.controller.signal);
      const resumed = await this.get(end.lastEventId, pending.controller.signal);
      if (!this.pending.has(pending.id)) return;
      if (resumed.ok && resumed.response.ok && resumed.response.body && (resumed.response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        await this.follow(pending, resumed.response.body, end.lastEventId, attempt + 1);
        return;
      }
      if (resumed.ok) void resumed.response.body?.cancel().catch(() => undefined);
    }
    this.fail(pending, end.error === null ? "the server closed the stream before answering" : `the stream broke before the answer: ${end.error}`);
  }

  private sink(): StreamSink {
    return {
      message: (bytes) => this.handlers.message(bytes),
      oversize: (size, head) => this.handlers.oversize(size, head),
      answered: (id, message) => this.answered(id, message),
      drained: () => this.handlers.drained(),
    };
  }

  private answered(id: JsonRpcId, message: Message | null): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.settle(pending);
    if (message?.kind !== "response" || message.isError) return;
    const result = message.body.result as JsonObject | undefined;
    if (pending.method === "initialize" && typeof result?.protocolVersion === "string") this.protocolVersion = result.protocolVersion;
    if (pending.method === "tools/list" && pending.modern) this.parameterHeaders.learn(result);
  }

  private fail(pending: Pending, detail: string): void {
    if (!this.pending.has(pending.id)) return;
    this.forget(pending);
    this.handlers.unanswered(pending.id, detail);
  }

  private timedOut(pending: Pending): void {
    this.fail(pending, `no answer within ${this.options.requestTimeoutMs} ms`);
    if (!pending.modern && !this.closed) {
      // 2025-11-25: a disconnect is not a cancellation; the server is told in so many words.
      const cancel = JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: pending.id, reason: "timed out in the proxy" } });
      this.send(new TextEncoder().encode(cancel));
    }
  }

  private settle(pending: Pending): void {
    this.pending.delete(pending.id);
    if (pending.timer !== null) clearTimeout(pending.timer);
  }

  private forget(pending: Pending): void {
    this.settle(pending);
    pending.controller.abort();
  }

  private adoptSession(header: string | null): void {
    // MCP 2025-11-25: a session id is visible ASCII only; anything else is not echoed back.
    if (header !== null && /^[\x21-\x7e]{1,1024}$/.test(header)) this.sessionId = header;
    else if (header !== null) log.warn("the server's Mcp-Session-Id is not visible ASCII; not used");
  }

  private sessionEnded(): void {
    if (this.closed) return;
    this.handlers.ended("the server ended the session (HTTP 404)");
  }

  private post(bytes: Uint8Array, pending: Pending | null, extra: Array<[string, string]>, signal: AbortSignal | undefined) {
    return this.withAuth(async () => {
      const headers = await this.headers(pending, extra);
      headers.set("content-type", "application/json");
      headers.set("accept", "application/json, text/event-stream");
      return fetchWithinOrigin(this.options.url, { method: "POST", headers, body: bytes, signal }, this.fetchImpl);
    });
  }

  private get(lastEventId: string | null, signal: AbortSignal) {
    return this.withAuth(async () => {
      const extra: Array<[string, string]> = this.protocolVersion === null ? [] : [["mcp-protocol-version", this.protocolVersion]];
      if (lastEventId !== null) extra.push(["last-event-id", lastEventId]);
      const headers = await this.headers(null, extra);
      headers.set("accept", "text/event-stream");
      return fetchWithinOrigin(this.options.url, { method: "GET", headers, signal }, this.fetchImpl);
    });
  }

  /** Send; on 401, ask the authorizer once for a fresh credential and send again. */
  private async withAuth(send: () => ReturnType<typeof fetchWithinOrigin>): ReturnType<typeof fetchWithinOrigin> {
    const first = await send();
    if (!first.ok || first.response.status !== 401) return first;
    const challenge = first.response.headers.get("www-authenticate");
    void first.response.body?.cancel().catch(() => undefined);
    if (this.options.auth && (await this.options.auth.unauthorized(challenge))) {
      const second = await send();
      if (!second.ok || second.response.status !== 401) return second;
      void second.response.body?.cancel().catch(() => undefined);
    }
    return { ok: false, detail: `HTTP 401: ${this.options.url.origin} requires authorization; ${this.options.auth?.remedy ?? "give a credential with --header or --bearer-token-env"}` };
  }

  private async headers(pending: Pending | null, extra: Array<[string, string]>): Promise<Headers> {
    const headers = new Headers();
    for (const [name, value] of this.options.headers) headers.set(name, value);
    const authorization = await this.options.auth?.header();
    if (authorization) headers.set("authorization", authorization);
    if (this.sessionId !== null && !pending?.modern) headers.set("mcp-session-id", this.sessionId);
    for (const [name, value] of extra) headers.set(name, value);
    return headers;
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => log.error(`remote server: ${(error as Error).message}`)).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }
}

function isErrorFor(bytes: Uint8Array, id: JsonRpcId): boolean {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { id?: unknown; error?: unknown };
    return parsed.id === id && typeof parsed.error === "object" && parsed.error !== null;
  } catch {
    return false;
  }
}

function detailOf(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") return `: ${excerpt(new TextEncoder().encode(parsed.error.message))}`;
  } catch {
    // Not JSON: an HTML error page, a proxy's text.
  }
  return `: ${excerpt(bytes)}`;
}
