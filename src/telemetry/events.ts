import { closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Profile } from "../core/profile.ts";
import { log } from "../core/log.ts";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { redactText } from "./redact.ts";
import { showInvisibleInJson } from "../core/visible-text.ts";

/**
 * The audit event stream (docs/events.md): one JSON object per line, appended to a file, never to
 * stdout. Nothing is ever dropped: the events of one turn of the event loop are written together
 * with one synchronous append, so a slow disk slows the proxy down (the pumps cannot read the next
 * chunk until the write is done) instead of losing records. A file that cannot be opened stops the
 * command; a write that fails is reported loudly and counted in `run_end.summary.events_dropped`.
 */
const EVENT_SCHEMA_VERSION = 1;

/** What `tool_call_decision` records of a call: sent on, refused, or waiting for a person (docs/events.md). */
export type RecordedDecision = "forward" | "deny" | "pending";
export type CallStatus = "ok" | "error" | "denied" | "server_unavailable" | "cancelled" | "no_response" | "input_required";

export type EventFields = {
  run_start: {
    started_at: string;
    pid: number;
    /** When that process started (core/process-identity.ts), so `log --prune` knows it still runs after a pid is reused. */
    start_id?: string;
    server_command: string[];
    /** A remote server's URL (origin and path): `shim --url`. */
    server_url?: string;
    policy: string;
    version: string;
    /** The agent's command line, redacted (src/telemetry/redact-argv.ts); absent when it cannot be known. */
    agent_command?: string[];
    /** The project the agent works in (src/core/project.ts). */
    project?: string;
  };
  server_state: {
    state: "running" | "failed_to_start" | "exited" | "terminated" | "closed";
    pid?: number;
    url?: string;
    exit_code?: number | null;
    signal?: string | null;
    detail?: string;
  };
  tool_call_start: {
    call_id: string;
    request_id: string | number;
    tool: string;
    args_hash: string;
    /** The arguments as a person is shown them (redacted, long strings cut in the middle); absent with `audit.arguments: hash`. */
    arguments?: unknown;
    /** arbiter: the `tool.request`'s `action`, and whether the child waits for our decision. */
    action?: string;
    requires_policy?: boolean;
  };
  tool_call_decision: { call_id: string; tool: string } & DecisionFields;
  /** A decision on a governed method other than tools/call (resources/read, prompts/get…). */
  method_decision: { request_id: string | number; method: string; name: string; arguments?: unknown } & DecisionFields;
  /** A tools/prompts/resources list on its way to the agent: what the server sent, what the agent got. */
  list_result: { request_id: string | number; method: string; upstream_count: number; returned_count: number };
  /** A tool (prompt, resource template) seen for the first time under this server's identity: its definition is pinned. */
  definition_pinned: { kind: string; name: string; digest: string };
  /** A served definition differs from its pin: hidden and refused (`hidden`), or `would_block` (development), or only `warned` (`pin: warn`). */
  definition_changed: { kind: string; name: string; pinned_digest: string; served_digest: string; changed: string[]; findings: string[]; action: DefinitionAction };
  /** A definition's poisoning findings: `hidden` (at or above the policy's severity, nobody accepted it), `would_block`, `warned` or `logged` (below it). */
  definition_flagged: { kind: string; name: string; digest: string; severity: string; findings: Array<{ rule: string; severity: string; path: string }>; action: DefinitionAction | "logged" };
  /** A person accepted a changed or flagged definition (`by`: elicitation, web, cli, slack); it is the pin now. */
  definition_accepted: { kind: string; name: string; digest: string; by: string };
  tool_call_end: {
    call_id: string;
    tool: string;
    args_hash: string;
    status: CallStatus;
    latency_ms: number;
    bytes_out: number;
  };
  framing_error: {
    direction: "agent_to_server" | "server_to_agent";
    error: string;
    detail: string;
    action: "rejected" | "would_reject";
    bytes: number;
    raw: string;
    raw_encoding: "utf8" | "hex";
    /** What the shim did for the sender: answered a request, or nothing. */
    answered_id?: string | number | null;
  };
  /**
   * The secret scanner found credentials in a governed request's arguments or in the response on
   * its way to the agent (docs/events.md#secrets_found): how many of each kind, never the values.
   */
  secrets_found: {
    direction: "agent_to_server" | "server_to_agent";
    request_id: string | number;
    method: string;
    call_id?: string;
    tool?: string;
    /** Every finding, by kind. */
    found: Record<string, number>;
    /** Those replaced in what the agent received (production, `action: redact`); arguments are never changed. */
    redacted: Record<string, number>;
    /** development: what production would have redacted was forwarded unchanged. */
    would?: "WOULD_REDACT";
  };
  orphaned_request: {
    direction: "agent_to_server" | "server_to_agent";
    request_id: string | number;
    method: string;
    age_ms: number;
  };
  /** arbiter: a `policy.abort` (docs/codecli-protocol.md §3.4); `delivered` false when the child's stdin was already gone. */
  policy_abort: { id: string; code: string; reason: string; delivered: boolean };
  /** arbiter: a line that claimed to be an event (prefix, or a `tool.*` type) but is not a valid one; passed through. */
  malformed_event: {
    stream: "stdout" | "stderr";
    error: string;
    detail: string;
    bytes: number;
    raw: string;
    raw_encoding: "utf8" | "hex";
  };
  /** arbiter: an event that broke the per-id rules of docs/codecli-protocol.md §6 (ignored, never fatal). */
  protocol_warning: {
    warning: "duplicate_request" | "unknown_id" | "result_before_decision";
    request_id: string | number;
    detail: string;
  };
  run_end: {
    ended_at: string;
    /** shim: ok / server_exited / server_failed; arbiter: child_exited / aborted / transport_failed / server_failed. */
    status: "ok" | "server_exited" | "server_failed" | "child_exited" | "aborted" | "transport_failed";
    /** The shim's or arbiter's pid (wrap pairs it with run_start's). */
    pid: number;
    exit_code: number;
    summary: Summary | ArbiterSummary;
  };
};

export type EventType = keyof EventFields;

type DefinitionAction = "hidden" | "would_block" | "warned";

export type DecisionFields = {
  decision: RecordedDecision;
  gate: string | null;
  rule_id: string | null;
  policy_id: string | null;
  reason: string;
  /** development: what production would have done (WOULD_BLOCK / WOULD_REQUIRE_APPROVAL). */
  would?: string;
  auto_approved?: boolean;
  approved_by?: string;
  /** Who decided a call a person was asked about: the channel, and who where known (docs/events.md). */
  decided_by?: { channel: string; who?: string; scope?: string };
  /** The person's own words with their decision (redacted, escaped), when they gave some. */
  person_reason?: string;
};

export type Summary = {
  calls_total: number;
  calls_forwarded: number;
  calls_denied: number;
  calls_errored: number;
  messages_agent_to_server: number;
  messages_server_to_agent: number;
  framing_errors: number;
  smuggling_attempts: number;
  orphaned_requests: number;
  events_dropped: number;
};

/** `run_end.summary` of a `thoughtgate arbiter` run. */
export type ArbiterSummary = {
  requests_total: number;
  /** `requires_policy: false`: audited, not waited for. */
  requests_unwaited: number;
  allowed: number;
  denied: number;
  /** Allowed by a person at the terminal. */
  approved: number;
  /** Denied because no decision came in time. */
  timed_out: number;
  malformed_events: number;
  duplicate_requests: number;
  unknown_ids: number;
  aborts: number;
  /** Lines written to the child's stdin (decisions, pings, aborts). */
  control_lines: number;
  events_dropped: number;
};

export class EventStream {
  private seq = 0;
  private queue: string[] = [];
  private flushScheduled = false;
  private fd: number | null = null;
  private failed = false;
  /** Events that could not be written (a write failed); 0 unless the disk failed us. */
  dropped = 0;
  /** The envelope's fixed part, serialised once: `"run_id":…,"server_id":…,"profile":…`. */
  private readonly fixed: string;
  private lastMs = -1;
  private lastTs = "";

  private constructor(
    private readonly path: string | null,
    envelope: { run_id: string; server_id: string; profile: Profile },
  ) {
    this.fixed = `"run_id":${JSON.stringify(envelope.run_id)},"server_id":${JSON.stringify(envelope.server_id)},"profile":${JSON.stringify(envelope.profile)}`;
  }

  /**
   * `path` null disables the stream (`emit` costs nothing). A file that cannot be opened for
   * appending is an IO error: an audit that was asked for is never silently off.
   */
  static open(path: string | null, envelope: { run_id: string; server_id: string; profile: Profile }): EventStream {
    const stream = new EventStream(path, envelope);
    if (path !== null) {
      try {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        // Append: every shim of a wrap session may share one file; O_APPEND keeps each write whole.
        stream.fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
      } catch (error) {
        throw new ThoughtGateError("IO", `cannot open the event stream ${path}: ${messageOf(error)}`);
      }
    }
    return stream;
  }

  get enabled(): boolean {
    return this.path !== null;
  }

  emit<T extends EventType>(type: T, fields: EventFields[T]): void {
    if (this.path === null) return;
    this.seq += 1;
    // Arguments come from the agent: their invisible characters are written as JSON escapes
    // (the same value, src/core/visible-text.ts), so no reader of the file meets them raw.
    const body = "arguments" in fields ? showInvisibleInJson(JSON.stringify(fields)) : JSON.stringify(fields);
    const head = `{"v":${EVENT_SCHEMA_VERSION},"type":"${type}","ts":"${this.timestamp()}",${this.fixed},"seq":${this.seq}`;
    this.queue.push(body === "{}" ? `${head}}\n` : `${head},${body.slice(1)}\n`);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  /** Write everything queued and close the file. */
  async close(): Promise<void> {
    this.flush();
    if (this.dropped > 0) log.error(`the event stream ${this.path} lost ${this.dropped} events: writing to it failed`);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    const events = this.queue.length;
    const batch = Buffer.from(this.queue.join(""));
    this.queue = [];
    if (this.fd === null || this.failed) {
      this.dropped += events;
      return;
    }
    try {
      let offset = 0;
      while (offset < batch.length) offset += writeSync(this.fd, batch, offset);
    } catch (error) {
      this.failed = true;
      this.dropped += events;
      log.error(`writing the event stream ${this.path} failed (${messageOf(error)}): the audit record is incomplete from here on`);
    }
  }

  /** `Date#toISOString` once per millisecond: a busy shim writes many events per millisecond. */
  private timestamp(): string {
    const now = Date.now();
    if (now !== this.lastMs) {
      this.lastMs = now;
      this.lastTs = new Date(now).toISOString();
    }
    return this.lastTs;
  }
}

/**
 * The raw bytes of a rejected line for the log: UTF-8 text when it is, hex otherwise, with
 * credentials redacted either way (the text redactor, docs/events.md#framing_error). Bytes that
 * are not UTF-8 are redacted byte for byte (read as Latin-1, whose characters are the bytes), so
 * the hex never spells out a password either.
 */
export function rawForLog(bytes: Uint8Array, maxBytes = 4096): { raw: string; raw_encoding: "utf8" | "hex" } {
  const shown = bytes.length > maxBytes ? bytes.subarray(0, maxBytes) : bytes;
  try {
    return { raw: redactText(new TextDecoder("utf-8", { fatal: true }).decode(shown)), raw_encoding: "utf8" };
  } catch {
    const redacted = redactText(Buffer.from(shown).toString("latin1"));
    return { raw: Buffer.from(redacted, "latin1").toString("hex"), raw_encoding: "hex" };
  }
}
