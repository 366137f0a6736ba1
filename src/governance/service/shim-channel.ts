import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import * as v from "valibot";
import { messageOf } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import { channelRequest, type Answer, type ChannelAnswer } from "../wire/api.ts";
import { failure, refusal } from "./http-guard.ts";
import type { ShimApi } from "./shim-api.ts";

/**
 * The service's end of the shims' channels (docs/governance.md, The shim's channel): one WebSocket
 * per shim, opened once with the session secret, carrying every `/governance/*` call as a message
 * `{id, method, path, body}` answered by `{id, status, body}` in any order (a frame holds one or
 * more messages, a line each; a frame's answers come in one frame), and the service's
 * `{push: "shutdown"}` the moment wrap stops. The answers are the HTTP endpoints' own (shim-api.ts).
 */
export const CHANNEL_PATH = "/governance/channel";

/** Each connection's name as a caller (`channel:<n>`): what its tasks and grants are bound to. */
type ChannelData = { caller: string };

export type ShimChannels = {
  websocket: WebSocketHandler<ChannelData>;
  /** Upgrade a request that has shown the session secret; a refusal when it cannot be a shim's channel. */
  upgrade(request: Request, server: Server<ChannelData>): Response | undefined;
  /** Tell every connected shim to drain now (and any that connects later, as it connects). */
  pushShutdown(): void;
  /** Shims connected now. */
  readonly open: number;
};

const SHUTDOWN = JSON.stringify({ push: "shutdown" } satisfies ChannelAnswer);

/**
 * `closed`: a shim's channel is gone (the shim stopped or died): what it asked about and the grants
 * made for it end with it.
 */
export function shimChannels(api: ShimApi, maxPayloadBytes: number, closed: (caller: string) => void = () => {}): ShimChannels {
  const sockets = new Set<ServerWebSocket<ChannelData>>();
  let shuttingDown = false;
  let opened = 0;

  const answerLine = (id: number, given: Answer) => JSON.stringify({ id, status: given.status, body: given.body } satisfies ChannelAnswer);

  /**
   * A frame's messages (a line each), answered in one frame: at once, or when the last answer that
   * waits (an agent's shell call before the service's bash parser is loaded: shell-reading.ts) is in.
   */
  function frame(ws: ServerWebSocket<ChannelData>, text: string): void {
    const answers: Array<string | Promise<string>> = [];
    for (const line of text.split("\n")) {
      const answered = handle(ws, line);
      if (answered === null) return;
      answers.push(answered);
    }
    if (answers.every((line) => typeof line === "string")) return void ws.send(answers.join("\n"));
    void Promise.all(answers).then((lines) => {
      if (ws.readyState === 1) ws.send(lines.join("\n"));
    });
  }

  /** The answer's line; null when the channel was closed instead. */
  function handle(ws: ServerWebSocket<ChannelData>, text: string): string | Promise<string> | null {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      ws.close(1007, "a channel message is not JSON");
      return null;
    }
    const parsed = v.safeParse(channelRequest, raw);
    if (!parsed.success) {
      // Without an id the answer could reach no request: the channel is closed (the shim fails closed).
      const id = (raw as { id?: unknown } | null)?.id;
      if (typeof id === "number") return answerLine(id, refusal(400, "bad_request", `invalid channel message: ${parsed.issues[0]?.message ?? "invalid"}`));
      ws.close(1008, "a channel message without an id");
      return null;
    }
    const { id, method, path, body } = parsed.output;
    const failed = (error: unknown) => {
      log.error(`governance service: ${method} ${path} on a shim's channel failed: ${messageOf(error)}`);
      return refusal(500, "internal", "internal error");
    };
    let given: Answer | Promise<Answer>;
    try {
      given = api(method, path, body, ws.data.caller);
    } catch (error) {
      given = failed(error);
    }
    return given instanceof Promise ? given.then((later) => answerLine(id, later), (error: unknown) => answerLine(id, failed(error))) : answerLine(id, given);
  }

  return {
    websocket: {
      maxPayloadLength: maxPayloadBytes,
      // Shims send a heartbeat every 5 s; a channel is closed by its shim or by the service stopping.
      idleTimeout: 0,
      open(ws) {
        sockets.add(ws);
        if (shuttingDown) ws.send(SHUTDOWN);
      },
      message(ws, message) {
        frame(ws, typeof message === "string" ? message : new TextDecoder().decode(message));
      },
      close(ws) {
        sockets.delete(ws);
        closed(ws.data.caller);
      },
    },
    upgrade(request, server) {
      // Browsers always send Origin when they open a WebSocket; a shim sends none.
      if (request.headers.get("origin") !== null) return failure(403, "forbidden", "cross-origin requests are refused");
      opened += 1;
      if (server.upgrade(request, { data: { caller: `channel:${opened}` } })) return undefined;
      return failure(400, "bad_request", `${CHANNEL_PATH} is a WebSocket: send an Upgrade request`);
    },
    pushShutdown() {
      shuttingDown = true;
      for (const ws of sockets) ws.send(SHUTDOWN);
    },
    get open() {
      return sockets.size;
    },
  };
}
