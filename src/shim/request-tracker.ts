import type { JsonRpcId } from "../core/jsonrpc.ts";
import type { RequestTrace } from "./call-trace.ts";

/**
 * Outstanding requests per direction, so responses can be correlated (latency, status)
 * and requests nobody answers can be reported.
 */
export type Outstanding = {
  id: JsonRpcId;
  method: string;
  startedAt: number;
  /** Set for `tools/call`: the audit identity of the call. */
  call?: { callId: string; tool: string; argsHash: string };
  orphanReported?: boolean;
  /** The agent cancelled it after it was forwarded: the server may still answer, or never. */
  cancelled?: boolean;
  /** A list request without a cursor: its answer, if it has no next cursor either, is the whole list. */
  firstPage?: boolean;
  /** Open by design until one side ends it (MCP 2026-07-28 `subscriptions/listen`): never an orphan. */
  longLived?: boolean;
  /** A governed request's spans, when tracing is on. */
  trace?: RequestTrace;
};

export class RequestTracker {
  // Map keys compare ids by value and type: 1 and "1" stay different requests, as JSON-RPC wants.
  private readonly byKey = new Map<JsonRpcId, Outstanding>();

  get size(): number {
    return this.byKey.size;
  }

  has(id: JsonRpcId): boolean {
    return this.byKey.has(id);
  }

  add(entry: Outstanding): void {
    this.byKey.set(entry.id, entry);
  }

  /** Remove and return the request this response answers, if we saw it. */
  settle(id: JsonRpcId): Outstanding | undefined {
    const key = id;
    const entry = this.byKey.get(key);
    if (entry) this.byKey.delete(key);
    return entry;
  }

  get(id: JsonRpcId): Outstanding | undefined {
    return this.byKey.get(id);
  }

  /** Remove and return every outstanding request (the peer that should answer is gone). */
  drain(): Outstanding[] {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    return all;
  }

  /** Requests older than `timeoutMs` not reported before; each is reported once. */
  newOrphans(now: number, timeoutMs: number): Outstanding[] {
    const orphans: Outstanding[] = [];
    for (const entry of this.byKey.values()) {
      if (!entry.orphanReported && !entry.cancelled && !entry.longLived && now - entry.startedAt >= timeoutMs) {
        entry.orphanReported = true;
        orphans.push(entry);
      }
    }
    return orphans;
  }
}
