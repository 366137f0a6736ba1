/**
 * The benchmark's agent: spawns one configuration (the server alone, or a proxy in front of it)
 * with Bun.spawn and speaks NDJSON JSON-RPC to it over pipes. Request lines are built before the
 * clock starts, so a timing covers only the write, the trip through the processes and the read.
 */
import type { Subprocess } from "bun";
import { LineReader } from "./line-reader.ts";

type Piped = Subprocess<"pipe", "pipe", "inherit">;

/** How long a configuration gets to exit after its stdin closes (or SIGTERM) before the bench kills it. */
const EXIT_TIMEOUT_MS = 15_000;
/** A pipelined run with no response byte for this long is stalled: a deadlock, not a slow proxy. */
export const STALL_MS = 3_000;
/** Requests per write in a pipelined run (~7 KB of tools/call lines). */
const PIPELINE_BATCH_LINES = 64;

export type Call = { method: string; params: unknown };

/** A pipelined run of `count` requests. */
export type Throughput =
  | { ok: true; count: number; elapsedMs: number }
  /** No progress for `STALL_MS`: `received` of the requests had been answered. */
  | { ok: false; count: number; received: number };

type Batch = { text: string; lines: number };

export class BenchClient {
  private nextId = 1;
  private closing: Promise<number> | null = null;
  /** Set after a stall: the pipes hold data nobody will read, so only a signal ends it. */
  private stalled = false;

  private constructor(
    private readonly proc: Piped,
    private readonly lines: LineReader,
  ) {}

  static spawn(command: string[], env: Record<string, string>): BenchClient {
    const proc = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "inherit", env });
    return new BenchClient(proc, new LineReader(proc.stdout.getReader()));
  }

  get pid(): number {
    return this.proc.pid;
  }

  get usable(): boolean {
    return !this.stalled;
  }

  /** One request, its response awaited; returns the round trip in ms. */
  async roundTrip(call: Call): Promise<number> {
    return (await this.exchange(call)).ms;
  }

  /** One request, its response awaited: the round trip in ms, and the response line. */
  async exchange({ method, params }: Call): Promise<{ ms: number; reply: Uint8Array }> {
    const id = this.nextId++;
    const line = requestLine(id, method, JSON.stringify(params));
    const started = performance.now();
    this.proc.stdin.write(line);
    const flushed = this.proc.stdin.flush();
    if (flushed instanceof Promise) await flushed;
    const reply = await this.lines.next();
    const ms = performance.now() - started;
    expectResult(reply, id, id);
    return { ms, reply };
  }

  /**
   * `count` requests written as fast as the pipe takes them while the responses are read; with
   * `window`, never more than that many unanswered. Elapsed ms from the first write to the last
   * response, or how far it got before it stalled.
   */
  async pipelined({ method, params }: Call, count: number, window = Number.POSITIVE_INFINITY): Promise<Throughput> {
    const paramsJson = JSON.stringify(params);
    const firstId = this.nextId;
    this.nextId += count;
    const batches: Batch[] = [];
    for (let offset = 0; offset < count; offset += PIPELINE_BATCH_LINES) {
      const lines = Math.min(PIPELINE_BATCH_LINES, count - offset);
      let text = "";
      for (let i = offset; i < offset + lines; i++) text += requestLine(firstId + i, method, paramsJson);
      batches.push({ text, lines });
    }
    const consumedBefore = this.lines.linesConsumed;
    const started = performance.now();
    const exchange = Number.isFinite(window) ? this.windowed(batches, window) : this.unbounded(batches, count);
    const last = await this.unlessStalled(exchange);
    if (last === null) {
      this.stalled = true;
      // The exchange stays pending on pipes nobody drains; it rejects once the proxy is gone.
      exchange.catch(() => undefined);
      return { ok: false, count, received: this.lines.linesConsumed - consumedBefore };
    }
    const elapsedMs = performance.now() - started;
    // Not necessarily the last id: calls decided by a governance service reach the server in the
    // order their HTTP answers arrive, so one can overtake another.
    expectResult(last, firstId, firstId + count - 1);
    return { ok: true, count, elapsedMs };
  }

  /**
   * MCP stdio lifecycle: close stdin and let it exit (after a stall, SIGTERM: its pipes are full);
   * SIGKILL only if it does not. Resolves with the exit code. Idempotent.
   */
  close(): Promise<number> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async unbounded(batches: Batch[], count: number): Promise<Uint8Array> {
    const received = this.lines.skip(count);
    // Observed here so a rejection while the writes are still pending is not unhandled; the caller still sees it.
    received.catch(() => undefined);
    for (const batch of batches) {
      if (this.stalled) break;
      await this.write(batch.text);
    }
    return received;
  }

  private async windowed(batches: Batch[], window: number): Promise<Uint8Array> {
    const inFlight: number[] = [];
    let unanswered = 0;
    let last: Uint8Array = new Uint8Array(0);
    const settleOldest = async () => {
      const lines = inFlight.shift() ?? 0;
      last = await this.lines.skip(lines);
      unanswered -= lines;
    };
    for (const batch of batches) {
      while (unanswered > 0 && unanswered + batch.lines > window) await settleOldest();
      if (this.stalled) break;
      await this.write(batch.text);
      inFlight.push(batch.lines);
      unanswered += batch.lines;
    }
    while (inFlight.length > 0) await settleOldest();
    return last;
  }

  private async write(text: string): Promise<void> {
    this.proc.stdin.write(text);
    const flushed = this.proc.stdin.flush();
    if (flushed instanceof Promise) await flushed;
  }

  /** `work`'s value, or null once no response byte has arrived for `STALL_MS`. */
  private async unlessStalled<T>(work: Promise<T>): Promise<T | null> {
    let seen = this.lines.bytesRead;
    let timer: ReturnType<typeof setInterval> | undefined;
    const stall = new Promise<null>((resolve) => {
      timer = setInterval(() => {
        if (this.lines.bytesRead === seen) resolve(null);
        seen = this.lines.bytesRead;
      }, STALL_MS);
    });
    try {
      return await Promise.race([work, stall]);
    } finally {
      clearInterval(timer);
    }
  }

  private async closeOnce(): Promise<number> {
    if (this.stalled) {
      this.proc.kill("SIGTERM");
    } else {
      try {
        // Not awaited: if the process stopped reading, the exit timeout below still applies.
        Promise.resolve(this.proc.stdin.end()).catch(() => undefined);
      } catch {
        // Already closed because the process is gone: waiting on `exited` covers it.
      }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), EXIT_TIMEOUT_MS);
    });
    const code = await Promise.race([this.proc.exited, timedOut]);
    clearTimeout(timer);
    await this.lines.cancel().catch(() => undefined);
    if (code === null) {
      this.proc.kill("SIGKILL");
      await this.proc.exited;
      throw new Error(`pid ${this.proc.pid} did not exit within ${EXIT_TIMEOUT_MS} ms: killed`);
    }
    return code;
  }
}

function requestLine(id: number, method: string, paramsJson: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}\n`;
}

const decoder = new TextDecoder();

/** A response that is not a success for an id in `first..last` means the figures would measure the wrong thing. */
function expectResult(line: Uint8Array, first: number, last: number): void {
  const text = decoder.decode(line);
  const reply = JSON.parse(text) as { id?: unknown; result?: unknown };
  if (typeof reply.id !== "number" || reply.id < first || reply.id > last || reply.result === undefined) {
    const ids = first === last ? `id ${first}` : `an id in ${first}..${last}`;
    throw new Error(`expected a result for ${ids}, got ${text.slice(0, 300)}`);
  }
}
