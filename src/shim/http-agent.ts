import { taggedLog } from "../core/log.ts";
import { FrontEnd, type Judged } from "../http/front-end.ts";
import type { Unit } from "../stdio/framer.ts";
import { MAX_LINE_BYTES } from "../stdio/line-splitter.ts";
import { messageUnit, oversizeUnit } from "../stdio/message-unit.ts";
import { afterInput, SENDER_UNREAD_LIMIT_BYTES, type DecisionSlots, type FlowSink } from "./pump.ts";
import type { AgentSide } from "./stdio-agent.ts";

export type HttpAgentOptions = { serverId: string; hostname: string; port: number; token: string; onListening: (url: string) => void };

const decoder = new TextDecoder();

/**
 * The agent side of `shim --listen`: agents speak Streamable HTTP to the shim (`http/front-end.ts`),
 * and every message they POST goes through the same framing rules (`messageUnit`) and router as a
 * line on stdin. What the router writes to the agent is delivered on the right SSE stream.
 */
export class HttpAgent implements AgentSide {
  readonly sink: FlowSink;
  private readonly frontEnd: FrontEnd;
  private gone: (() => void) | null = null;

  constructor(private readonly options: HttpAgentOptions) {
    this.frontEnd = new FrontEnd({ hostname: options.hostname, port: options.port, token: options.token, maxMessageBytes: MAX_LINE_BYTES });
    const streams = this.frontEnd.streams;
    const log = taggedLog(options.serverId);
    this.sink = {
      send: (bytes) => void (streams.deliver(decoder.decode(bytes)) || log.debug("an answer for the agent had no stream to go to: dropped")),
      sendText: (line) => void (streams.deliver(line) || log.debug("an answer for the agent had no stream to go to: dropped")),
      backpressure: () => streams.drained(SENDER_UNREAD_LIMIT_BYTES),
      get bufferedBytes() {
        return streams.bufferedBytes;
      },
    };
  }

  pump(route: (unit: Unit) => void, toServer: FlowSink | null, decisions: DecisionSlots): Promise<void> {
    const judge = (unit: Unit): Judged => {
      route(unit);
      if (unit.kind !== "message") return { kind: "rejected" };
      const message = unit.message;
      return message.kind === "request" ? { kind: "request", id: message.id, method: message.method, params: message.params } : { kind: "other" };
    };
    const done = new Promise<void>((resolve) => {
      this.gone = resolve;
    });
    const url = this.frontEnd.listen({
      message: (bytes) => judge(messageUnit(bytes)),
      oversize: (size, head) => void judge(oversizeUnit(size, head)),
      cancelled: (id) => {
        const cancel = JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "the agent closed the request's stream" } });
        judge(messageUnit(new TextEncoder().encode(cancel)));
      },
      ended: () => this.gone?.(),
      ready: () => afterInput(toServer, this.sink, decisions),
    });
    this.options.onListening(url);
    return done;
  }

  stopReading(): void {
    this.gone?.();
  }

  async close(): Promise<void> {
    this.frontEnd.stop();
  }
}
