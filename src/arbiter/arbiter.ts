import { taggedLog, type Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { EngineHolder } from "../governance/engine/engine-holder.ts";
import { approvalPrompt } from "../governance/verdict/approval-prompt.ts";
import { decisionInput } from "../governance/verdict/decider.ts";
import { decideSafely, type EvaluateInput, type Outcome } from "../governance/engine/engine.ts";
import { rawForLog, type ArbiterSummary, type EventStream } from "../telemetry/events.ts";
import { CallRecord, decisionFields, type AuditIdentity } from "../pipeline/call-record.ts";
import { CallTable, type Call, type CallState } from "./call-table.ts";
import type { ControlChannel } from "./control-channel.ts";
import { abortMessage, decisionMessage, type AbortCode, type ArbiterDecision, type ToolEvent, type ToolRequest, type ToolResult } from "./protocol.ts";
import type { ApprovalAnswer, Approver } from "./terminal-approver.ts";

export type ArbiterOptions = {
  engines: Pick<EngineHolder, "engine">;
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
};

/** Why a call was decided as it was: the gate's fields, for the log, the decision and the audit. */
type Verdict = {
  gate: string | null;
  ruleId: string | null;
  policyId: string | null;
  reason: string;
  would?: "WOULD_BLOCK" | "WOULD_REQUIRE_APPROVAL";
  autoApproved?: boolean;
  approvedBy?: string;
};

type Approval = Extract<Outcome, { kind: "approve" }>;

/** Malformed lines logged one by one; past this many they are only counted. */
const MALFORMED_WARNINGS = 10;

/**
 * Every event the child announces goes through here. A `tool.request` that waits
 * (`requires_policy: true`) is decided by the same 4-gate engine as a shim's `tools/call`
 * (docs/architecture.md, decision 4) and answered on the control channel at once; an approval is
 * asked on the terminal. One state machine per id (docs/codecli-protocol.md §6) makes every decision
 * happen once; it is kept in one class so each transition sits beside the
 * events and writes it causes.
 */
export class Arbiter {
  readonly summary: ArbiterSummary = emptySummary();
  private readonly calls = new CallTable();
  private aborted = false;
  /** The child is going away: nothing more is decided. */
  private closed = false;

  private readonly log: Logger;
  private readonly record: CallRecord;

  constructor(private readonly options: ArbiterOptions) {
    this.log = taggedLog(options.serverId);
    this.record = new CallRecord(options.events, () => options.engines.engine.auditArguments());
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
   * End the session (docs/codecli-protocol.md §3.4): every call still waiting is denied first (a child that does not
   * know `policy.abort` still stops waiting), then `policy.abort` is written. Once per session.
   */
  abort(code: AbortCode, reason: string): void {
    if (this.aborted) return;
    this.aborted = true;
    this.summary.aborts += 1;
    for (const call of this.calls.pending()) {
      this.decide(call, "deny", { gate: "governance", ruleId: null, policyId: null, reason: `session aborted: ${reason}` });
    }
    // Nothing is allowed after an abort, whatever the child still prints before it stops.
    this.closed = true;
    const id = `abort-${this.summary.aborts}`;
    const delivered = this.options.control.send(abortMessage(this.options.runId, id, reason, code));
    this.log.warn(`aborting the session (${code}): ${reason}`);
    this.options.events.emit("policy_abort", { id, code, reason, delivered });
    this.options.onAbort(code, reason);
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
    const call = this.calls.open({
      id: event.id,
      tool: event.tool,
      action: event.action ?? null,
      requiresPolicy: event.requires_policy,
      args: event.args,
      audit: null,
      runId: event.run_id ?? this.options.runId,
      state: event.requires_policy ? "pending" : "unwaited",
      requestedAt: performance.now(),
    });
    if (!call) return this.duplicate(event);
    if (this.closed) {
      this.log.debug(`${call.tool} (id ${JSON.stringify(call.id)}) arrived as the child was stopping: not decided`);
      if (call.state === "pending") this.abandon(call);
      return;
    }
    // The arbiter knows no server's program: a rule "always allow" wrote (it names one) never matches here.
    const input = decisionInput({ serverId: event.server ?? this.options.serverId, method: "tools/call", name: event.tool, arguments: event.args });
    const outcome = this.evaluate(input);
    if (!event.requires_policy) return this.audit(call, outcome);
    switch (outcome.kind) {
      case "forward":
        return this.decide(call, "allow", outcome);
      case "deny":
        return this.decide(call, "deny", outcome.block);
      case "approve":
        return void this.askHuman(call, input, event, outcome);
    }
  }

  /** The engine, with the profile applied; an engine failure is a deny (docs/architecture.md, decision 3). */
  private evaluate(input: EvaluateInput): Outcome {
    return decideSafely(this.options.engines.engine, input, this.options.profile);
  }

  /**
   * `requires_policy: false`: the child runs the tool without waiting, so the policy can only be
   * audited (docs/codecli-protocol.md §8.1). If production would not have let it run unasked, the one way left to stop
   * the child is `policy.abort`.
   */
  private audit(call: Call, outcome: Outcome): void {
    this.summary.requests_unwaited += 1;
    if (outcome.kind === "forward") {
      if (outcome.would) this.log.warn(`${outcome.would} ${call.tool} (not waited for): ${outcome.reason}`);
      this.emitDecision(call, "forward", { ...outcome, reason: `not waited for (requires_policy: false); ${outcome.reason}` });
      return;
    }
    const verdict = outcome.kind === "deny" ? outcome.block : { gate: "approval", ruleId: outcome.ruleId, policyId: outcome.policyId, reason: outcome.reason };
    this.emitDecision(call, "deny", { ...verdict, reason: `ran without waiting for a decision (requires_policy: false), but ${verdict.reason}` });
    this.abort("policy_violation", `${call.tool} ran without waiting for a decision, but the policy does not allow it unasked (${verdict.reason})`);
  }

  private async askHuman(call: Call, input: EvaluateInput, event: ToolRequest, outcome: Approval): Promise<void> {
    const { ruleId, policyId, workflow } = outcome;
    const signal = call.cancel?.signal;
    if (!signal) return;
    this.emitDecision(call, "pending", { gate: "approval", ruleId, policyId, reason: `${outcome.reason}: asking on the terminal` });
    const timer = setTimeout(
      () => this.decide(call, "deny", { gate: "approval", ruleId, policyId, reason: `policy timeout: no decision in ${this.options.decisionTimeoutMs} ms` }, "denied_timeout"),
      this.options.decisionTimeoutMs,
    );
    signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    const text = [
      `thoughtgate: ${this.options.serverId} wants to run ${call.tool}${event.action ? ` (action: ${event.action})` : ""}`,
      `  ${approvalPrompt({ ...input, ruleId }, outcome.reason).replaceAll("\n", "\n  ")}`,
    ].join("\n");
    const answer = await this.options.approver.ask({ text, timeoutMs: workflow.timeout, signal });
    this.answered(call, outcome, answer);
  }

  private answered(call: Call, outcome: Approval, answer: ApprovalAnswer): void {
    const { ruleId, policyId, reason, workflow } = outcome;
    const verdict = (why: string, approvedBy?: string): Verdict => ({ gate: "approval", ruleId, policyId, reason: `${reason}: ${why}`, ...(approvedBy ? { approvedBy } : {}) });
    switch (answer) {
      case "approve":
        return this.decide(call, "allow", verdict("approved on the terminal", "terminal"));
      case "reject":
        return this.decide(call, "deny", verdict("denied on the terminal"));
      case "abort":
        this.decide(call, "deny", verdict("the user aborted the session"));
        return this.abort("user_cancel", `the user aborted the session at the approval of ${call.tool}`);
      case "timeout":
        if (workflow.on_timeout === "approve") return this.decide(call, "allow", verdict(`no answer in ${workflow.timeout} ms, approved by on_timeout`, "timeout"));
        return this.decide(call, "deny", verdict(`no answer in ${workflow.timeout} ms`), "denied_timeout");
      case "no_terminal":
        return this.decide(
          call,
          this.options.defaultAction,
          verdict(`no terminal to ask on; --default-action ${this.options.defaultAction}`, this.options.defaultAction === "allow" ? "default_action" : undefined),
        );
      case "cancelled":
        // Decided meanwhile (decision timeout, abort) or the child went away: nothing left to say.
        return;
    }
  }

  /** Write the decision once (docs/codecli-protocol.md §6.2: the first one wins) and record it. */
  private decide(call: Call, decision: ArbiterDecision, verdict: Verdict, state: CallState = decision === "allow" ? "allowed" : "denied"): void {
    if (!this.calls.settle(call, state)) return;
    const delivered = this.options.control.send(decisionMessage(call.runId, call.id, decision, verdict.reason, verdict.ruleId));
    if (!delivered) call.state = "failed_transport";
    if (decision === "allow") {
      this.summary.allowed += 1;
      if (verdict.approvedBy === "terminal") this.summary.approved += 1;
      if (verdict.would) this.log.warn(`${verdict.would} ${call.tool}: ${verdict.reason}`);
      else this.log.debug(`allowed ${call.tool}: ${verdict.reason}`);
    } else {
      this.summary.denied += 1;
      if (state === "denied_timeout") this.summary.timed_out += 1;
      this.log.info(`denied ${call.tool}: ${verdict.reason}`);
    }
    this.emitDecision(call, decision === "allow" ? "forward" : "deny", verdict);
    if (decision === "deny") this.endCall(call, "denied");
  }

  private abandon(call: Call): void {
    if (this.calls.settle(call, "abandoned")) this.endCall(call, "cancelled");
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

  /**
   * The call's `tool_call_start`, written once, when its first decision event is: after the decision
   * is on its way to the child, so hashing and serialising for the audit never delay it. Written
   * by the record every front end shares (src/pipeline/call-record.ts).
   */
  private audited(call: Call): AuditIdentity {
    if (call.audit) return call.audit;
    call.audit = this.record.start(call.id, call.tool, call.args, { ...(call.action === null ? {} : { action: call.action }), requires_policy: call.requiresPolicy });
    call.args = null;
    return call.audit;
  }

  private emitDecision(call: Call, decision: "forward" | "deny" | "pending", verdict: Verdict): void {
    if (!this.record.enabled) return;
    this.record.decision(this.audited(call), call.tool, decisionFields(decision, verdict, verdict.reason));
  }

  private endCall(call: Call, status: "ok" | "error" | "denied" | "cancelled" | "no_response"): void {
    if (!this.record.enabled) return;
    this.record.end(this.audited(call), call.tool, status, call.requestedAt, 0);
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
