import { log as rootLog } from "../core/log.ts";
import type { Fetched } from "./fetch-policy.ts";
import { readEventStream, resumableEventId, type StreamSink } from "./sse-reader.ts";

/**
 * The GET stream of MCP 2025-11-25 Streamable HTTP: where a server sends requests and
 * notifications that belong to no request of the client (sampling, elicitation, list changes).
 * Opened once the session is initialized; reopened after the server closes it (after its `retry`,
 * with `Last-Event-ID` when it gave event ids), until the shim stops. A server that offers no
 * stream answers 405, and none is opened again; HTTP 404 means the session is over.
 */
const DEFAULT_RETRY_MS = 1_000;
const MAX_FAILURES = 5;
const log = rootLog.withTag("http");

export type ListenOptions = {
  get: (lastEventId: string | null, signal: AbortSignal) => Promise<Fetched>;
  sink: StreamSink;
  maxMessageBytes: number;
  ended: (detail: string) => void;
};

export class ListenStream {
  private controller: AbortController | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: ListenOptions) {}

  start(): void {
    if (this.running || this.controller?.signal.aborted) return;
    this.controller = new AbortController();
    this.running = this.loop(this.controller.signal).catch((error: unknown) => log.warn(`server stream: ${(error as Error).message}`));
  }

  stop(): void {
    if (!this.controller) this.controller = new AbortController();
    this.controller.abort();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    let lastEventId: string | null = null;
    let failures = 0;
    while (!signal.aborted) {
      const fetched = await this.options.get(lastEventId, signal);
      if (signal.aborted) return;
      let retryMs = DEFAULT_RETRY_MS;
      if (!fetched.ok) {
        failures++;
        log.debug(`server stream: ${fetched.detail}`);
      } else {
        const { response } = fetched;
        const type = response.headers.get("content-type") ?? "";
        if (response.status === 405) {
          void response.body?.cancel().catch(() => undefined);
          return;
        }
        if (response.status === 404) {
          void response.body?.cancel().catch(() => undefined);
          this.options.ended("the server ended the session (HTTP 404)");
          return;
        }
        if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
          void response.body?.cancel().catch(() => undefined);
          failures++;
          log.debug(`server stream: HTTP ${response.status} ${type}`);
        } else {
          const end = await readEventStream(response.body, this.options.sink, this.options.maxMessageBytes, lastEventId);
          // An id no header can carry is not sent back: the stream is reopened without one.
          lastEventId = resumableEventId(end.lastEventId) ? end.lastEventId : null;
          retryMs = end.retryMs ?? retryMs;
          failures = end.events > 0 ? 0 : failures + 1;
        }
      }
      if (failures >= MAX_FAILURES) {
        log.warn(`the server's stream for its own requests failed ${failures} times in a row; not reopened (requests it sends outside a call will not arrive)`);
        return;
      }
      await sleepUnlessAborted(retryMs * Math.max(1, failures), signal);
    }
  }
}

export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
