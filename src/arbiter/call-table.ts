import type { Call } from "../pipeline/call.ts";
import type { EventId } from "./protocol.ts";

/**
 * docs/codecli-protocol.md §6.1, one state machine per request id:
 *
 *   New ─tool.request─▶ PendingDecision ─allow─▶ Allowed ─tool.result─▶ Completed
 *                              ├─deny──────────▶ Denied ─────────────────▶ Completed
 *                              ├─timeout───────▶ DeniedTimeout ──────────▶ Completed
 *                              └─write failed──▶ FailedTransport (the session aborts)
 *
 * plus `unwaited` for a request that did not ask to wait (`requires_policy: false`: audited only)
 * and `abandoned` for one still pending when the child went away. The rules of §6.2: a decision
 * is made once per id (the first one wins, later ones are no-ops), a repeated request for a known
 * id is ignored, a result for an unknown id is reported.
 */
export type CallState = "pending" | "allowed" | "denied" | "denied_timeout" | "failed_transport" | "unwaited" | "completed" | "abandoned";

export type TrackedCall = {
  id: EventId;
  tool: string;
  requiresPolicy: boolean;
  /** The request's own `run_id`, echoed in the decision; ours when it had none. */
  runId: string;
  state: CallState;
  /** The call as the stages see it (src/pipeline/call.ts): its request, verdict, record identity and status. */
  flow: Call;
  /** What ended the wait: aborted to withdraw the decision; cleared once the call is decided. */
  cancel: AbortController | null;
};

/** Settled calls kept for duplicate detection; the oldest are forgotten past this many. */
export const REMEMBERED_CALLS = 10_000;

const SETTLED_FROM_PENDING: ReadonlySet<CallState> = new Set(["allowed", "denied", "denied_timeout", "failed_transport", "abandoned"]);

export class CallTable {
  private readonly calls = new Map<string, TrackedCall>();

  /** The call an id names, if it is known. */
  get(id: EventId): TrackedCall | undefined {
    return this.calls.get(keyOf(id));
  }

  /** Record a new request; null when the id is already known (a duplicate: §6.2, ignore it). */
  open(call: Omit<TrackedCall, "cancel">): TrackedCall | null {
    const key = keyOf(call.id);
    if (this.calls.has(key)) return null;
    const opened: TrackedCall = { ...call, cancel: call.state === "pending" ? new AbortController() : null };
    this.calls.set(key, opened);
    this.forgetOldest();
    return opened;
  }

  /** Move a pending call on; false (and no change) if it was already decided: decisions are idempotent. */
  settle(call: TrackedCall, state: CallState): boolean {
    if (call.state !== "pending" || !SETTLED_FROM_PENDING.has(state)) return false;
    call.state = state;
    const cancel = call.cancel;
    call.cancel = null;
    cancel?.abort();
    return true;
  }

  /** `tool.result`: Allowed/unwaited → Completed. Returns the call and the state it was in, or null for an unknown id. */
  complete(id: EventId): { call: TrackedCall; was: CallState } | null {
    const call = this.calls.get(keyOf(id));
    if (!call) return null;
    const was = call.state;
    if (was === "allowed" || was === "unwaited" || was === "denied" || was === "denied_timeout") call.state = "completed";
    return { call, was };
  }

  /** Calls still waiting for a decision, oldest first. */
  pending(): TrackedCall[] {
    return [...this.calls.values()].filter((call) => call.state === "pending");
  }

  /** Calls that were let run and have not reported a result. */
  running(): TrackedCall[] {
    return [...this.calls.values()].filter((call) => call.state === "allowed" || call.state === "unwaited");
  }

  private forgetOldest(): void {
    if (this.calls.size <= REMEMBERED_CALLS) return;
    for (const [key, call] of this.calls) {
      if (this.calls.size <= REMEMBERED_CALLS) break;
      if (call.state !== "pending") this.calls.delete(key);
    }
  }
}

/** `"t-1"` and `1` are different ids: the key keeps the JSON type. */
function keyOf(id: EventId): string {
  return typeof id === "number" ? `n:${id}` : `s:${id}`;
}
