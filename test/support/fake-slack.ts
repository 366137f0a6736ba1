/**
 * A loopback Slack for tests, speaking the wire formats of the real one: the Web API (POST
 * /api/<method>, the token in `Authorization: Bearer`, JSON bodies for the chat methods and
 * form-encoded bodies for every method, `{"ok": false, "error": …}` with HTTP 200 for failures,
 * HTTP 429 with `Retry-After` for rate limits) and Socket Mode (`apps.connections.open` gives a
 * single-use `ws://` URL; the socket says `hello`, sends envelopes with an `envelope_id` that must
 * be acknowledged, and `disconnect` frames). Like Slack, it hands each click to ONE of the app's open
 * connections, chosen at random (several ThoughtGate sessions on one app each hold one). References: https://api.slack.com/web,
 * https://api.slack.com/apis/socket-mode, https://api.slack.com/reference/interaction-payloads/block-actions-payload.
 */
import type { Server, ServerWebSocket } from "bun";
import { waitFor } from "./harness.ts";

export type Call = { method: string; contentType: string; token: string | null; args: Record<string, unknown> };
export type Message = { channel: string; ts: string; text: string; blocks: unknown[]; updates: Array<{ text: string; blocks: unknown[] }>; reactions: Map<string, string[]> };
export type Fault = { status?: number; error?: string; retryAfter?: string };
type Socket = ServerWebSocket<{ ticket: string }>;

/** Methods that take a JSON body; every method takes a form. */
const JSON_METHODS = new Set(["chat.postMessage", "chat.update", "chat.postEphemeral", "apps.connections.open"]);

export class FakeSlack {
  readonly calls: Call[] = [];
  readonly messages: Message[] = [];
  readonly ephemerals: Array<{ channel: string; user: string; text: string }> = [];
  readonly acks: string[] = [];
  /** For each click, the index (among the connections open at the time) of the one that got it. */
  readonly deliveries: number[] = [];
  /** Channel names and ids → id; a channel deleted later answers channel_not_found. */
  readonly channels = new Map<string, string>([["approvals", "C0APPROVALS"], ["C0APPROVALS", "C0APPROVALS"]]);
  readonly botTokens = new Set<string>(["xoxb-fake-bot-token"]);
  readonly appTokens = new Set<string>(["xapp-fake-app-token"]);
  revoked = new Set<string>();
  private readonly faults = new Map<string, Fault[]>();
  private readonly tickets = new Set<string>();
  readonly sockets: Socket[] = [];
  private readonly server: Server<{ ticket: string }>;
  private nextTs = 1_700_000_000;
  private nextEnvelope = 1;

  /** `pick`: which of `count` open connections gets a click (default: at random, as Slack does); a test may fix the sequence. */
  constructor(private readonly pick: (count: number) => number = (count) => Math.floor(Math.random() * count)) {
    this.server = Bun.serve<{ ticket: string }>({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request, server) => this.route(request, server),
      websocket: {
        open: (socket) => {
          this.sockets.push(socket);
          socket.send(JSON.stringify({ type: "hello", num_connections: this.open.length, debug_info: { host: "fake-slack", approximate_connection_time: 3600 }, connection_info: { app_id: "A0FAKEAPP" } }));
        },
        message: (_socket, data) => {
          const frame = JSON.parse(String(data)) as { envelope_id?: string };
          if (frame.envelope_id) this.acks.push(frame.envelope_id);
        },
        close: (socket) => {
          this.sockets.splice(this.sockets.indexOf(socket), 1);
        },
      },
    });
  }

  /** What `slack.base_url` points at. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.server.port}/api/`;
  }

  get open(): Socket[] {
    return this.sockets.filter((socket) => socket.readyState === 1);
  }

  /** The next call(s) of `method` fail this way, in order. */
  fail(method: string, ...faults: Fault[]): void {
    this.faults.set(method, [...(this.faults.get(method) ?? []), ...faults]);
  }

  callsOf(method: string): Call[] {
    return this.calls.filter((call) => call.method === method);
  }

  async message(index = 0): Promise<Message> {
    return waitFor(() => this.messages[index], `Slack message ${index + 1}`);
  }

  react(message: Message, name: string, user: string): void {
    message.reactions.set(name, [...(message.reactions.get(name) ?? []), user]);
  }

  /**
   * A button click on `message` by `user`, sent over one of the open Socket Mode connections (the
   * `pick`'s choice); resolves once acknowledged. `value`: what the click carries instead of the
   * button's own value (a forgery); `reason`: what the user typed in the message's reason box.
   */
  async click(message: Message, actionId: string, user: string, value = findButton(message.blocks, actionId), reason?: string): Promise<void> {
    const open = await waitFor(() => (this.open.length > 0 ? this.open : null), "a Socket Mode connection");
    const socket = open[Math.min(open.length - 1, Math.max(0, this.pick(open.length)))] as Socket;
    this.deliveries.push(this.sockets.indexOf(socket));
    const envelopeId = `env-${this.nextEnvelope++}`;
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: "interactive",
        accepts_response_payload: false,
        payload: {
          type: "block_actions",
          user: { id: user, username: user.toLowerCase(), team_id: "T0FAKE" },
          api_app_id: "A0FAKEAPP",
          team: { id: "T0FAKE", domain: "fake" },
          container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
          channel: { id: message.channel, name: "approvals" },
          message: { type: "message", ts: message.ts, text: message.text },
          trigger_id: "1.2.3",
          response_url: `http://127.0.0.1:${this.server.port}/actions/none`,
          actions: [{ type: "button", action_id: actionId, block_id: "thoughtgate_decision", value, action_ts: String(Date.now() / 1000) }],
          // What the message's input blocks hold at the click (https://api.slack.com/reference/interaction-payloads/block-actions-payload).
          state: { values: reason === undefined ? {} : { thoughtgate_reason: { reason: { type: "plain_text_input", value: reason } } } },
        },
      }),
    );
    await waitFor(() => this.acks.includes(envelopeId), `the ack of ${envelopeId}`);
  }

  /** Slack's `disconnect` frame on every open connection. */
  disconnect(reason: string): void {
    for (const socket of this.open) socket.send(JSON.stringify({ type: "disconnect", reason, debug_info: { host: "fake-slack" } }));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.close();
    await this.server.stop(true);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async route(request: Request, server: Server<{ ticket: string }>): Promise<Response | undefined> {
    const url = new URL(request.url);
    if (url.pathname === "/link/") {
      const ticket = url.searchParams.get("ticket") ?? "";
      // Socket Mode URLs are single-use tickets.
      if (!this.tickets.delete(ticket)) return new Response("unknown ticket", { status: 401 });
      return server.upgrade(request, { data: { ticket } }) ? undefined : new Response("upgrade failed", { status: 400 });
    }
    const method = /^\/api\/([a-zA-Z.]+)$/.exec(url.pathname)?.[1];
    if (request.method !== "POST" || !method) return new Response("not found", { status: 404 });
    const contentType = request.headers.get("content-type") ?? "";
    const token = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? null;
    let args: Record<string, unknown> = {};
    if (contentType.startsWith("application/json")) {
      // A read method ignores a JSON body: its arguments are missing.
      if (JSON_METHODS.has(method)) args = (await request.json()) as Record<string, unknown>;
    } else if (contentType.startsWith("application/x-www-form-urlencoded")) {
      for (const [key, value] of new URLSearchParams(await request.text())) args[key] = key === "blocks" ? JSON.parse(value) : value;
    }
    this.calls.push({ method, contentType, token, args });
    const fault = this.faults.get(method)?.shift();
    if (fault?.status === 429) return new Response(JSON.stringify({ ok: false, error: "ratelimited" }), { status: 429, headers: fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter } });
    if (fault?.status) return new Response("<html>upstream error</html>", { status: fault.status });
    if (fault?.error) return answer({ ok: false, error: fault.error });
    return answer(this.handle(method, token, args));
  }

  private handle(method: string, token: string | null, args: Record<string, unknown>): Record<string, unknown> {
    if (token === null) return { ok: false, error: "not_authed" };
    if (this.revoked.has(token)) return { ok: false, error: "token_revoked" };
    if (method === "apps.connections.open") {
      if (!this.appTokens.has(token)) return { ok: false, error: this.botTokens.has(token) ? "not_allowed_token_type" : "invalid_auth" };
      const ticket = crypto.randomUUID();
      this.tickets.add(ticket);
      return { ok: true, url: `ws://127.0.0.1:${this.server.port}/link/?ticket=${ticket}&app_id=A0FAKEAPP` };
    }
    if (!this.botTokens.has(token)) return { ok: false, error: this.appTokens.has(token) ? "not_allowed_token_type" : "invalid_auth" };
    const channel = this.channels.get(String(args.channel ?? ""));
    if (args.channel === undefined) return { ok: false, error: "channel_not_found" };
    if (!channel) return { ok: false, error: "channel_not_found" };
    switch (method) {
      case "chat.postMessage": {
        if (!args.text && !args.blocks) return { ok: false, error: "no_text" };
        const ts = `${this.nextTs++}.000100`;
        const message: Message = { channel, ts, text: String(args.text ?? ""), blocks: (args.blocks as unknown[]) ?? [], updates: [], reactions: new Map() };
        this.messages.push(message);
        return { ok: true, channel, ts, message: { type: "message", text: message.text, ts, bot_id: "B0FAKE" } };
      }
      case "chat.update": {
        const message = this.messages.find((m) => m.channel === channel && m.ts === args.ts);
        if (!message) return { ok: false, error: "message_not_found" };
        message.updates.push({ text: String(args.text ?? ""), blocks: (args.blocks as unknown[]) ?? [] });
        return { ok: true, channel, ts: message.ts, text: args.text };
      }
      case "chat.postEphemeral":
        this.ephemerals.push({ channel, user: String(args.user), text: String(args.text) });
        return { ok: true, message_ts: `${this.nextTs++}.000200` };
      case "reactions.get": {
        const message = this.messages.find((m) => m.channel === channel && m.ts === args.timestamp);
        if (!message) return { ok: false, error: "message_not_found" };
        const reactions = [...message.reactions].map(([name, users]) => ({ name, users, count: users.length }));
        return { ok: true, type: "message", channel, message: { type: "message", text: message.text, ts: message.ts, ...(reactions.length ? { reactions } : {}) } };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }
}

function answer(body: Record<string, unknown>): Response {
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json; charset=utf-8" } });
}

/** The `value` of the button `actionId` in a message's blocks ("" when there is none). */
export function findButton(blocks: unknown[], actionId: string): string {
  for (const block of blocks as Array<{ type?: string; elements?: Array<{ action_id?: string; value?: string }> }>) {
    const button = block.elements?.find((element) => element.action_id === actionId);
    if (button) return button.value ?? "";
  }
  return "";
}

/** All the text of a message's blocks, for assertions. */
export function blocksText(blocks: unknown[]): string {
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      const record = value as Record<string, unknown>;
      if (typeof record.text === "string") out.push(record.text);
      for (const [key, item] of Object.entries(record)) if (key !== "text" || typeof item !== "string") walk(item);
    }
  };
  walk(blocks);
  return out.join("\n");
}
