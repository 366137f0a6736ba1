import { basename } from "node:path";
import { outcomeOf, PERSON_CHANNELS, type LogCall } from "./log-call.ts";

export type Event = Record<string, unknown>;

/** What a run's `run_start` said: the agent and the project of every call of that run. */
export type RunInfo = { agentCommand: string[] | null; project: string | null };

/** A call as assembled so far, and the byte offsets in its file of the lines it was made from. */
export type Assembled = { call: LogCall; lines: number[] };

/** Where the events come from, and how to find what an earlier pass over the file assembled. */
export type AssemblySource = {
  session: string | null;
  /** A stable name of the file, for the ids of calls that have none in the record. */
  fileKey: string;
  loadCall(callId: string): Assembled | null;
  loadRun(runId: string, server: string): RunInfo | null;
};

/**
 * Turns a record's events into calls (log-call.ts), a batch at a time: `tool_call_start` makes a
 * call, its `tool_call_decision`s, `secrets_found` and `tool_call_end` complete it; a
 * `method_decision` is a whole call. A call whose start came in an earlier batch is read back
 * from the index. Unknown events and fields are skipped, so older and newer records read alike.
 */
export class CallAssembler {
  /** Calls made or changed in this batch. */
  readonly changed = new Map<string, LogCall>();
  /** The lines (byte offsets in the file) each call of `changed` was made from, earlier batches' included. */
  readonly lines = new Map<string, number[]>();
  /** The offset of the event being added (-1: not known). */
  private offset = -1;
  /** Runs whose `run_start` came in this batch. */
  readonly runs = new Map<string, RunInfo & { runId: string; server: string }>();

  constructor(private readonly source: AssemblySource) {}

  /** Calls made in this batch that no earlier batch had (the index counts them per file). */
  created = 0;
  private readonly createdIds = new Set<string>();

  /** Whether the call was first seen in this batch. */
  isNew(callId: string): boolean {
    return this.createdIds.has(callId);
  }

  add(event: Event, offset = -1): void {
    this.offset = offset;
    switch (event.type) {
      case "run_start":
        this.runs.set(runKey(event), {
          runId: str(event.run_id) ?? "",
          server: str(event.server_id) ?? "",
          agentCommand: strings(event.agent_command),
          project: str(event.project),
        });
        return;
      case "tool_call_start":
        return this.start(event);
      case "tool_call_decision":
        return this.decide(this.call(event), event);
      case "method_decision": {
        // No call id in the record: one from the event's place (its run, server, seq and time).
        const place = `${this.source.fileKey}\u0000${String(event.run_id)}\u0000${String(event.server_id)}\u0000${String(event.seq)}\u0000${String(event.ts)}`;
        const id = `m-${Bun.hash(place).toString(16).padStart(16, "0")}`;
        const call = this.known(id) ?? this.blank(event, id);
        call.method = str(event.method) ?? "";
        call.tool = str(event.name) ?? "";
        call.arguments = event.arguments ?? null;
        this.decide(call, event);
        // Nothing more is recorded of it: it ends with its decision.
        call.ended = call.decision === "pending" ? null : call.time;
        return this.touch(call);
      }
      case "secrets_found": {
        if (event.direction !== "server_to_agent" || typeof event.call_id !== "string") return;
        const call = this.call(event);
        const found = { ...(call.secrets_found ?? {}) };
        for (const [kind, count] of Object.entries((event.found as Record<string, unknown> | undefined) ?? {})) if (typeof count === "number") found[kind] = (found[kind] ?? 0) + count;
        call.secrets_found = found;
        return this.touch(call);
      }
      case "tool_call_end": {
        const call = this.call(event);
        call.status = str(event.status);
        call.ended = str(event.ts);
        call.latency_ms = typeof event.latency_ms === "number" ? event.latency_ms : null;
        call.bytes_out = typeof event.bytes_out === "number" ? event.bytes_out : null;
        if (call.args_hash === null) call.args_hash = str(event.args_hash);
        return this.touch(call);
      }
    }
  }

  private start(event: Event): void {
    const id = str(event.call_id);
    if (id === null) return;
    const call = this.known(id) ?? this.blank(event, id);
    call.time = str(event.ts) ?? call.time;
    call.tool = str(event.tool) ?? call.tool;
    call.args_hash = str(event.args_hash);
    call.arguments = event.arguments ?? null;
    this.touch(call);
  }

  /** The call an event names, from this batch, the index, or new (its start was lost: a cut record). */
  private call(event: Event): LogCall {
    const id = str(event.call_id) ?? "";
    const call = this.known(id) ?? this.blank(event, id);
    if (call.tool === "") call.tool = str(event.tool) ?? "";
    return call;
  }

  private decide(call: LogCall, event: Event): void {
    const decision = event.decision === "forward" || event.decision === "deny" || event.decision === "pending" ? event.decision : null;
    const time = str(event.ts) ?? call.time;
    call.trail.push({ time, decision: decision ?? "unknown", gate: str(event.gate), rule_id: str(event.rule_id), reason: str(event.reason) });
    if (decision === "pending") {
      call.asked = true;
      // A decision already recorded stays (a pending cannot come after it).
      if (call.decision === null) call.decision = "pending";
      return this.touch(call);
    }
    call.decision = decision;
    call.gate = str(event.gate);
    call.rule_id = str(event.rule_id);
    call.policy_id = str(event.policy_id);
    call.reason = str(event.reason);
    call.decided_by = decidedBy(event);
    call.person_reason = str(event.person_reason);
    // Handed to the agent's own prompt: a person was asked there (their answer is the agent's to enforce).
    if (call.decided_by && (PERSON_CHANNELS.has(call.decided_by.channel) || call.decided_by.channel === "agent_prompt")) call.asked = true;
    this.touch(call);
  }

  private blank(event: Event, id: string): LogCall {
    this.created += 1;
    this.createdIds.add(id);
    const run = this.runs.get(runKey(event)) ?? this.source.loadRun(str(event.run_id) ?? "", str(event.server_id) ?? "");
    const agentCommand = run?.agentCommand ?? null;
    return {
      call_id: id,
      time: str(event.ts) ?? "",
      ended: null,
      session: this.source.session,
      run_id: str(event.run_id) ?? "",
      server: str(event.server_id) ?? "",
      method: "tools/call",
      tool: str(event.tool) ?? "",
      agent: agentCommand?.[0] ? basename(agentCommand[0]) : null,
      agent_command: agentCommand,
      project: run?.project ?? null,
      arguments: null,
      args_hash: null,
      decision: null,
      outcome: "pending",
      asked: false,
      status: null,
      gate: null,
      rule_id: null,
      policy_id: null,
      reason: null,
      decided_by: null,
      person_reason: null,
      latency_ms: null,
      bytes_out: null,
      secrets_found: null,
      trail: [],
    };
  }

  /** A call of this batch, or of an earlier one (with the lines it was made from). */
  private known(id: string): LogCall | null {
    const here = this.changed.get(id);
    if (here) return here;
    const earlier = this.source.loadCall(id);
    if (!earlier) return null;
    this.lines.set(id, [...earlier.lines]);
    return earlier.call;
  }

  private touch(call: LogCall): void {
    call.outcome = outcomeOf(call);
    this.changed.set(call.call_id, call);
    if (this.offset < 0) return;
    const lines = this.lines.get(call.call_id);
    if (!lines) this.lines.set(call.call_id, [this.offset]);
    else if (lines.at(-1) !== this.offset) lines.push(this.offset);
  }
}

function runKey(event: Event): string {
  return `${String(event.run_id)}\u0000${String(event.server_id)}`;
}

/**
 * Who decided: `decided_by` where the record has it; in an older record, `approved_by` (a channel,
 * or `session_grant:<task>`), or the channel a person's refusal names in its reason (`rejected (cli)`).
 */
function decidedBy(event: Event): LogCall["decided_by"] {
  const given = event.decided_by;
  if (given !== null && typeof given === "object" && typeof (given as { channel?: unknown }).channel === "string") {
    const { channel, who, scope } = given as { channel: string; who?: unknown; scope?: unknown };
    return { channel, ...(typeof who === "string" ? { who } : {}), ...(typeof scope === "string" ? { scope } : {}) };
  }
  if (typeof event.approved_by === "string") return event.approved_by.startsWith("session_grant:") ? { channel: "session_grant", scope: "session" } : { channel: event.approved_by };
  const refused = event.decision === "deny" && event.gate === "approval" ? /: rejected \(([a-z_]+)\)$/.exec(String(event.reason ?? "")) : null;
  return refused?.[1] ? { channel: refused[1] } : null;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function strings(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === "string") ? (value as string[]) : null;
}
