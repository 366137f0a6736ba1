import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import type { Verdict } from "../governance/verdict/decider.ts";

/** How long after a server's `input_required` answer the agent's retry still continues that call. */
const ROUND_TTL_MS = 10 * 60_000;
const MAX_ROUNDS = 1_000;

type Round = { verdict: Verdict; keys: Set<string>; state: string | undefined; expiresAt: number };

/**
 * A tool's own multi round-trip (MCP 2026-07-28): the server answered a call the gates let through
 * with `input_required`, and the agent retries the same call with `inputResponses` (and the
 * server's `requestState`, if it sent one). The retry is the same call (same server, method, name
 * and canonical arguments: its digest), so it continues under the decision already made instead
 * of asking a person again each round; it passes to the server untouched. A round is used once.
 */
export class ServerRounds {
  private readonly rounds = new Map<string, Round>();

  /** The server answered `input_required` to a call decided by `verdict`. */
  note(digest: string, verdict: Verdict, result: Record<string, unknown>): void {
    if (verdict.action !== "forward") return;
    const requests = result.inputRequests;
    const keys = new Set(requests !== null && typeof requests === "object" ? Object.keys(requests) : []);
    const state = typeof result.requestState === "string" ? result.requestState : undefined;
    if (this.rounds.size >= MAX_ROUNDS) {
      const oldest = this.rounds.keys().next().value;
      if (oldest !== undefined) this.rounds.delete(oldest);
    }
    this.rounds.set(digest, { verdict, keys, state, expiresAt: Date.now() + ROUND_TTL_MS });
  }

  /** The decision a retry continues, if `request` answers the server's last round for the same call. */
  continues(digest: string, request: JsonRpcRequest): Verdict | null {
    const round = this.rounds.get(digest);
    if (!round) return null;
    const params = request.params as { inputResponses?: unknown; requestState?: unknown };
    const answered = params.inputResponses !== null && typeof params.inputResponses === "object" ? Object.keys(params.inputResponses) : [];
    const matches =
      Date.now() <= round.expiresAt &&
      (round.state !== undefined ? params.requestState === round.state : params.requestState === undefined) &&
      answered.every((key) => round.keys.has(key));
    if (!matches) return null;
    this.rounds.delete(digest);
    return round.verdict;
  }
}

/** Whether a governed request carries a round of a multi round-trip (answers, or the server's state). */
export function isRoundRetry(request: JsonRpcRequest): boolean {
  const params = request.params as { inputResponses?: unknown; requestState?: unknown };
  return params.inputResponses !== undefined || params.requestState !== undefined;
}
