import * as v from "valibot";
import { messageOf } from "../../core/errors.ts";
import { channelAnswer, type ChannelRequest } from "../wire/api.ts";
import type { Answer } from "../wire/api.ts";

const CHANNEL_PATH = "/governance/channel";

type Pending = { resolve: (answer: Answer) => void; reject: (error: Error) => void; timer: ReturnType<typeof setTimeout> };

export type ChannelEvents = {
  /** The service asked every shim to drain (wrap is stopping). */
  onShutdown: () => void;
  /** The channel is gone (the service stopped, or sent what no shim can read): every request still waiting failed. */
  onClose: (why: string) => void;
};

/**
 * The shim's end of its one channel to the governance service (docs/governance.md, The shim's
 * channel): a WebSocket opened once with the session secret; every request is a message with an id,
 * answered in any order. A frame carries one or more messages, a line each. A request not answered in time, or on a channel that closed, fails — its
 * caller fails closed, as for any unreachable service.
 */
export class ServiceChannel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWhy: string | null = null;
  private readonly outgoing: string[] = [];

  private constructor(
    private readonly socket: WebSocket,
    private readonly events: ChannelEvents,
  ) {
    socket.onmessage = (event) => this.received(event.data);
    socket.onclose = (event) => this.closed(event.reason ? `the governance service closed the channel: ${event.reason}` : `the governance service closed the channel (code ${event.code})`);
  }

  /** Open the channel, or reject with why not (the service is not up, refused the secret, or took longer than `timeoutMs`). */
  static open(endpoint: string, secret: string, timeoutMs: number, events: ChannelEvents): Promise<ServiceChannel> {
    const url = `${endpoint.replace(/^http/, "ws")}${CHANNEL_PATH}`;
    return new Promise((resolve, reject) => {
      let socket: WebSocket;
      try {
        // Bun's WebSocket takes headers: the secret travels as it does on every HTTP call, never in the URL.
        socket = new WebSocket(url, { headers: { authorization: `Bearer ${secret}` } } as unknown as string[]);
      } catch (error) {
        reject(new Error(`cannot open ${url}: ${messageOf(error)}`));
        return;
      }
      const timer = setTimeout(() => {
        socket.close();
        reject(new Error(`no channel within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        resolve(new ServiceChannel(socket, events));
      };
      socket.onerror = (event) => {
        clearTimeout(timer);
        reject(new Error((event as ErrorEvent).message || "the channel could not be opened"));
      };
    });
  }

  /** Ask what `method path` with `body` would be asked over HTTP; its status and JSON body. */
  request(method: ChannelRequest["method"], path: string, body: unknown, timeoutMs: number): Promise<Answer> {
    if (this.closedWhy !== null) return Promise.reject(new Error(this.closedWhy));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      const message: ChannelRequest = body === undefined ? { id, method, path } : { id, method, path, body };
      this.enqueue(JSON.stringify(message));
    });
  }

  /**
   * Messages asked for in the same turn of the event loop go in one frame, a line each (JSON text
   * has no raw newline): pipelined calls cost one send, not one each.
   */
  private enqueue(line: string): void {
    this.outgoing.push(line);
    if (this.outgoing.length === 1) queueMicrotask(() => this.flush());
  }

  private flush(): void {
    const lines = this.outgoing.splice(0);
    if (this.closedWhy === null && lines.length > 0) this.socket.send(lines.join("\n"));
  }

  close(): void {
    this.closed("the shim closed its channel", false);
    this.socket.close(1000, "the shim is stopping");
  }

  private received(data: unknown): void {
    const text = typeof data === "string" ? data : new TextDecoder().decode(data as ArrayBuffer);
    for (const line of text.split("\n")) {
      if (this.closedWhy !== null) return;
      this.answered(line);
    }
  }

  private answered(line: string): void {
    let parsed: v.SafeParseResult<typeof channelAnswer>;
    try {
      parsed = v.safeParse(channelAnswer, JSON.parse(line));
    } catch {
      return this.unreadable("a message that is not JSON");
    }
    if (!parsed.success) return this.unreadable(`a message the shim cannot read (${parsed.issues[0]?.message ?? "invalid"})`);
    const message = parsed.output;
    if ("push" in message) return this.events.onShutdown();
    const waiting = this.pending.get(message.id);
    if (!waiting) return; // answered after its deadline: the caller has already failed closed
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    waiting.resolve({ status: message.status, body: message.body });
  }

  private unreadable(what: string): void {
    this.closed(`the governance service sent ${what}`);
    this.socket.close(1002, "unreadable message");
  }

  private closed(why: string, tell = true): void {
    if (this.closedWhy !== null) return;
    this.closedWhy = why;
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(why));
    }
    this.pending.clear();
    if (tell) this.events.onClose(why);
  }
}
