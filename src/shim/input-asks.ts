import { callDigest } from "../core/canonical-json.ts";
import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import type { AskOptions, AskPurpose, ElicitOutcome, Verdict } from "../governance/verdict/decider.ts";
import { approvalForm, outcomeOf } from "./approval-form.ts";
import type { LazyAbort } from "./held-decisions.ts";
import type { PendingRequest } from "./request-tracker.ts";

/** The key of the shim's own question in an `input_required` result (MCP 2026-07-28 multi round-trip). */
export const APPROVAL_INPUT_KEY = "thoughtgate_approval";
/** An ask the agent never retried is forgotten after this long. */
const ASK_RETENTION_MS = 15 * 60_000;
const MAX_ASKS = 1_000;
const STATE_PREFIX = "tg1.";


/** The parts of a governed request's params that belong to a multi round-trip, not to the call. */
type RoundParams = { inputResponses?: Record<string, unknown>; requestState?: string };

export type Ask = {
  nonce: string;
  digest: string;
  expiresAt: number;
  /** When the question went to the agent. */
  askedAt: number;
  /** The first request: answered with `input_required`; its call continues in the retry. */
  first: PendingRequest;
  request: JsonRpcRequest;
  control: LazyAbort;
  /** The server's own round the first request was part of, put back on the retry. */
  serverRound: RoundParams;
  answer: (outcome: ElicitOutcome) => void;
  /** The retry that carries the answer, waiting for the decision: `resume` gets it (null: the retry was cancelled). */
  retry: { entry: PendingRequest; control: LazyAbort; resume: (verdict: Verdict | null) => void } | null;
  /** The decision, when it came before the retry (a person decided on the page, or it timed out). */
  verdict: Verdict | null;
  used: boolean;
  /** The `input_required` result the question went out in: asked again as it was. */
  result: Record<string, unknown>;
  /** What the form offered (an "always" it did not offer is no answer). */
  offered: AskOptions;
};

export type Recognized =
  | { kind: "none" }
  /** Our question's answer, for an open ask; `bytes` is the request with our parts taken out. */
  | { kind: "answer"; ask: Ask; outcome: ElicitOutcome; request: JsonRpcRequest; bytes: Uint8Array }
  /** A retry with our state and no answer to our question: the question is asked again, the ask stays open. */
  | { kind: "unanswered"; ask: Ask }
  /** Our state, intact, but for another call or an ask already used or gone: decide it as a new call. */
  | { kind: "stale"; request: JsonRpcRequest; bytes: Uint8Array }
  /** A state we did not mint, or an answer that is not an answer: refused. */
  | { kind: "forged"; reason: string };

/**
 * Approvals through a modern agent (MCP 2026-07-28), where a server may not send the agent requests:
 * the shim answers the governed request with an `input_required` result whose input request is the
 * approval form, and a `requestState` it minted (an HMAC under a key of this run, so a forged or
 * edited state is refused). The agent retries the call with the answer under `inputResponses`;
 * the retry is matched to the open ask by that single-use state and by the digest of the call
 * (server, method, name, canonical arguments): changed arguments or a used state make a new call.
 * Before the approved retry goes to the server, the shim takes its own answer and state out and
 * puts back any round of the server's own that the first request carried.
 */
export class InputAsks {
  // Web Crypto and Bun's hasher, not node:crypto: loading that module costs a shim ~3 ms and ~4 MB
  // at start (docs/benchmarks.md, "Where the memory goes").
  private readonly key = crypto.getRandomValues(new Uint8Array(32));
  private readonly asks = new Map<string, Ask>();

  constructor(private readonly serverId: string) {}

  digestOf(request: JsonRpcRequest): string {
    const params = request.params as { name?: string; uri?: string; arguments?: unknown };
    const name = request.method.startsWith("resources/") ? params.uri : params.name;
    return callDigest(this.serverId, request.method, name ?? "", request.method === "resources/read" ? null : (params.arguments ?? {}));
  }

  /** Open an ask for `first`; returns it and the `input_required` result to answer `first` with. */
  open(first: PendingRequest, request: JsonRpcRequest, control: LazyAbort, message: string, answer: (outcome: ElicitOutcome) => void, ttlMs: number, purpose: AskPurpose = "call", offered: AskOptions = {}): { ask: Ask; result: Record<string, unknown> } {
    this.prune();
    const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");
    const now = Date.now();
    const params = request.params as RoundParams;
    const ask: Ask = {
      nonce,
      digest: this.digestOf(request),
      expiresAt: now + Math.min(ttlMs, ASK_RETENTION_MS),
      askedAt: performance.now(),
      first,
      request,
      control,
      serverRound: { ...(params.inputResponses !== undefined ? { inputResponses: params.inputResponses } : {}), ...(params.requestState !== undefined ? { requestState: params.requestState } : {}) },
      answer,
      retry: null,
      verdict: null,
      used: false,
      result: {},
      offered,
    };
    ask.result = {
      resultType: "input_required",
      inputRequests: { [APPROVAL_INPUT_KEY]: { method: "elicitation/create", params: { mode: "form", message, requestedSchema: approvalForm(null, purpose, offered) } } },
      requestState: this.stateFor(ask),
    };
    this.asks.set(nonce, ask);
    return { ask, result: ask.result };
  }

  /** Is this governed request the retry of one of our asks? */
  recognize(request: JsonRpcRequest): Recognized {
    const params = request.params as RoundParams & Record<string, unknown>;
    const state = params.requestState;
    if (typeof state !== "string" || !state.startsWith(STATE_PREFIX)) return { kind: "none" };
    const parsed = this.verify(state);
    if (!parsed) return { kind: "forged", reason: "the requestState was not issued by ThoughtGate, or was changed" };
    const ask = this.asks.get(parsed.nonce);
    const usable = ask !== undefined && !ask.used && Date.now() <= ask.expiresAt && ask.digest === this.digestOf(request);
    const stripped = this.strip(request, usable && ask ? ask.serverRound : {});
    if (!usable || !ask) return { kind: "stale", ...stripped };
    const response = params.inputResponses?.[APPROVAL_INPUT_KEY];
    // MCP 2026-07-28: a retry without the answer is asked again rather than refused.
    if (response === undefined) return { kind: "unanswered", ask };
    const outcome = outcomeOf(response, performance.now() - ask.askedAt, ask.offered);
    if (outcome === null) return { kind: "forged", reason: `inputResponses.${APPROVAL_INPUT_KEY} is not an elicitation result` };
    ask.used = true;
    return { kind: "answer", ask, outcome, ...stripped };
  }

  /** Forget an ask (its first request's call has ended without a retry). */
  close(ask: Ask): void {
    this.asks.delete(ask.nonce);
  }

  private stateFor(ask: Ask): string {
    return `${STATE_PREFIX}${ask.nonce}.${ask.expiresAt}.${this.mac(ask.nonce, ask.expiresAt)}`;
  }

  private verify(state: string): { nonce: string; expiresAt: number } | null {
    const [nonce, expires, mac] = state.slice(STATE_PREFIX.length).split(".");
    if (!nonce || !expires || !mac || !/^\d+$/.test(expires)) return null;
    const expected = Buffer.from(this.mac(nonce, Number(expires)));
    const given = Buffer.from(mac);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? { nonce, expiresAt: Number(expires) } : null;
  }

  private mac(nonce: string, expiresAt: number): string {
    return new Bun.CryptoHasher("sha256", this.key).update(`${STATE_PREFIX}${nonce}|${expiresAt}|${this.serverId}`).digest("base64url");
  }

  /** The request with our answer and state taken out, and the server's own round (if any) put back. */
  private strip(request: JsonRpcRequest, serverRound: RoundParams): { request: JsonRpcRequest; bytes: Uint8Array } {
    const { inputResponses, requestState: _ours, ...rest } = request.params as RoundParams & Record<string, unknown>;
    const others = { ...(inputResponses ?? {}) };
    delete others[APPROVAL_INPUT_KEY];
    const responses = { ...(serverRound.inputResponses ?? {}), ...others };
    const params: Record<string, unknown> = {
      ...rest,
      ...(Object.keys(responses).length > 0 ? { inputResponses: responses } : {}),
      ...(serverRound.requestState !== undefined ? { requestState: serverRound.requestState } : {}),
    };
    const body = { ...request.body, params };
    return { request: { ...request, params, body }, bytes: new TextEncoder().encode(JSON.stringify(body)) };
  }

  private prune(): void {
    const now = Date.now();
    for (const [nonce, ask] of this.asks) if (now > ask.expiresAt + 60_000) this.asks.delete(nonce);
    if (this.asks.size < MAX_ASKS) return;
    const oldest = this.asks.keys().next().value;
    if (oldest !== undefined) this.asks.delete(oldest);
  }
}
