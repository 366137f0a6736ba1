import * as v from "valibot";
import { isSafeUrl } from "../../../core/safe-url.ts";
import { messageOf } from "../../../core/errors.ts";
import type { SlackFailure, SlackWebApi } from "./web-api.ts";
import { connectionsOpenAnswer, socketFrame } from "./wire.ts";

/** Reconnecting waits this long, doubling up to the maximum; a `hello` resets it. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** A connection that has not said `hello` by then is given up and replaced. */
const HELLO_TIMEOUT_MS = 10_000;

export type SocketModeEvents = {
  /** An `interactive` envelope's payload (already acknowledged). */
  interactive(payload: unknown): void;
  /** Something failed; `fatal`: Socket Mode stopped for good (the token is refused, or Socket Mode is off for the app). */
  failure(failure: SlackFailure, fatal: boolean): void;
  /** A connection said `hello`. */
  connected(): void;
};

/**
 * Socket Mode (https://api.slack.com/apis/socket-mode): `apps.connections.open` with the app-level
 * token gives a single-use WebSocket URL; Slack says `hello`, then sends envelopes, each
 * acknowledged at once with its `envelope_id` (Slack retries an envelope not acknowledged within 3
 * seconds). Slack refreshes connections regularly: on `disconnect` a new connection is opened and
 * the old one is left to close (an envelope may still arrive on it, and is acknowledged there).
 * A dropped connection is reopened with a doubling delay, forever, until `stop`; a refused token or
 * `link_disabled` (Socket Mode turned off for the app) stops it, since retrying cannot help.
 */
export class SocketModeClient {
  private current: WebSocket | null = null;
  private readonly sockets = new Set<WebSocket>();
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private opening = false;

  constructor(
    private readonly api: SlackWebApi,
    private readonly appToken: string,
    private readonly events: SocketModeEvents,
  ) {}

  get connected(): boolean {
    return this.current?.readyState === WebSocket.OPEN;
  }

  start(): void {
    // Already connected, connecting, or waiting to retry.
    if (this.stopped || this.opening || this.current || this.retryTimer) return;
    void this.open();
  }

  /** Close every connection; nothing is reopened. */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    for (const socket of this.sockets) socket.close(1000, "ThoughtGate is stopping");
    this.sockets.clear();
    this.current = null;
  }

  private async open(): Promise<void> {
    this.opening = true;
    const answer = await this.api.call("apps.connections.open", this.appToken, {}, connectionsOpenAnswer, "form");
    this.opening = false;
    if (this.stopped) return;
    if (!answer.ok) {
      const fatal = answer.failure.kind === "auth" || answer.failure.kind === "permanent";
      this.events.failure(answer.failure, fatal);
      if (fatal) this.stop();
      else this.retryLater(answer.failure.retryAfterMs);
      return;
    }
    // The URL comes from the Slack the config named; it still must not take events off the machine in clear text.
    if (!isSafeUrl(answer.value.url, { secure: "wss:", plain: "ws:" })) {
      this.events.failure({ code: "invalid_response", kind: "transient", detail: "apps.connections.open: the WebSocket URL is not wss:// (or ws:// to this machine)" }, false);
      this.retryLater();
      return;
    }
    this.connect(answer.value.url);
  }

  private connect(url: string): void {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url);
    } catch (error) {
      this.events.failure({ code: "unreachable", kind: "transient", detail: `socket mode: ${messageOf(error)}` }, false);
      this.retryLater();
      return;
    }
    this.sockets.add(socket);
    this.current = socket;
    let greeted = false;
    const helloTimer = setTimeout(() => {
      if (!greeted) socket.close(4000, "no hello");
    }, HELLO_TIMEOUT_MS);
    helloTimer.unref?.();
    socket.addEventListener("message", (event) => {
      const frame = parseFrame(event.data);
      if (!frame) return;
      if (frame.envelope_id !== undefined && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ envelope_id: frame.envelope_id }));
      if (frame.type === "hello") {
        greeted = true;
        clearTimeout(helloTimer);
        this.retryMs = FIRST_RETRY_MS;
        // The connection this one replaces may go now: Slack sends new envelopes here.
        for (const other of this.sockets) if (other !== socket) other.close(1000, "replaced");
        this.events.connected();
      } else if (frame.type === "disconnect") {
        this.onDisconnect(socket, frame.reason ?? "unknown");
      } else if (frame.type === "interactive" && frame.envelope_id !== undefined) {
        this.events.interactive(frame.payload);
      }
    });
    socket.addEventListener("close", () => {
      clearTimeout(helloTimer);
      this.sockets.delete(socket);
      if (this.current !== socket || this.stopped) return;
      this.current = null;
      this.events.failure({ code: "socket_closed", kind: "transient", detail: `socket mode: the connection closed${greeted ? "" : " before Slack said hello"}; reconnecting` }, false);
      this.retryLater();
    });
  }

  private onDisconnect(socket: WebSocket, reason: string): void {
    if (reason === "link_disabled") {
      this.events.failure({ code: "link_disabled", kind: "auth", detail: "socket mode: Socket Mode is turned off for the Slack app (link_disabled)" }, true);
      this.stop();
      return;
    }
    // `warning` comes ahead of `refresh_requested`; either way, the next connection is opened now.
    if (this.current === socket && !this.opening) {
      this.current = null;
      void this.open();
    }
  }

  private retryLater(atLeastMs = 0): void {
    if (this.stopped || this.retryTimer) return;
    const delay = Math.max(atLeastMs, this.retryMs);
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.open();
    }, delay);
    this.retryTimer.unref?.();
  }
}

function parseFrame(data: unknown): v.InferOutput<typeof socketFrame> | null {
  if (typeof data !== "string") return null;
  try {
    const parsed = v.safeParse(socketFrame, JSON.parse(data));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}
