import type { JsonRpcId, JsonRpcRequest, Message } from "../core/jsonrpc.ts";
import type { Logger } from "../core/log.ts";
import { showInvisible } from "../core/visible-text.ts";
import { targetName, type Verdict } from "../governance/verdict/decider.ts";
import type { FramingError } from "../stdio/validate-line.ts";
import { rawForLog, type CallStatus, type EventStream, type Summary } from "../telemetry/events.ts";
import { redactText } from "../telemetry/redact.ts";
import { recordedArguments } from "../telemetry/recorded-arguments.ts";
import { CallRecord, decisionFields } from "../pipeline/call-record.ts";
import type { PendingRequest, RequestTracker } from "./request-tracker.ts";

export type Direction = "agent_to_server" | "server_to_agent";

/**
 * What the shim records about the traffic it routes: the audit events of every governed call
 * (start, decision, end), framing rejections, orphaned requests, and the counters behind the
 * run summary and the governance service's metrics. One instance per shim.
 */
/** Distinct names and reasons remembered redacted; past this many the memory starts over. */
const SHOWN_TEXTS = 256;
/** Longer texts (a reason quoting arguments) are scanned each time, not kept. */
const SHOWN_TEXT_MAX = 512;

export class CallAudit {
  readonly summary: Summary = {
    calls_total: 0,
    calls_forwarded: 0,
    calls_denied: 0,
    calls_errored: 0,
    messages_agent_to_server: 0,
    messages_server_to_agent: 0,
    framing_errors: 0,
    smuggling_attempts: 0,
    orphaned_requests: 0,
    events_dropped: 0,
  };
  /** "<direction> <method>" → messages seen (responses count under "response"), for metrics. */
  readonly messageCounts = new Map<string, number>();
  /** Counting costs a string and a map update per message: only done when someone reads it. */
  counting = false;
  /** Framing error code → count, for metrics. */
  readonly framingErrorCounts = new Map<string, number>();
  /**
   * Tool names and decision reasons as the audit shows them (redacted). A session repeats a few of
   * each thousands of times, and scanning one costs more than the rest of its event.
   */
  private readonly shown = new Map<string, string>();

  /** The tool calls' own events, written as every front end writes them. */
  private readonly record: CallRecord;

  constructor(
    private readonly events: EventStream,
    private readonly log: Logger,
    /** Whether the record keeps each call's arguments (redacted) beside their hash: the user's `audit.arguments`. */
    private readonly recordArguments: () => boolean = () => true,
  ) {
    this.record = new CallRecord(events, recordArguments);
  }

  message(direction: Direction, message: Message): void {
    if (direction === "agent_to_server") this.summary.messages_agent_to_server += 1;
    else this.summary.messages_server_to_agent += 1;
    if (!this.counting) return;
    const key = `${direction} ${message.kind === "response" ? "response" : message.method}`;
    this.messageCounts.set(key, (this.messageCounts.get(key) ?? 0) + 1);
  }

  /** A `tools/call` arrived from the agent: it gets its audit identity and a `tool_call_start`. */
  startCall(entry: PendingRequest, request: JsonRpcRequest): void {
    this.summary.calls_total += 1;
    const tool = targetName(request);
    // The audit identity (a UUID and a SHA-256 of canonical arguments) costs ~20% of the
    // per-call time: only computed when someone reads the event stream.
    if (!this.record.enabled) {
      entry.call = { callId: "", tool, argsHash: "" };
      return;
    }
    const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
    entry.call = { ...this.record.start(request.id, tool, args), tool };
  }

  /** A governed request's decision (or that it now waits for a human). */
  decision(entry: PendingRequest, verdict: Verdict | { action: "pending"; reason: string }, request: JsonRpcRequest): void {
    const decided = verdict.action === "pending" ? null : verdict;
    // A resource URI can carry a password (`postgres://u:pw@host/t`), and reasons quote names:
    // logs and the audit get both redacted.
    // (Only when something is written: a forwarded call without an audit costs nothing here.)
    const logged = decided?.action === "deny" || (decided?.action === "forward" && decided.would !== undefined);
    if (entry.call && decided) {
      if (decided.action === "forward") this.summary.calls_forwarded += 1;
      else this.summary.calls_denied += 1;
    }
    if (!logged && !this.events.enabled) return;
    const name = this.redacted(targetName(request));
    const reason = this.redacted(verdict.reason);
    if (decided?.action === "forward" && decided.would) {
      this.log.warn(showInvisible(`${decided.would} ${request.method} ${name}: ${reason}`));
    } else if (decided?.action === "deny") {
      this.log.info(showInvisible(`denied ${request.method} ${name}: ${reason}`));
    }
    if (!this.events.enabled) return;
    const fields = decisionFields(verdict.action, decided, reason);
    if (entry.call) {
      this.record.decision(entry.call, entry.call.tool, fields);
    } else {
      // prompts/get carries arguments; a resource's request has only its URI (`name`, redacted).
      const args = (request.params as { arguments?: unknown } | undefined)?.arguments;
      const recorded = args !== undefined && this.recordArguments() ? { arguments: recordedArguments(args) } : {};
      this.events.emit("method_decision", { request_id: entry.id, method: request.method, name, ...recorded, ...fields });
    }
  }

  /** `redactText(text)`, remembered for the last few hundred distinct short texts. */
  private redacted(text: string): string {
    if (text.length > SHOWN_TEXT_MAX) return redactText(text);
    let shown = this.shown.get(text);
    if (shown === undefined) {
      shown = redactText(text);
      if (this.shown.size >= SHOWN_TEXTS) this.shown.clear();
      this.shown.set(text, shown);
    }
    return shown;
  }

  endCall(entry: PendingRequest, status: CallStatus, bytesOut: number): void {
    entry.trace?.end(status);
    this.recordEnd(entry, status, bytesOut);
  }

  /** A call's end in the record and the counters (its spans are the trace's). */
  recordEnd(entry: PendingRequest, status: CallStatus, bytesOut: number): void {
    if (!entry.call) return;
    if (status === "error" || status === "server_unavailable") this.summary.calls_errored += 1;
    if (this.record.enabled) this.record.end(entry.call, entry.call.tool, status, entry.startedAt, bytesOut);
  }

  /** A list response on its way to the agent: how many items the server sent, how many the agent got. */
  listResult(entry: PendingRequest, upstream: number, returned: number): void {
    if (!this.events.enabled) return;
    this.events.emit("list_result", { request_id: entry.id, method: entry.method, upstream_count: upstream, returned_count: returned });
  }

  smuggling(): void {
    this.summary.smuggling_attempts += 1;
  }

  framing(error: FramingError, direction: Direction, action: "rejected" | "would_reject", answered: JsonRpcId | null | undefined): void {
    this.summary.framing_errors += 1;
    this.framingErrorCounts.set(error.code, (this.framingErrorCounts.get(error.code) ?? 0) + 1);
    // Redacted (credentials) and, on stderr, with terminal-driving and invisible characters escaped.
    const logged = rawForLog(error.raw);
    const detail = redactText(error.detail);
    const label = action === "would_reject" ? (error.code === "SmugglingAttempt" ? "WOULD_REJECT" : "WOULD_DROP") : "rejected";
    this.log.warn(showInvisible(`${label} ${direction.replaceAll("_", " ")}: ${error.code}: ${detail} (${logged.raw_encoding} ${truncate(logged.raw)})`));
    this.events.emit("framing_error", {
      direction,
      error: error.code,
      detail,
      action,
      bytes: error.size,
      ...logged,
      ...(answered !== undefined ? { answered_id: answered } : {}),
    });
  }

  /** A response to a request that was never sent (dropped in production, forwarded in development). */
  unsolicited(id: JsonRpcId, direction: Direction, development: boolean): void {
    this.log.warn(`${development ? "WOULD_DROP " : ""}response to unknown request id ${JSON.stringify(id)} (${direction})`);
    const raw = new TextEncoder().encode(JSON.stringify({ id }));
    this.summary.framing_errors += 1;
    this.events.emit("framing_error", {
      direction,
      error: "UnsolicitedResponse",
      detail: `response to unknown request id ${JSON.stringify(id)}`,
      action: development ? "would_reject" : "rejected",
      bytes: raw.length,
      ...rawForLog(raw),
    });
  }

  /** Report requests that have waited longer than `timeoutMs`, once each. */
  orphans(tracker: RequestTracker, direction: Direction, now: number, timeoutMs: number): void {
    for (const entry of tracker.newOrphans(now, timeoutMs)) {
      const ageMs = Math.round(now - entry.startedAt);
      this.log.warn(`${entry.method} (id ${JSON.stringify(entry.id)}) has had no response for ${ageMs} ms`);
      this.summary.orphaned_requests += 1;
      this.events.emit("orphaned_request", { direction, request_id: entry.id, method: entry.method, age_ms: ageMs });
    }
  }
}

function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
