import type { JsonRpcRequest, JsonRpcResponse } from "../core/jsonrpc.ts";
import { callRef, type AskOptions, type AskPurpose, type ElicitOutcome, type Verdict } from "../governance/verdict/decider.ts";
import type { DefinitionChange } from "../governance/verdict/definition-acceptance.ts";
import { deniedVerdict } from "../governance/verdict/deny-error.ts";
import { GOVERNANCE_ERROR } from "../governance/verdict/errors.ts";
import type { Sink } from "../stdio/line-sink.ts";
import type { CallAudit } from "./call-audit.ts";
import type { HeldDecisions, LazyAbort } from "./held-decisions.ts";
import { InputAsks, type Ask, type Recognized } from "./input-asks.ts";
import type { PendingRequest } from "./request-tracker.ts";
import { isRoundRetry, ServerRounds } from "./server-rounds.ts";

/** An approval asked through a modern agent is forgotten if the agent does not retry within this long. */
const ASK_TTL_MS = 15 * 60_000;

/** What an ask needs of the request it is opened for. */
type Asked = { entry: PendingRequest; request: JsonRpcRequest; control: LazyAbort };

/**
 * The modern era's asks, both ways (MCP 2026-07-28 multi round-trip): the shim's own approval
 * question answered as `input_required` and its answer recognised in the agent's retry
 * (input-asks.ts), and a tool's own `input_required` rounds continued under the decision already
 * made (server-rounds.ts). The parse stage recognises a retry here, the decide stage opens asks
 * and waits for their decision here; the first request's decision and the retry that carries the
 * answer meet here, whichever comes first. One instance per shim.
 */
export class RetryAsks {
  private readonly asks: InputAsks;
  private readonly rounds = new ServerRounds();
  /** Requests answered with our `input_required` question, by their entry. */
  private readonly askOf = new WeakMap<PendingRequest, Ask>();
  /** Asks about a changed definition (not the call): their answer leads to the call's own decision. */
  private readonly changeOf = new WeakMap<Ask, DefinitionChange>();
  /** Modern requests the gates let through, for the server's own `input_required` rounds. */
  private readonly decidedOf = new WeakMap<PendingRequest, { request: JsonRpcRequest; verdict: Verdict }>();

  constructor(
    private readonly serverId: string,
    private readonly held: HeldDecisions,
    private readonly toAgent: Pick<Sink, "sendText">,
    private readonly audit: Pick<CallAudit, "decision" | "endCall">,
  ) {
    this.asks = new InputAsks(serverId);
  }

  /** Is this modern request the retry of one of our asks (input-asks.ts)? */
  recognize(request: JsonRpcRequest): Recognized {
    return this.asks.recognize(request);
  }

  /** A retry with our state and no answer: the question again, with the same state (the ask stays open). */
  askAgain(entry: PendingRequest, ask: Ask): void {
    const line = JSON.stringify({ jsonrpc: "2.0", id: entry.id, result: ask.result });
    this.toAgent.sendText(line);
    this.audit.endCall(entry, "input_required", Buffer.byteLength(line));
  }

  /** The decision a retry of a tool's own round continues under, if it is one. */
  continuesRound(request: JsonRpcRequest): Verdict | null {
    if (!isRoundRetry(request)) return null;
    const continued = this.rounds.continues(this.asks.digestOf(request), request);
    return continued ? { ...continued, reason: `continues the call the server asked input for: ${continued.reason}` } : null;
  }

  /** A modern request the gates let through: the server's own `input_required` rounds continue under it. */
  decided(entry: PendingRequest, request: JsonRpcRequest, verdict: Verdict): void {
    if (verdict.action === "forward") this.decidedOf.set(entry, { request, verdict });
  }

  /** A response to a governed request the server ran: a tool's own `input_required` round is noted. */
  serverAnswered(entry: PendingRequest, message: JsonRpcResponse): void {
    const decided = this.decidedOf.get(entry);
    if (!decided || message.isError) return;
    const result = message.body.result as Record<string, unknown> | undefined;
    if (result?.resultType === "input_required") this.rounds.note(this.asks.digestOf(decided.request), decided.verdict, result);
  }

  /** The ask `entry` was answered with, if the decider asked through it. */
  openFor(entry: PendingRequest): Ask | undefined {
    return this.askOf.get(entry);
  }

  /** The definition an ask was about (its answer is an acceptance, not the call's decision). */
  changeAsked(ask: Ask): DefinitionChange | undefined {
    return this.changeOf.get(ask);
  }

  /**
   * The decider's `elicit` for a modern request: the request is answered with our `input_required`
   * question at once, and the promise settles when the agent retries with the answer.
   */
  elicit(asked: Asked, change?: DefinitionChange) {
    const { entry, request, control } = asked;
    return (message: string, signal: AbortSignal, purpose?: AskPurpose, options?: AskOptions): Promise<ElicitOutcome> =>
      new Promise<ElicitOutcome>((resolve, reject) => {
        if (signal.aborted) {
          reject(new Error("approval aborted"));
          return;
        }
        const { ask, result } = this.asks.open(entry, request, control, message, resolve, ASK_TTL_MS, purpose, options);
        this.askOf.set(entry, ask);
        if (change) this.changeOf.set(ask, change);
        signal.addEventListener("abort", () => reject(new Error("approval aborted")), { once: true });
        this.held.release(entry);
        const line = JSON.stringify({ jsonrpc: "2.0", id: entry.id, result });
        this.toAgent.sendText(line);
        this.audit.endCall(entry, "input_required", Buffer.byteLength(line));
      });
  }

  /**
   * The decision on the first request of `ask` (whose answer went out as `input_required`): kept
   * for the retry until it comes, or given to the retry that waits for it.
   */
  settle(ask: Ask, verdict: Verdict): void {
    const retry = ask.retry;
    if (!retry) {
      // No retry yet: keep the decision for it; the audit has it now.
      ask.verdict = verdict;
      // A definition's acceptance is not the call's decision: that one comes with the retry.
      if (!this.changeOf.has(ask)) this.audit.decision(ask.first, verdict, ask.request);
      return;
    }
    this.asks.close(ask);
    if (retry.control.aborted) {
      retry.resume(null); // the agent cancelled the retry
      return;
    }
    this.held.release(retry.entry);
    retry.resume(verdict);
  }

  /**
   * The agent retried with the answer to our question: the decision the retry continues under, at
   * once when it was made before the retry came; else the retry waits for it (held), and the
   * promise resolves with it, or null when the retry was cancelled meanwhile.
   */
  answered(ask: Ask, outcome: ElicitOutcome, retry: Asked): Verdict | Promise<Verdict | null> {
    if (ask.verdict) {
      // Decided before the retry came (on the page, by the CLI, or it timed out). A person's no in
      // the retry still beats on_timeout's approval: that default was for no answer, and nothing has
      // run yet (in the older era the call ran at the timeout, before any answer could come).
      this.asks.close(ask);
      const overruled = outcome.kind === "declined" && ask.verdict.action === "forward" && ask.verdict.approvedBy === "timeout";
      return overruled ? this.declinedAfterTimeout(ask.verdict, retry.request) : ask.verdict;
    }
    this.held.hold(retry.entry, retry.control);
    this.audit.decision(retry.entry, { action: "pending", reason: `the agent answered the approval question (${describeOutcome(outcome)})` }, retry.request);
    return new Promise<Verdict | null>((resume) => {
      ask.retry = { entry: retry.entry, control: retry.control, resume };
      ask.answer(outcome);
    });
  }

  /** on_timeout had approved the call, and then the person declined it in the retry: refused as their no. */
  private declinedAfterTimeout(approved: Verdict, request: JsonRpcRequest): Verdict {
    const reason = `${approved.reason}; then rejected by the user in the agent's retry, before anything ran`;
    return deniedVerdict({ gate: "approval", code: GOVERNANCE_ERROR.approvalRejected, ruleId: approved.ruleId, policyId: approved.policyId ?? null, reason }, callRef(request, this.serverId));
  }
}

/** `approved once`, `declined`, … for the audit's pending line. */
function describeOutcome(outcome: ElicitOutcome): string {
  if (outcome.kind !== "approved") return outcome.kind;
  return outcome.scope === "always" ? `approved always (${outcome.alwaysScope})` : `approved ${outcome.scope}`;
}
