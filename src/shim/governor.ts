import { RPC, type JsonRpcRequest, type JsonRpcResponse } from "../core/jsonrpc.ts";
import type { Logger } from "../core/log.ts";
import { callRef, invalidGovernedParams, targetName, type AskOptions, type AskPurpose, type DecisionContext, type Decider, type ElicitOutcome, type ServerProgram, type Verdict } from "../governance/verdict/decider.ts";
import { definitionRefusal, type DefinitionChange, type PinPolicy } from "../governance/verdict/definition-acceptance.ts";
import type { DefinitionKind } from "../governance/definitions/definition.ts";
import { deniedVerdict } from "../governance/verdict/deny-error.ts";
import { GOVERNANCE_ERROR } from "../governance/verdict/errors.ts";
import type { Sink } from "../stdio/line-sink.ts";
import type { CallAudit } from "./call-audit.ts";
import type { DefinitionGuard } from "./definition-guard.ts";
import type { CallTracer } from "./call-trace.ts";
import { declaresFormElicitation, LEGACY, ownRequestMeta, requestEra, type RequestEra } from "./era.ts";
import { HeldDecisions, LazyAbort } from "./held-decisions.ts";
import { InputAsks, type Ask } from "./input-asks.ts";
import type { OwnRequests } from "./own-requests.ts";
import type { PendingRequest } from "./request-tracker.ts";
import { isRoundRetry, ServerRounds } from "./server-rounds.ts";
import type { ToolCatalog } from "./tool-catalog.ts";
import { decisionFailed } from "../pipeline/decide-stage.ts";
import { compose, type Pipeline, type StageProbe } from "../pipeline/stages.ts";
import { auditStage } from "./stages/audit-stage.ts";
import type { DecidedRequest } from "./stages/decided-request.ts";
import { forwardStage } from "./stages/forward-stage.ts";
import { traceStage } from "./stages/trace-stage.ts";

/** An approval asked through a modern agent is forgotten if the agent does not retry within this long. */
const ASK_TTL_MS = 15 * 60_000;

export type GovernorOptions = {
  serverId: string;
  /** What runs the server: part of what a decision is about (an "always allow" rule names it). */
  server: ServerProgram;
  decider: Decider;
  toAgent: Sink;
  toServer: () => Sink | null;
  audit: CallAudit;
  catalog: ToolCatalog;
  definitions: DefinitionGuard;
  pinPolicy: () => PinPolicy | Promise<PinPolicy>;
  /** A person accepted a definition: the agent is told its list changed. */
  definitionsAccepted: (kind: DefinitionKind) => void;
  own: OwnRequests;
  held: HeldDecisions;
  log: Logger;
  /** A legacy agent declared form elicitation in its `initialize`. */
  legacyCanElicit: () => boolean;
  /** Send a decided request to the server (and track it for its response). */
  forward: (entry: PendingRequest, bytes: Uint8Array) => void;
  answerUnavailable: (entry: PendingRequest) => void;
  /** The spans of governed requests; absent when tracing is off (docs/governance.md, "Traces"). */
  trace?: CallTracer | undefined;
  stageProbe?: StageProbe | undefined;
};

/**
 * Every governed request from the agent (`tools/call`, `resources/read`, `resources/subscribe`,
 * `prompts/get`) goes through here: its params are checked, the tool list read when the call's
 * annotations are not known yet, the decider asked, and the verdict applied. Both MCP eras are
 * told apart per request (era.ts): a legacy agent is asked for approval with an `elicitation/create`
 * request, a modern one with an `input_required` answer it retries (input-asks.ts), and a tool's own
 * `input_required` rounds continue under the decision already made (server-rounds.ts).
 * One class: a modern call's approval continues in its retry, and both
 * share the held decisions, the open asks and the verdict's application with every other path.
 */
export class Governor {
  private readonly asks: InputAsks;
  private readonly rounds = new ServerRounds();
  /** Requests answered with our `input_required` question, by their entry. */
  private readonly askOf = new WeakMap<PendingRequest, Ask>();
  /** Asks about a changed definition (not the call): their answer leads to the call's own decision. */
  private readonly changeOf = new WeakMap<Ask, DefinitionChange>();
  /** Modern requests the gates let through, for the server's own `input_required` rounds. */
  private readonly decidedOf = new WeakMap<PendingRequest, { request: JsonRpcRequest; verdict: Verdict }>();

  /** The last stages in, for a request once decided. */
  private readonly decidedStages: Pipeline<DecidedRequest>;

  constructor(private readonly options: GovernorOptions) {
    this.asks = new InputAsks(options.serverId);
    this.decidedStages = compose<DecidedRequest>([auditStage(options.audit), traceStage(options.trace), forwardStage(options.forward, options.toAgent)], "request", options.stageProbe);
  }

  handle(request: JsonRpcRequest, entry: PendingRequest, bytes: Uint8Array): void {
    if (this.options.trace) entry.trace = this.options.trace.begin(request, entry.call?.argsHash);
    const invalid = invalidGovernedParams(request);
    if (invalid) {
      this.refuse(entry, request, RPC.invalidParams, `Invalid params: ${invalid}`, invalid);
      return;
    }
    const era = requestEra(request);
    if (era.era === "modern") {
      const recognized = this.asks.recognize(request);
      if (recognized.kind === "forged") {
        this.refuse(entry, request, RPC.invalidParams, `ThoughtGate refused the retry: ${recognized.reason}`, recognized.reason);
        return;
      }
      if (recognized.kind === "answer") {
        this.answered(recognized.ask, recognized.outcome, entry, recognized.request, recognized.bytes);
        return;
      }
      if (recognized.kind === "unanswered") {
        // The question again, with the same state: the ask is still open for the answer.
        const line = JSON.stringify({ jsonrpc: "2.0", id: entry.id, result: recognized.ask.result });
        this.options.toAgent.sendText(line);
        this.options.audit.endCall(entry, "input_required", Buffer.byteLength(line));
        return;
      }
      if (recognized.kind === "stale") {
        // Our state for another call, or one already used: a new call, decided afresh.
        request = recognized.request;
        bytes = recognized.bytes;
      }
      if (isRoundRetry(request)) {
        const continued = this.rounds.continues(this.asks.digestOf(request), request);
        if (continued) {
          const verdict: Verdict = { ...continued, reason: `continues the call the server asked input for: ${continued.reason}` };
          this.apply(entry, bytes, verdict, request, era);
          return;
        }
      }
    }
    const control = new LazyAbort();
    if (request.method === "tools/call" && this.options.catalog.needsRead(targetName(request))) {
      // Policies may depend on the tool's annotations (the embedded default does): a call for a
      // tool the shim has not seen listed waits until the shim has read the whole list itself,
      // with the `_meta` a modern server requires. The call is held meanwhile (a cancel for it is
      // honoured), and then decided as usual.
      const meta = ownRequestMeta(era);
      this.options.held.hold(entry, control);
      void this.options.catalog
        .readAll((method, params) => this.options.own.askServer(method, meta ? { ...(params as object), _meta: meta } : params))
        .then(async (tools) => {
          // What the shim read is checked against the pins like any list (a new session's first call included).
          if (tools) this.options.definitions.check("tool", tools, await this.options.pinPolicy());
          if (!this.options.held.release(entry)) return; // cancelled or the server went away
          this.gateDefinition(request, entry, bytes, control, era);
        });
      return;
    }
    this.gateDefinition(request, entry, bytes, control, era);
  }

  /**
   * The definitions gate, before the others: a call whose tool (prompt, resource template) changed
   * since it was pinned, or was flagged, waits for a person to accept the definition (production,
   * `pin: strict`); then the call is decided as usual. The pins are read again first: someone may
   * have accepted it elsewhere (`thoughtgate pins accept`). Costs a map lookup while nothing is blocked.
   */
  private gateDefinition(request: JsonRpcRequest, entry: PendingRequest, bytes: Uint8Array, control: LazyAbort, era: RequestEra): void {
    const { definitions } = this.options;
    if (!definitions.hasBlocked || !definitions.pending(request.method, targetName(request))) {
      this.decide(request, entry, bytes, control, era);
      return;
    }
    this.options.held.hold(entry, control);
    void Promise.resolve(this.options.pinPolicy()).then((policy) => {
      if (!this.options.held.release(entry)) return;
      const accepted = definitions.refresh(policy);
      for (const kind of accepted) this.options.definitionsAccepted(kind);
      const change = definitions.pending(request.method, targetName(request));
      if (change && policy.mode === "strict" && !policy.enforce) {
        this.options.log.warn(`WOULD_BLOCK ${request.method} ${targetName(request)}: its definition ${change.status === "changed" ? `changed since it was pinned (${change.changed.join(", ")})` : "was flagged"}; forwarded (development)`);
      }
      const ask = change && policy.mode === "strict" && policy.enforce ? change : undefined;
      this.decide(request, entry, bytes, control, era, ask);
    });
  }

  /**
   * MCP 2026-07-28 `subscriptions/listen`: its `resourceSubscriptions` replace `resources/subscribe`,
   * so each URI is decided as a `resources/subscribe` would be; one refusal refuses the whole listen,
   * and so do subscriptions that cannot be read (`given` null, list-changes.ts).
   * (No `input_required` on it: the protocol allows that answer only on calls, reads and prompts.)
   */
  handleListen(request: JsonRpcRequest, entry: PendingRequest, bytes: Uint8Array, given: unknown[] | null): void {
    if (given === null || !given.every((uri): uri is string => typeof uri === "string")) {
      const reason = "subscriptions/listen needs params.notifications as an object and its resourceSubscriptions as a list of URI strings";
      this.refuse(entry, request, RPC.invalidParams, `Invalid params: ${reason}`, reason);
      return;
    }
    const uris = given;
    const control = new LazyAbort();
    const era = requestEra(request);
    const verdicts = uris.map((uri) => {
      const each: JsonRpcRequest = { kind: "request", id: request.id, method: "resources/subscribe", params: { uri }, body: { jsonrpc: "2.0", id: request.id, method: "resources/subscribe", params: { uri } } };
      try {
        return this.options.decider.decide(each, this.contextFor(each, control, entry, LEGACY, false));
      } catch (error) {
        return decisionFailed(error);
      }
    });
    this.options.held.hold(entry, control);
    void Promise.all(verdicts.map((v) => Promise.resolve(v).catch(decisionFailed))).then((all) => {
      if (!this.options.held.release(entry)) return;
      const refused = all.find((v) => v.action === "deny");
      const verdict: Verdict = refused ?? { action: "forward", gate: all[0]?.gate ?? null, ruleId: all[0]?.ruleId ?? null, reason: `every resource subscription allowed (${uris.length})` };
      if (this.options.toServer()) this.apply(entry, bytes, verdict, request, era);
      else this.options.answerUnavailable(entry);
    });
  }

  /** A response to a governed request the server ran: a tool's own `input_required` round is noted. */
  serverAnswered(entry: PendingRequest, message: JsonRpcResponse): void {
    const decided = this.decidedOf.get(entry);
    if (!decided || message.isError) return;
    const result = message.body.result as Record<string, unknown> | undefined;
    if (result?.resultType === "input_required") this.rounds.note(this.asks.digestOf(decided.request), decided.verdict, result);
  }

  private decide(request: JsonRpcRequest, entry: PendingRequest, bytes: Uint8Array, control: LazyAbort, era: RequestEra, change?: DefinitionChange): void {
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = this.options.decider.decide(request, this.contextFor(request, control, entry, era, true, change));
    } catch (error) {
      verdict = decisionFailed(error);
    }
    if (!(verdict instanceof Promise)) {
      this.proceed(entry, bytes, verdict, request, era, control, change);
      return;
    }
    // Not decided yet (a service round trip, or a person): this request alone waits
    // (docs/architecture.md, decision 6). The audit's `pending` decision comes from the decider.
    // A modern agent asked by `input_required` has had its answer already: the decision goes to
    // the retry that carries the person's answer.
    if (!this.askOf.has(entry)) this.options.held.hold(entry, control);
    verdict
      .catch(decisionFailed)
      .then((settled) => {
        const ask = this.askOf.get(entry);
        if (ask) {
          this.options.held.release(entry);
          this.settleAsk(ask, settled);
          return;
        }
        if (!this.options.held.release(entry)) return; // cancelled or the server went away
        if (this.options.toServer()) this.proceed(entry, bytes, settled, request, era, control, change);
        else this.options.answerUnavailable(entry);
      });
  }

  /**
   * A decision's outcome. For a definition: accepted → it becomes the pin, the agent is told its
   * list changed, and the call itself is decided now; refused → the call is refused with the
   * definitions gate's error (whichever channel said no). For a call: applied.
   */
  private proceed(entry: PendingRequest, bytes: Uint8Array, verdict: Verdict, request: JsonRpcRequest, era: RequestEra, control: LazyAbort, change: DefinitionChange | undefined): void {
    if (!change) {
      this.apply(entry, bytes, verdict, request, era);
      return;
    }
    if (verdict.action === "forward") {
      this.options.definitions.accept(change, verdict.approvedBy ?? "unknown");
      this.options.definitionsAccepted(change.kind);
      this.decide(request, entry, bytes, control, era);
      return;
    }
    const taskId = (verdict.error.data as { task_id?: unknown } | undefined)?.task_id;
    const refusal = verdict.gate === "definitions" ? verdict : definitionRefusal(change, callRef(request, this.options.serverId), verdict.reason, typeof taskId === "string" ? taskId : undefined);
    this.apply(entry, bytes, refusal, request, era);
  }

  private contextFor(request: JsonRpcRequest, control: LazyAbort, entry: PendingRequest, era: RequestEra, canAsk = true, change?: DefinitionChange): DecisionContext {
    const { audit, catalog, own, serverId, server } = this.options;
    let elicit: DecisionContext["elicit"] = null;
    if (!canAsk) elicit = null;
    else if (era.era === "legacy") elicit = this.options.legacyCanElicit() ? own.elicit : null;
    // Modern: this request's own capabilities decide, never an earlier request's (MCP 2026-07-28).
    else if (declaresFormElicitation(era.capabilities)) elicit = this.askThroughRetry(entry, request, control, change);
    return {
      ...(change ? { definitionChange: change } : {}),
      awaitingApproval: (reason) => {
        audit.decision(entry, { action: "pending", reason }, request);
        entry.trace?.waiting();
      },
      span: entry.trace?.deciding,
      get signal() {
        return control.signal;
      },
      serverId,
      server,
      annotations: request.method === "tools/call" ? catalog.annotationsOf(targetName(request)) : undefined,
      annotationSource: request.method === "tools/call" ? catalog.annotationSourceOf(targetName(request)) : undefined,
      elicit,
    };
  }

  /** Modern era: answer `entry` with our `input_required` question; the promise settles when the agent retries. */
  private askThroughRetry(entry: PendingRequest, request: JsonRpcRequest, control: LazyAbort, change?: DefinitionChange) {
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
        this.options.held.release(entry);
        const line = JSON.stringify({ jsonrpc: "2.0", id: entry.id, result });
        this.options.toAgent.sendText(line);
        this.options.audit.endCall(entry, "input_required", Buffer.byteLength(line));
      });
  }

  /** The agent retried with the answer to our question: the retry waits for the decision, then runs (or not). */
  private answered(ask: Ask, outcome: ElicitOutcome, retry: PendingRequest, request: JsonRpcRequest, bytes: Uint8Array): void {
    const control = new LazyAbort(ask.control);
    ask.retry = { entry: retry, request, bytes, control };
    if (ask.verdict) {
      // Decided before the retry came (on the page, by the CLI, or it timed out). A person's no in
      // the retry still beats on_timeout's approval: that default was for no answer, and nothing has
      // run yet (in the older era the call ran at the timeout, before any answer could come).
      const overruled = outcome.kind === "declined" && ask.verdict.action === "forward" && ask.verdict.approvedBy === "timeout";
      this.settleAsk(ask, overruled ? this.declinedAfterTimeout(ask.verdict, request) : ask.verdict);
      return;
    }
    this.options.held.hold(retry, control);
    this.options.audit.decision(retry, { action: "pending", reason: `the agent answered the approval question (${describeOutcome(outcome)})` }, request);
    ask.answer(outcome);
  }

  /** on_timeout had approved the call, and then the person declined it in the retry: refused as their no. */
  private declinedAfterTimeout(approved: Verdict, request: JsonRpcRequest): Verdict {
    const reason = `${approved.reason}; then rejected by the user in the agent's retry, before anything ran`;
    return deniedVerdict({ gate: "approval", code: GOVERNANCE_ERROR.approvalRejected, ruleId: approved.ruleId, policyId: approved.policyId ?? null, reason }, callRef(request, this.options.serverId));
  }

  private settleAsk(ask: Ask, verdict: Verdict): void {
    const retry = ask.retry;
    if (!retry) {
      // No retry yet: keep the decision for it; the audit has it now.
      ask.verdict = verdict;
      // A definition's acceptance is not the call's decision: that one comes with the retry.
      if (!this.changeOf.has(ask)) this.options.audit.decision(ask.first, verdict, ask.request);
      return;
    }
    this.asks.close(ask);
    if (retry.control.aborted) return; // the agent cancelled the retry
    this.options.held.release(retry.entry);
    if (this.options.toServer()) this.proceed(retry.entry, retry.bytes, verdict, retry.request, requestEra(retry.request), retry.control, this.changeOf.get(ask));
    else this.options.answerUnavailable(retry.entry);
  }

  private apply(entry: PendingRequest, bytes: Uint8Array, verdict: Verdict, request: JsonRpcRequest, era: RequestEra): void {
    if (verdict.action === "forward" && era.era === "modern") this.decidedOf.set(entry, { request, verdict });
    // audit → trace → forward, in the order src/pipeline/stages.ts declares; synchronous.
    void this.decidedStages({ entry, request, verdict, bytes });
  }

  /** A governed request that cannot be decided as sent: an error, and it reaches no one. */
  private refuse(entry: PendingRequest, request: JsonRpcRequest, code: number, message: string, reason: string): void {
    const verdict: Verdict = {
      action: "deny",
      gate: "governance",
      ruleId: null,
      reason,
      error: { code, message, data: { gate: "governance", server_id: this.options.serverId, reason } },
    };
    this.apply(entry, new Uint8Array(0), verdict, request, LEGACY);
  }
}

/** `approved once`, `declined`, … for the audit's pending line. */
function describeOutcome(outcome: ElicitOutcome): string {
  if (outcome.kind !== "approved") return outcome.kind;
  return outcome.scope === "always" ? `approved always (${outcome.alwaysScope})` : `approved ${outcome.scope}`;
}

