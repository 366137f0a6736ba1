import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { mkdirSync } from "node:fs";
import type { Profile } from "../core/profile.ts";
import { log } from "../core/log.ts";
import { messageOf } from "../core/errors.ts";

/**
 * The audit event stream (docs/events.md): one JSON object per line, appended to a file, never to stdout.
 * Documented in docs/events.md. `emit` never blocks the proxy: events queue in memory and one
 * writer drains them; past `MAX_QUEUED_EVENTS` new events are dropped and counted (their `seq`
 * numbers are skipped, so a reader sees the gap).
 */
export const EVENT_SCHEMA_VERSION = 1;
export const MAX_QUEUED_EVENTS = 4096;

export type Decision = "forward" | "deny" | "pending";
export type CallStatus = "ok" | "error" | "denied" | "server_unavailable" | "cancelled" | "no_response";

export type EventFields = {
  run_start: {
    started_at: string;
    pid: number;
    server_command: string[];
    policy: string;
    version: string;
  };
  server_state: {
    state: "running" | "failed_to_start" | "exited" | "terminated";
    pid?: number;
    exit_code?: number | null;
    signal?: string | null;
    detail?: string;
  };
  tool_call_start: {
    call_id: string;
    request_id: string | number;
    tool: string;
    args_hash: string;
    /** arbiter: the `tool.request`'s `action`, and whether the child waits for our decision. */
    action?: string;
    requires_policy?: boolean;
  };
  tool_call_decision: { call_id: string; tool: string } & DecisionFields;
  /** A decision on a governed method other than tools/call (resources/read, prompts/get…). */
  method_decision: { request_id: string | number; method: string; name: string } & DecisionFields;
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
    exit_code: number;
    summary: Summary | ArbiterSummary;
  };
};

export type EventType = keyof EventFields;

export type DecisionFields = {
  decision: Decision;
  gate: string | null;
  rule_id: string | null;
  policy_id: string | null;
  reason: string;
  /** development: what production would have done (WOULD_BLOCK / WOULD_REQUIRE_APPROVAL). */
  would?: string;
  auto_approved?: boolean;
  approved_by?: string;
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

export type Envelope = {
  v: number;
  type: EventType;
  ts: string;
  run_id: string;
  server_id: string;
  seq: number;
  profile: Profile;
};

export class EventStream {
  private seq = 0;
  private queue: string[] = [];
  private writing: Promise<void> | null = null;
  private handle: FileHandle | null = null;
  private opening: Promise<void> | null = null;
  dropped = 0;

  private constructor(
    private readonly path: string | null,
    private readonly envelope: { run_id: string; server_id: string; profile: Profile },
  ) {}

  /** `path` null disables the stream: `emit` costs nothing. */
  static open(path: string | null, envelope: { run_id: string; server_id: string; profile: Profile }): EventStream {
    const stream = new EventStream(path, envelope);
    if (path !== null) stream.opening = stream.openFile(path);
    return stream;
  }

  get enabled(): boolean {
    return this.path !== null;
  }

  emit<T extends EventType>(type: T, fields: EventFields[T], options: { force?: boolean } = {}): void {
    if (this.path === null) return;
    this.seq += 1;
    if (this.queue.length >= MAX_QUEUED_EVENTS && !options.force) {
      this.dropped += 1;
      return;
    }
    const event: Envelope & EventFields[T] = {
      v: EVENT_SCHEMA_VERSION,
      type,
      ts: new Date().toISOString(),
      ...this.envelope,
      seq: this.seq,
      ...fields,
    };
    this.queue.push(`${JSON.stringify(event)}\n`);
    this.writing ??= this.drain();
  }

  /** Write everything queued and close the file. */
  async close(): Promise<void> {
    await this.opening;
    while (this.writing) await this.writing;
    if (this.dropped > 0) log.warn(`event stream dropped ${this.dropped} events (writer could not keep up)`);
    await this.handle?.close();
    this.handle = null;
  }

  private async openFile(path: string): Promise<void> {
    try {
      mkdirSync(dirname(path), { recursive: true });
      // Append: every shim of a wrap session may share one file; O_APPEND keeps each write whole.
      this.handle = await open(path, "a", 0o600);
    } catch (error) {
      log.error(`cannot open event stream ${path}: ${messageOf(error)}`);
    }
  }

  private async drain(): Promise<void> {
    try {
      await this.opening;
      while (this.queue.length > 0) {
        const batch = this.queue.join("");
        this.queue = [];
        await this.handle?.write(batch);
      }
    } catch (error) {
      log.error(`event stream write failed: ${messageOf(error)}`);
    } finally {
      this.writing = null;
    }
  }
}

/** The raw bytes of a rejected line for the log: UTF-8 text when it is, hex otherwise. */
export function rawForLog(bytes: Uint8Array, maxBytes = 4096): { raw: string; raw_encoding: "utf8" | "hex" } {
  const shown = bytes.length > maxBytes ? bytes.subarray(0, maxBytes) : bytes;
  try {
    return { raw: new TextDecoder("utf-8", { fatal: true }).decode(shown), raw_encoding: "utf8" };
  } catch {
    return { raw: Buffer.from(shown).toString("hex"), raw_encoding: "hex" };
  }
}
