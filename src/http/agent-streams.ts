import type { JsonRpcId } from "../core/jsonrpc.ts";

/**
 * Where the HTTP front end delivers what the proxy writes to the agent: each message is one SSE
 * event on one stream (MCP Streamable HTTP: never the same message on two). A response goes to the
 * stream of the POST that carried its request and ends it; a progress notification to the stream
 * of the request that named its token; a notification tagged with a 2026-07-28 subscription to
 * that `subscriptions/listen` stream; anything else (the server's own requests and notifications)
 * to the GET stream, else the newest open POST stream, else it waits (bounded) for a stream.
 */
export type AgentStream = {
  id: JsonRpcId;
  progressToken: unknown;
  modern: boolean;
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
};

const MAX_WAITING_MESSAGES = 1_000;
const encoder = new TextEncoder();

export class AgentStreams {
  private readonly byId = new Map<JsonRpcId, AgentStream>();
  private listen: ReadableStreamDefaultController<Uint8Array> | null = null;
  private waiting: string[] = [];
  /** Bytes enqueued on streams that the agent has not read yet. */
  private unread = 0;
  private drainWaiters: Array<() => void> = [];

  /** A POST carrying request `id`: its SSE response body. `onClose` when the agent drops it first. */
  open(id: JsonRpcId, progressToken: unknown, modern: boolean, onClose: (stream: AgentStream) => void): ReadableStream<Uint8Array> {
    let entry: AgentStream | null = null;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        entry = { id, progressToken, modern, controller, closed: false };
        this.byId.set(id, entry);
        this.flushWaiting();
      },
      pull: () => this.pulled(),
      cancel: () => {
        if (!entry || entry.closed) return;
        entry.closed = true;
        this.byId.delete(id);
        onClose(entry);
      },
    });
  }

  /** The 2025-11-25 GET stream; null when one is open already (the session has one). */
  openListen(onClose: () => void): ReadableStream<Uint8Array> | null {
    if (this.listen) return null;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.listen = controller;
        controller.enqueue(encoder.encode(": connected\n\n"));
        this.flushWaiting();
      },
      pull: () => this.pulled(),
      cancel: () => {
        this.listen = null;
        onClose();
      },
    });
  }

  has(id: JsonRpcId): boolean {
    return this.byId.has(id);
  }

  /** One line the proxy wrote to the agent. Returns false when it had nowhere to go and was dropped. */
  deliver(line: string): boolean {
    let message: { id?: unknown; method?: unknown; params?: { progressToken?: unknown; _meta?: Record<string, unknown> } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return false;
    }
    if (message.method === undefined && message.id === null) return false; // answered by the POST's HTTP status
    const isResponse = message.method === undefined && (typeof message.id === "string" || typeof message.id === "number");
    if (isResponse) {
      const stream = this.byId.get(message.id as JsonRpcId);
      if (!stream) return false;
      this.write(stream.controller, line);
      this.end(stream);
      return true;
    }
    const target = this.targetOf(message.params);
    if (target) {
      this.write(target, line);
      return true;
    }
    if (this.waiting.length >= MAX_WAITING_MESSAGES) return false;
    this.waiting.push(line);
    return true;
  }

  /** Resolves when the agent has read what it was given, or null when it keeps up. */
  drained(limit: number): Promise<void> | null {
    if (this.unread <= limit) return null;
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  get bufferedBytes(): number {
    return this.unread;
  }

  closeAll(): void {
    for (const stream of this.byId.values()) this.end(stream);
    try {
      this.listen?.close();
    } catch {
      // Already closed by the agent.
    }
    this.listen = null;
    for (const wake of this.drainWaiters.splice(0)) wake();
  }

  private targetOf(params: { progressToken?: unknown; _meta?: Record<string, unknown> } | undefined): ReadableStreamDefaultController<Uint8Array> | null {
    const token = params?.progressToken;
    const subscription = params?._meta?.["io.modelcontextprotocol/subscriptionId"];
    for (const stream of this.byId.values()) {
      if (token !== undefined && stream.progressToken === token) return stream.controller;
      if (subscription !== undefined && stream.id === subscription) return stream.controller;
    }
    if (this.listen) return this.listen;
    const newest = [...this.byId.values()].at(-1);
    return newest?.controller ?? null;
  }

  private flushWaiting(): void {
    const lines = this.waiting;
    this.waiting = [];
    for (const line of lines) this.deliver(line);
  }

  private write(controller: ReadableStreamDefaultController<Uint8Array>, line: string): void {
    const bytes = encoder.encode(`event: message\ndata: ${line}\n\n`);
    try {
      controller.enqueue(bytes);
      this.unread += bytes.length;
    } catch {
      // The agent dropped the stream.
    }
  }

  private end(stream: AgentStream): void {
    stream.closed = true;
    this.byId.delete(stream.id);
    try {
      stream.controller.close();
    } catch {
      // Already closed.
    }
  }

  private pulled(): void {
    // A pull means the agent's side took what was queued.
    this.unread = 0;
    for (const wake of this.drainWaiters.splice(0)) wake();
  }
}
