import type { JsonRpcId } from "../core/jsonrpc.ts";
import type { RequestTrace } from "./call-trace.ts";

/**
 * Requests awaiting their answer, per direction, so responses can be correlated (latency, status)
 * and requests nobody answers can be reported.
 */
export type PendingRequest = {
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

/**
 * How many requests may wait for an answer per direction, and how many characters their ids,
 * methods and tool names may hold together. A peer that never answers (a stuck or hostile server)
 * would otherwise grow the shim without end: 300,000 unanswered ids took it to 240-350 MB.
 * A request past either is answered with `tooManyPending` and reaches no one
 * (docs/governance.md, "Error codes"). Both far above what an agent keeps waiting.
 */
const MAX_PENDING_REQUESTS = 10_000;
const MAX_PENDING_CHARS = 16 * 1024 * 1024;
/** What an entry costs besides its strings (the object, the map's slot), in characters' worth. */
const ENTRY_OVERHEAD_CHARS = 200;

export class RequestTracker {
  // Map keys compare ids by value and type: 1 and "1" stay different requests, as JSON-RPC wants.
  private readonly byKey = new Map<JsonRpcId, PendingRequest>();
  /** The characters the entries hold (their ids, methods and tool names), for MAX_PENDING_CHARS. */
  private heldChars = 0;

  get size(): number {
    return this.byKey.size;
  }

  has(id: JsonRpcId): boolean {
    return this.byKey.has(id);
  }

  /**
   * Why a request with this id and method may not wait here now (`others` more wait elsewhere,
   * still to be added: those awaiting their decision), or null when it may.
   */
  refusal(id: JsonRpcId, method: string, others = 0): string | null {
    if (this.byKey.size + others >= MAX_PENDING_REQUESTS) return `${MAX_PENDING_REQUESTS} requests are already waiting for an answer`;
    if (this.heldChars + charsOf(id, method) > MAX_PENDING_CHARS) return `the requests waiting for an answer already hold ${Math.round(this.heldChars / 1024)} KiB of ids and names`;
    return null;
  }

  add(entry: PendingRequest): void {
    const before = this.byKey.get(entry.id);
    if (before) this.heldChars -= charsOf(before.id, before.method, before.call?.tool);
    this.byKey.set(entry.id, entry);
    this.heldChars += charsOf(entry.id, entry.method, entry.call?.tool);
  }

  /** Remove and return the request this response answers, if we saw it. */
  settle(id: JsonRpcId): PendingRequest | undefined {
    const key = id;
    const entry = this.byKey.get(key);
    if (entry) {
      this.byKey.delete(key);
      this.heldChars -= charsOf(entry.id, entry.method, entry.call?.tool);
    }
    return entry;
  }

  get(id: JsonRpcId): PendingRequest | undefined {
    return this.byKey.get(id);
  }

  /** Remove and return every outstanding request (the peer that should answer is gone). */
  drain(): PendingRequest[] {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    this.heldChars = 0;
    return all;
  }

  /** Requests older than `timeoutMs` not reported before; each is reported once. */
  newOrphans(now: number, timeoutMs: number): PendingRequest[] {
    const orphans: PendingRequest[] = [];
    for (const entry of this.byKey.values()) {
      if (!entry.orphanReported && !entry.cancelled && !entry.longLived && now - entry.startedAt >= timeoutMs) {
        entry.orphanReported = true;
        orphans.push(entry);
      }
    }
    return orphans;
  }
}

function charsOf(id: JsonRpcId, method: string, tool = ""): number {
  return ENTRY_OVERHEAD_CHARS + (typeof id === "string" ? id.length : 0) + method.length + tool.length;
}
