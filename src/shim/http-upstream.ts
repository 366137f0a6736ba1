import { errorResponse, RPC, type JsonRpcId } from "../core/jsonrpc.ts";
import { taggedLog } from "../core/log.ts";
import { RemoteServer, type Authorizer } from "../http/remote-server.ts";
import type { Delivery } from "../http/sse-reader.ts";
import type { Unit } from "../stdio/framer.ts";
import { MAX_LINE_BYTES } from "../stdio/line-splitter.ts";
import { messageUnit, oversizeUnit } from "../stdio/message-unit.ts";
import type { FlowSink } from "./pump.ts";
import type { Graces, ServerState, Upstream } from "./upstream.ts";

export type HttpUpstreamOptions = {
  serverId: string;
  url: URL;
  headers: ReadonlyArray<readonly [string, string]>;
  auth: Authorizer | null;
  requestTimeoutMs: number | null;
};

const encoder = new TextEncoder();

/**
 * The MCP server at a URL (Streamable HTTP). Every message the server sends, in a JSON body or an
 * SSE event, goes through the same framing rules as a stdio line (`messageUnit`) before the router
 * sees it. A request the server will not answer (a 5xx, a dropped stream, a refused redirect, a
 * timeout) is answered here with a transport error for its id, as the router answers every pending
 * request when a stdio server exits.
 */
export class HttpUpstream implements Upstream {
  readonly command: string[] = [];
  readonly url: string;
  private remote: RemoteServer | null = null;
  private route: (unit: Unit) => void = () => {};
  private toAgent: FlowSink | null = null;
  private endedWith: ((detail: string) => void) | null = null;
  private readonly ended: Promise<string>;
  private endDetail: string | null = null;

  constructor(private readonly options: HttpUpstreamOptions) {
    this.url = `${options.url.origin}${options.url.pathname}`;
    this.ended = new Promise((resolve) => {
      this.endedWith = resolve;
    });
  }

  open(): { sink: FlowSink; state: ServerState } {
    const remote = new RemoteServer(
      { url: this.options.url, headers: this.options.headers, auth: this.options.auth, maxMessageBytes: MAX_LINE_BYTES, requestTimeoutMs: this.options.requestTimeoutMs },
      {
        message: (bytes) => this.deliver(messageUnit(bytes)),
        oversize: (size, head) => this.deliver(oversizeUnit(size, head)),
        unanswered: (id, detail) => this.unanswered(id, detail),
        ended: (detail) => {
          this.endDetail ??= detail;
          this.endedWith?.(`it ended the session: ${detail}`);
        },
        drained: () => this.toAgent?.backpressure() ?? null,
      },
    );
    this.remote = remote;
    const sink: FlowSink = {
      send: (bytes) => remote.send(bytes),
      sendText: (line) => remote.send(encoder.encode(line)),
      backpressure: () => null,
      bufferedBytes: 0,
    };
    taggedLog(this.options.serverId).debug(`remote server ${this.url}`);
    return { sink, state: { state: "running", url: this.url } };
  }

  pump(route: (unit: Unit) => void, toAgent: FlowSink): Promise<string> {
    this.route = route;
    this.toAgent = toAgent;
    return this.ended;
  }

  hurry(): void {}

  async stop(_graces: Graces): Promise<{ exitCode: number; state: ServerState }> {
    await this.remote?.close();
    const state: ServerState = { state: "closed", url: this.url, ...(this.endDetail === null ? {} : { detail: this.endDetail }) };
    return { exitCode: this.endDetail === null ? 0 : 1, state };
  }

  private deliver(unit: Unit): Delivery {
    this.route(unit);
    if (unit.kind === "message") return { ok: true, message: unit.message };
    // The router answers the request a rejected response was for (docs/architecture.md, decision 2).
    return { ok: false, answered: !unit.error.looksLikeRequest ? unit.error.id : null };
  }

  private unanswered(id: JsonRpcId, detail: string): void {
    const line = errorResponse(id, RPC.serverUnavailable, `MCP server "${this.options.serverId}" did not answer: ${detail}`, {
      gate: "transport",
      server_id: this.options.serverId,
      reason: detail,
    });
    this.deliver(messageUnit(encoder.encode(line)));
  }
}
