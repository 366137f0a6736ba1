import type { JsonRpcId } from "../core/jsonrpc.ts";
import type { PendingRequest } from "./request-tracker.ts";

/**
 * Governed requests whose decision is still pending (a service round trip, a human, the shim's own
 * read of the tool list), by id. A held request holds only itself (docs/architecture.md, decision 6);
 * the count is what backpressure on the agent waits on.
 */
export class HeldDecisions {
  private readonly held = new Map<JsonRpcId, { entry: PendingRequest; control: LazyAbort }>();
  private readonly waiters: Array<() => void> = [];

  get size(): number {
    return this.held.size;
  }

  /** Resolves when a held decision settles. */
  settled(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  has(id: JsonRpcId): boolean {
    return this.held.has(id);
  }

  hold(entry: PendingRequest, control: LazyAbort): void {
    this.held.set(entry.id, { entry, control });
  }

  /** Take a held request back; false when it is no longer held (cancelled, or the server went away). */
  release(entry: PendingRequest): boolean {
    if (this.held.get(entry.id)?.entry !== entry) return false;
    this.held.delete(entry.id);
    this.wake();
    return true;
  }

  /** The agent cancelled `id`: its decision is aborted and the request returned, if it was held. */
  cancel(id: JsonRpcId): PendingRequest | undefined {
    const held = this.held.get(id);
    if (!held) return undefined;
    held.control.abort();
    this.release(held.entry);
    return held.entry;
  }

  /** Abort every held decision and return the requests (the server went away). */
  drain(): PendingRequest[] {
    const entries = [...this.held.values()].map(({ entry, control }) => {
      control.abort();
      return entry;
    });
    this.held.clear();
    this.wake();
    return entries;
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/**
 * An AbortController made only when someone asks for its signal: most decisions are synchronous
 * and never need one (a controller per call cost ~5% of the shim's time).
 */
export class LazyAbort {
  private controller: AbortController | null = null;
  private wasAborted = false;

  /** `linked` is aborted with this one (a retry that carries an approval aborts the approval). */
  constructor(private readonly linked: LazyAbort | null = null) {}

  get aborted(): boolean {
    return this.wasAborted;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.wasAborted) this.controller.abort();
    return this.controller.signal;
  }

  abort(): void {
    this.wasAborted = true;
    this.controller?.abort();
    this.linked?.abort();
  }
}
