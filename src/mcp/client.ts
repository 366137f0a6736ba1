import { basename } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { errorResponse, RPC, type JsonObject, type JsonRpcId, type Message } from "../core/jsonrpc.ts";
import { taggedLog, type Logger } from "../core/log.ts";
import type { Unit } from "../stdio/framer.ts";
import { readFramed, type ByteReader } from "../stdio/framed-reader.ts";
import { LineSink } from "../stdio/line-sink.ts";
import { MAX_LINE_BYTES } from "../stdio/line-splitter.ts";
import { ServerProcess, SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS, type Exit } from "../stdio/server-process.ts";
import type { FramingError } from "../stdio/validate-line.ts";
import { VERSION } from "../version.ts";
import { ConnectionClosedError, RequestTimeoutError, RpcError } from "./rpc-errors.ts";
import { check, InitializeResultSchema, RpcErrorObjectSchema, type InitializeResult } from "../core/mcp-schema.ts";

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const MCP_PROTOCOL_VERSION = "2025-06-18";
/** Once stdout ends, how long to wait for the exit status that explains it. */
const EXIT_AFTER_EOF_MS = 1_000;
/** Once the server exits, how long its last output may take to drain (a grandchild may hold the pipe open). */
const DRAIN_AFTER_EXIT_MS = 1_000;

export type Params = JsonObject | unknown[];
export type Notification = { method: string; params: unknown };
/** Answers a server-initiated request: the return value is the result, a thrown `RpcError` the error. */
export type RequestHandler = (params: unknown, request: { id: JsonRpcId; method: string }) => unknown;
export type Graces = { stdinCloseMs: number; sigtermMs: number };

export const DEFAULT_GRACES: Graces = { stdinCloseMs: STDIN_CLOSE_GRACE_MS, sigtermMs: SIGTERM_GRACE_MS };

export type ClientOptions = {
  /** The server command and its arguments; run without a shell. */
  command: string[];
  /** The environment to start from (default ours); `THOUGHTGATE_*` never reaches the server. */
  env?: NodeJS.ProcessEnv;
  maxLineBytes?: number;
  /** Names the server in log lines (default: the command's basename). */
  label?: string;
  /** Pass `THOUGHTGATE_*` through: only for starting ThoughtGate itself (a rewritten config entry). */
  keepThoughtGateEnv?: boolean;
};

type Pending = {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
};

/** The part of a stream reader we use (Bun's and the DOM's reader types differ). */

/**
 * A JSON-RPC 2.0 client for one MCP server over stdio: concurrent requests matched to responses by
 * id in any order, server-initiated requests and notifications,
 * per-request timeouts, and the staged shutdown of `ServerProcess`. Every line the server writes
 * passes the same framing checks as in the shim (`Framer`), so a line over 10 MiB is never buffered.
 * One class: the pending table, the reader and shutdown share one lifetime.
 */
export class McpClient {
  private nextId = 1;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Set<(notification: Notification) => void>();
  private readonly toServer: LineSink;
  private readonly label: string;
  private readonly log: Logger;
  private state: "open" | "closing" | "ended" = "open";
  /** Set when the connection ended; later calls fail the same way. */
  private ending: { reason: "exited" | "closed"; exitStatus: number | null } | null = null;
  private readonly reading: Promise<void>;

  private constructor(
    private readonly server: ServerProcess,
    options: ClientOptions,
  ) {
    this.label = options.label ?? basename(options.command[0] ?? "server");
    this.log = taggedLog(this.label);
    this.toServer = new LineSink(server.stdin, (reason) => this.log.debug(`server stdin closed: ${reason}`));
    // MCP 2025-06-18 ping: either side may ping at any time and must get an (empty) answer.
    this.requestHandlers.set("ping", () => ({}));
    const reader: ByteReader = server.stdout.getReader();
    this.reading = this.read(reader, options.maxLineBytes ?? MAX_LINE_BYTES);
    void server.exited.then(async () => {
      if (await settlesWithin(this.reading, DRAIN_AFTER_EXIT_MS)) return;
      this.log.debug(`exited but something still holds its stdout open: no longer reading`);
      bestEffort(() => void reader.cancel());
    });
  }

  /** Start the server. Throws `ThoughtGateError("SPAWN_FAILED")` when the command cannot run. */
  static start(options: ClientOptions): McpClient {
    const spawned = ServerProcess.spawn(options.command, options.env, { keepThoughtGateEnv: options.keepThoughtGateEnv === true });
    if (!(spawned instanceof ServerProcess)) throw new ThoughtGateError("SPAWN_FAILED", spawned.error);
    return new McpClient(spawned, options);
  }

  get pid(): number {
    return this.server.pid;
  }

  /** Resolves with the server's exit status (128+n for a signal) whenever it exits. */
  get exited(): Promise<number> {
    return this.server.exited;
  }

  /**
   * Send a request; resolves with its `result`. Rejects with `RpcError` (the server answered with
   * an error), `RequestTimeoutError`, `ConnectionClosedError`, or `ThoughtGateError("PROTOCOL")`
   * when the response broke the framing rules.
   */
  request(method: string, params?: Params, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<unknown> {
    const refused = this.refusal(method);
    if (refused) return Promise.reject(refused);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        // MCP 2025-06-18 cancellation: a sender giving up SHOULD say so, except for initialize.
        if (method !== "initialize" && this.state === "open") {
          this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: `no response within ${timeoutMs} ms` } });
        }
        reject(new RequestTimeoutError(method, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      this.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    });
  }

  /** Send a notification. Throws `ConnectionClosedError` once the connection is closing or ended. */
  notify(method: string, params?: Params): void {
    const refused = this.refusal(undefined);
    if (refused) throw refused;
    this.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  /** Call `handler` for every notification from the server, in arrival order. Returns an unsubscribe. */
  onNotification(handler: (notification: Notification) => void): () => void {
    this.notificationHandlers.add(handler);
    return () => this.notificationHandlers.delete(handler);
  }

  /** Answer the server's `method` requests with `handler`; a method without one gets -32601. */
  setRequestHandler(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  /** MCP lifecycle: `initialize`, then `notifications/initialized`. Resolves with the server's answer. */
  async initialize(options: { timeoutMs?: number; capabilities?: JsonObject } = {}): Promise<InitializeResult> {
    const raw = await this.request(
      "initialize",
      {
        protocolVersion: MCP_PROTOCOL_VERSION,
        capabilities: options.capabilities ?? {},
        clientInfo: { name: "thoughtgate", version: VERSION },
      },
      options.timeoutMs,
    );
    const checked = check(InitializeResultSchema, raw);
    if (!checked.ok) throw new ThoughtGateError("PROTOCOL", `initialize: the server's result is not valid: ${checked.error}`);
    if (checked.value.protocolVersion !== MCP_PROTOCOL_VERSION) {
      this.log.debug(`server chose protocol ${checked.value.protocolVersion} (we asked for ${MCP_PROTOCOL_VERSION})`);
    }
    this.notify("notifications/initialized");
    return checked.value;
  }

  /**
   * Staged shutdown (MCP 2025-06-18 lifecycle, stdio: close stdin, then SIGTERM, then SIGKILL).
   * Requests still pending are rejected once the server is gone. Idempotent.
   */
  async close(graces: Graces = DEFAULT_GRACES): Promise<Exit> {
    if (this.state === "open") this.state = "closing";
    // Flush what is queued before stdin closes: the last notification must still arrive.
    this.toServer.close();
    const exit = await this.server.stop(graces);
    await this.reading;
    return exit;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private refusal(method: string | undefined): ConnectionClosedError | null {
    if (this.state === "open") return null;
    return new ConnectionClosedError(this.ending?.reason ?? "closed", method, this.ending?.exitStatus ?? null);
  }

  private send(body: JsonObject): void {
    this.toServer.sendText(JSON.stringify(body));
  }

  private async read(reader: ByteReader, maxLineBytes: number): Promise<void> {
    await readFramed(reader, (unit) => this.route(unit), { label: this.label, maxLineBytes });
    await this.ended();
  }

  /** Stdout is done: nothing more can be answered, so every pending request fails now. */
  private async ended(): Promise<void> {
    const exitStatus = (await settlesWithin(this.server.exited, EXIT_AFTER_EOF_MS)) ? await this.server.exited : null;
    this.ending = { reason: this.state === "closing" ? "closed" : "exited", exitStatus };
    this.state = "ended";
    if (this.ending.reason === "exited") this.log.debug(`${new ConnectionClosedError("exited", undefined, exitStatus).message}`);
    for (const [key, entry] of this.pending) {
      this.pending.delete(key);
      clearTimeout(entry.timer);
      entry.reject(new ConnectionClosedError(this.ending.reason, entry.method, exitStatus));
    }
  }

  private route(unit: Unit): void {
    if (unit.kind === "message") {
      this.message(unit.message);
      return;
    }
    // A smuggling attempt is refused whole, as the shim's production profile does: none of it is trusted.
    this.rejected(unit.error);
  }

  private rejected(error: FramingError): void {
    this.log.warn(`rejected a line from the server: ${error.code}: ${error.detail}`);
    if (error.looksLikeRequest) {
      // The server may be waiting on it: an error instead of silence (docs/architecture.md, decision 2).
      this.toServer.sendText(errorResponse(error.id, RPC.framingRejected, `ThoughtGate rejected the message: ${error.code}`));
      return;
    }
    if (error.id === null) return;
    const entry = this.settle(error.id);
    entry?.reject(new ThoughtGateError("PROTOCOL", `${entry.method}: the server's response was rejected: ${error.code}: ${error.detail}`));
  }

  private message(message: Message): void {
    switch (message.kind) {
      case "request":
        void this.answer(message.id, message.method, message.params);
        return;
      case "notification":
        this.notified({ method: message.method, params: message.params });
        return;
      case "response":
        this.responded(message.id, message.isError, message.body);
        return;
    }
  }

  private responded(id: JsonRpcId | null, isError: boolean, body: JsonObject): void {
    if (id === null) {
      this.log.warn(`error response without an id: ${JSON.stringify(body.error)}`);
      return;
    }
    const entry = this.settle(id);
    if (!entry) {
      // Usually the answer to a request that already timed out.
      this.log.debug(`dropped a response to unknown request id ${JSON.stringify(id)}`);
      return;
    }
    if (!isError) {
      entry.resolve(body.result);
      return;
    }
    const checked = check(RpcErrorObjectSchema, body.error);
    entry.reject(
      checked.ok
        ? new RpcError(checked.value, entry.method)
        : new ThoughtGateError("PROTOCOL", `${entry.method}: the server answered with a malformed error (${checked.error})`),
    );
  }

  private settle(id: JsonRpcId): Pending | undefined {
    const entry = this.pending.get(id);
    if (!entry) return undefined;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    return entry;
  }

  private notified(notification: Notification): void {
    for (const handler of this.notificationHandlers) {
      try {
        handler(notification);
      } catch (error) {
        this.log.warn(`a handler for ${notification.method} failed: ${messageOf(error)}`);
      }
    }
  }

  private async answer(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const handler = this.requestHandlers.get(method);
    if (!handler) {
      this.toServer.sendText(errorResponse(id, RPC.methodNotFound, `Method not found: ${method}`));
      return;
    }
    let reply: string;
    try {
      const result = (await handler(params, { id, method })) ?? {};
      reply = JSON.stringify({ jsonrpc: "2.0", id, result });
    } catch (error) {
      reply =
        error instanceof RpcError
          ? errorResponse(id, error.rpc.code, error.rpc.message, error.rpc.data)
          : errorResponse(id, RPC.internalError, messageOf(error));
    }
    if (this.state !== "ended") this.toServer.sendText(reply);
  }
}

/** Whether `promise` settles within `ms`; the timer never keeps the process alive. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  const result = await Promise.race([settled, timeout]);
  clearTimeout(timer);
  return result;
}
