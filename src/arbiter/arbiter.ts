import { messageOf } from "../core/errors.ts";
import { taggedLog, type Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { EngineHolder } from "../governance/engine/engine-holder.ts";
import type { DecisionContext } from "../governance/verdict/decider.ts";
import { auditStage, recordPending } from "../pipeline/audit-stage.ts";
import { callOf, toolCallRequest, type Call, type CallSpans } from "../pipeline/call.ts";
import { CallRecord } from "../pipeline/call-record.ts";
import { decideStage } from "../pipeline/decide-stage.ts";
import { compose, type Pipeline, type Stage } from "../pipeline/stages.ts";
import { traceStage } from "../pipeline/trace-stage.ts";
import { rawForLog, type ArbiterSummary, type CallStatus, type EventStream } from "../telemetry/events.ts";
import { ArbiterDecider, UNWAITED_DENY, UNWAITED_FORWARD, Withdrawn, type ArbiterDeciding } from "./arbiter-decider.ts";
import { CallTable, type TrackedCall } from "./call-table.ts";
import type { ControlChannel } from "./control-channel.ts";
import { abortMessage, decisionMessage, type AbortCode, type ArbiterDecision, type EventId, type ToolEvent, type ToolRequest, type ToolResult } from "./protocol.ts";
import type { Approver } from "./terminal-approver.ts";

export type ArbiterOptions = {
  engines: Pick<EngineHolder, "engine" | "label">;
  profile: Profile;
  /** The rules' `source` for requests that do not name a `server`. */
  serverId: string;
  runId: string;
  /** What an approval gets when there is no terminal to ask on. */
  defaultAction: ArbiterDecision;
  decisionTimeoutMs: number;
  control: ControlChannel;
  approver: Approver;
  events: EventStream;
  /** The session must end (a user abort, a policy violation); called once, after `policy.abort` was sent. */
  onAbort: (code: AbortCode, reason: string) => void;
  /** What decides; absent: an `ArbiterDecider` on `engines` with `approver` (a test gives a fake). */
  decider?: ArbiterDeciding;
  /** Tracing on (docs/governance.md, "Traces"): a call's spans, begun as it arrives. */
  spans?: ((call: Call) => CallSpans) | undefined;
};

/** The signal of a call nothing withdraws (an unwaited call is decided at once). */
const NEVER = new AbortController().signal;

/** Malformed lines logged one by one; past this many they are only counted. */
const MALFORMED_WARNINGS = 10;

/**
 * Every event the child announces goes through here. A `tool.request` becomes a `Call` and runs
 * the stages every front end shares (docs/architecture.md, "Every tool call, one pipeline"): decided
 * by the same 4-gate engine as a shim's `tools/call` (arbiter-decider.ts; an approval is asked on
 * the terminal), recorded by the audit stage, and, when the child waits (`requires_policy: true`),
 * answered on the control channel by this front end's forward. One state machine per id
 * (docs/codecli-protocol.md §6) makes every decision happen once; it is kept in one class so each
 * transition sits beside the events and writes it causes.
 */
export class Arbiter {
  readonly summary: ArbiterSummary = emptySummary();
  private readonly calls = new CallTable();
  /** Once aborting: resolves when `policy.abort` was written (after every call still waiting was denied). */
  private aborting: Promise<void> | null = null;
  /** The child is going away: nothing more is decided. */
  private closed = false;
  /** The stages of calls still being decided, by call: an abort waits for their denies to go out first. */
  private readonly deciding = new Map<TrackedCall, Promise<void>>();

  private readonly log: Logger;
  private readonly record: CallRecord;
  private readonly decider: ArbiterDeciding;
  /** A waited request: decide → audit → trace → the decision to the child (docs/architecture.md, "Every tool call, one pipeline"). */
  private readonly waited: Pipeline<Call>;
  /** An unwaited one: decide (no one asked) → audit → trace → a policy violation ends the session. */
  private readonly unwaited: Pipeline<Call>;
  /** A call's end on the way back (its result, a deny, a withdrawal): audit → trace. */
  private readonly ended: Pipeline<Call>;

  constructor(private readonly options: ArbiterOptions) {
    this.log = taggedLog(options.serverId);
    this.decider = options.decider ?? new ArbiterDecider({
      engines: options.engines,
      profile: options.profile,
      serverId: options.serverId,
      approver: options.approver,
      defaultAction: options.defaultAction,
      decisionTimeoutMs: options.decisionTimeoutMs,
      actionOf: (request) => this.calls.get(request.id as EventId)?.flow.startFields?.action ?? null,
    });
    this.record = new CallRecord(options.events, () => this.decider.auditArguments?.() ?? true);
    const audit = auditStage(this.record);
    const contextOf = (call: Call): DecisionContext => ({
      signal: this.calls.get(call.id as EventId)?.cancel?.signal ?? NEVER,
      serverId: call.serverId,
      annotations: undefined,
      elicit: null,
      awaitingApproval: (reason) => {
        recordPending(this.record, call, reason);
        call.spans?.waiting();
      },
      span: call.spans?.deciding,
    });
    const answer: Stage = { name: "forward", request: (call, next) => (this.answer(call), next(call)) };
    const violation: Stage = { name: "forward", request: (call, next) => (this.unwaitedRan(call), next(call)) };
    const trace = traceStage();
    this.waited = compose<Call>([decideStage(this.decider, contextOf), audit, trace, answer], "request");
    this.unwaited = compose<Call>([decideStage(this.decider.unwaited, contextOf), audit, trace, violation], "request");
    this.ended = compose<Call>([audit, trace], "response");
  }

  handle(event: ToolEvent): void {
    switch (event.kind) {
      case "request":
        return this.request(event.event);
      case "result":
        return this.result(event.event);
      case "other":
        this.log.debug(`${event.type}${event.id === undefined ? "" : ` (id ${JSON.stringify(event.id)})`}`);
    }
  }

  /** A line that claimed to be an event and is not one: counted and reported, never fatal (docs/codecli-protocol.md §8.2). */
  malformed(stream: "stdout" | "stderr", error: string, detail: string, line: Uint8Array): void {
    this.summary.malformed_events += 1;
    const count = this.summary.malformed_events;
    if (count <= MALFORMED_WARNINGS) {
      this.log.warn(`malformed event on ${stream} (${error}: ${detail}); passed through as output`);
      if (count === MALFORMED_WARNINGS) this.log.warn(`further malformed events are only counted (see run_end)`);
    }
    this.options.events.emit("malformed_event", { stream, error, detail, bytes: line.length, ...rawForLog(line) });
  }

  /**
   * End the session (docs/codecli-protocol.md §3.4): every call still waiting is denied first (a
   * child that does not know `policy.abort` still stops waiting): their decisions are withdrawn, and
   * each deny goes out through its stages; then `policy.abort` is written. Once per session.
   */
  abort(code: AbortCode, reason: string): void {
    if (this.aborting) return;
    this.summary.aborts += 1;
    const denying = this.calls.pending().map((call) => {
      call.cancel?.abort(new Withdrawn(`session aborted: ${reason}`));
      return this.deciding.get(call);
    });
    // Nothing is allowed after an abort, whatever the child still prints before it stops.
    this.closed = true;
    const id = `abort-${this.summary.aborts}`;
    this.aborting = Promise.allSettled(denying).then(() => {
      const delivered = this.options.control.send(abortMessage(this.options.runId, id, reason, code));
      this.log.warn(`aborting the session (${code}): ${reason}`);
      this.options.events.emit("policy_abort", { id, code, reason, delivered });
      this.options.onAbort(code, reason);
    });
  }

  /** Resolves once an abort has been written (at once when there was none): before the child's stdin closes. */
  aborted(): Promise<void> {
    return this.aborting ?? Promise.resolve();
  }

  /** The child is going away: what still waits is abandoned (its questions withdrawn), and so is every later request. */
  close(): void {
    this.closed = true;
    for (const call of this.calls.pending()) this.abandon(call);
  }

  /** The session is over: what ran without reporting a result is recorded as such; the summary is final. */
  finish(): void {
    this.close();
    for (const call of this.calls.running()) this.endCall(call, "no_response");
    this.summary.control_lines = this.options.control.sent;
    this.summary.events_dropped = this.options.events.dropped;
  }

  private request(event: ToolRequest): void {
    this.summary.requests_total += 1;
    const flow = callOf("arbiter", event.server ?? this.options.serverId, toolCallRequest(event.id, event.tool, event.args));
    flow.startFields = { ...(event.action === undefined ? {} : { action: event.action }), requires_policy: event.requires_policy };
    const call = this.calls.open({
      id: event.id,
      tool: event.tool,
      requiresPolicy: event.requires_policy,
      runId: event.run_id ?? this.options.runId,
      state: event.requires_policy ? "pending" : "unwaited",
      flow,
    });
    if (!call) return this.duplicate(event);
    if (this.options.spans) flow.spans = this.options.spans(flow);
    if (this.closed) {
      this.log.debug(`${call.tool} (id ${JSON.stringify(call.id)}) arrived as the child was stopping: not decided`);
      if (call.state === "pending") this.abandon(call);
      return;
    }
    if (!event.requires_policy) {
      this.summary.requests_unwaited += 1;
      return void this.unwaited(flow);
    }
    const deciding = this.waited(flow);
    // Decided at once (a rule's forward or deny): nothing to wait for.
    if (deciding instanceof Promise) {
      const settled = deciding.then(
        () => void this.deciding.delete(call),
        (error: unknown) => {
          this.deciding.delete(call);
          this.log.error(`${call.tool} (id ${JSON.stringify(call.id)}): ${messageOf(error)}`);
        },
      );
      this.deciding.set(call, settled);
    }
  }

  /**
   * The forward stage of a waited call: its decision, written once (docs/codecli-protocol.md §6.2:
   * the first one wins; a call abandoned meanwhile gets none).
   */
  private answer(flow: Call): void {
    const call = this.calls.get(flow.id as EventId);
    const verdict = flow.verdict;
    if (!call || call.flow !== flow || !verdict) return;
    const allow = verdict.action === "forward";
    const timedOut = !allow && verdict.decidedBy?.channel === "timeout";
    if (!this.calls.settle(call, allow ? "allowed" : timedOut ? "denied_timeout" : "denied")) return;
    this.recorded(call);
    const delivered = this.options.control.send(decisionMessage(call.runId, call.id, allow ? "allow" : "deny", verdict.reason, verdict.ruleId));
    if (!delivered) call.state = "failed_transport";
    if (allow) {
      this.summary.allowed += 1;
      if (verdict.approvedBy === "terminal") this.summary.approved += 1;
      if (verdict.would) this.log.warn(`${verdict.would} ${call.tool}: ${verdict.reason}`);
      else this.log.debug(`allowed ${call.tool}: ${verdict.reason}`);
    } else {
      this.summary.denied += 1;
      if (timedOut) this.summary.timed_out += 1;
      this.log.info(`denied ${call.tool}: ${verdict.reason}`);
      this.endCall(call, "denied");
    }
    if (this.decider.endsSession(verdict)) this.abort("user_cancel", `the user aborted the session at the approval of ${call.tool}`);
  }

  /**
   * `requires_policy: false`: the child runs the tool without waiting, so the policy can only be
   * audited (docs/codecli-protocol.md §8.1). If production would not have let it run unasked, the one way left to stop
   * the child is `policy.abort`.
   */
  private unwaitedRan(flow: Call): void {
    const verdict = flow.verdict;
    const call = this.calls.get(flow.id as EventId);
    if (call) this.recorded(call);
    const tool = call?.tool ?? String(flow.id);
    if (verdict?.action === "forward") {
      if (verdict.would) this.log.warn(`${verdict.would} ${tool} (not waited for): ${verdict.reason.slice(UNWAITED_FORWARD.length)}`);
      return;
    }
    const why = verdict?.reason.startsWith(UNWAITED_DENY) ? verdict.reason.slice(UNWAITED_DENY.length) : (verdict?.reason ?? "no decision was reached");
    this.abort("policy_violation", `${tool} ran without waiting for a decision, but the policy does not allow it unasked (${why})`);
  }

  private abandon(call: TrackedCall): void {
    if (!this.calls.settle(call, "abandoned")) return;
    this.endCall(call, "cancelled");
    this.recorded(call);
  }

  /**
   * Recorded (its start holds the arguments' hash): the call keeps no arguments, so the settled
   * calls the table remembers for duplicates hold none of the child's payloads.
   */
  private recorded(call: TrackedCall): void {
    call.flow = { ...call.flow, request: toolCallRequest(call.id, call.tool, {}) };
  }

  private result(event: ToolResult): void {
    const found = this.calls.complete(event.id);
    if (!found) {
      this.summary.unknown_ids += 1;
      return this.warn("unknown_id", event.id, "tool.result for an id no tool.request announced");
    }
    const { call, was } = found;
    if (was === "allowed" || was === "unwaited") this.endCall(call, event.ok === false ? "error" : "ok");
    else if (was === "pending") this.warn("result_before_decision", event.id, `tool.result for ${call.tool} before it was decided`);
  }

  private duplicate(event: ToolRequest): void {
    this.summary.duplicate_requests += 1;
    const state = this.calls.get(event.id)?.state ?? "unknown";
    this.warn("duplicate_request", event.id, `tool.request for an id already seen (${state}); ignored`);
  }

  private warn(warning: "duplicate_request" | "unknown_id" | "result_before_decision", id: string | number, detail: string): void {
    this.log.warn(`id ${JSON.stringify(id)}: ${detail}`);
    this.options.events.emit("protocol_warning", { warning, request_id: id, detail });
  }

  /** The call's `tool_call_end`, through the audit stage on the way back (its start is written there if it had none). */
  private endCall(call: TrackedCall, status: CallStatus): void {
    call.flow.status = status;
    call.flow.bytesOut ??= 0;
    void this.ended(call.flow);
  }
}

export function emptySummary(): ArbiterSummary {
  return {
    requests_total: 0,
    requests_unwaited: 0,
    allowed: 0,
    denied: 0,
    approved: 0,
    timed_out: 0,
    malformed_events: 0,
    duplicate_requests: 0,
    unknown_ids: 0,
    aborts: 0,
    control_lines: 0,
    events_dropped: 0,
  };
}
