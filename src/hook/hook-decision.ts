/**
 * One built-in tool call decided and recorded the way a shim decides and records an MCP call
 * (docs/architecture.md, decision 13): the wrap session the agent runs in decides through its
 * governance service (found as a shim finds it: governance/deciders/find-session.ts), an ended session
 * refuses, and outside any session the user's own policy decides in this process, as a standalone
 * shim's does. The call runs through the stages every front end shares (hook-pipeline.ts): its
 * decision (and its wait for a person) go to the session's record (or a standalone run's) through
 * the same `CallRecord` as an MCP call's, so `thoughtgate log` shows it with the same fields.
 *
 * `decideBuiltinCall` is the one place the hook decides: a front end owns transport, never policy.
 */
import type { Profile } from "../core/profile.ts";
import { projectRoot } from "../core/project.ts";
import { messageOf } from "../core/errors.ts";
import { AGENT_SOURCE, shellLine, withShellReading, type ShellReading } from "../governance/verdict/agent-tools.ts";
import type { Decider, Verdict } from "../governance/verdict/decider.ts";
import { findSession, type SessionLookup } from "../governance/deciders/find-session.ts";
import { createShimDecider } from "../governance/deciders/shim-decider.ts";
import { CallRecord } from "../pipeline/call-record.ts";
import { isDecisionFailure } from "../pipeline/decision-failed.ts";
import { EventStream } from "../telemetry/events.ts";
import { VERSION } from "../version.ts";
import { personsAnswer } from "./agent-answer.ts";
import type { BuiltinCall } from "./builtin-call.ts";
import { recordHookCallRan, runHookCall } from "./hook-pipeline.ts";
import type { HookTracing } from "./hook-trace.ts";

/** How long the hook waits for a service that does not answer yet before it blocks the call. */
const SERVICE_READY_MS = 5_000;

export type HookContext = {
  agent: string;
  /** The agent's working directory (the hook's input says it). */
  cwd: string;
  /** When the hook must have answered (before the agent's own hook timeout). */
  signal: AbortSignal;
  /** The profile outside a session (a session's own applies inside it). */
  profile: Profile;
  /** Where a run outside any session keeps its record. */
  standaloneEvents(runId: string): string | null;
  /** The agent can show its person a question of the hook's (Claude Code's `ask`). */
  agentCanPrompt: boolean;
  /** The agent's permission mode, as its hook input said (agent-answer.ts). */
  agentMode?: string | null;
};

/**
 * `askedInAgent`: the question handed to the agent's own prompt (decider.ts, `askInAgent`), or null;
 * `failed`: no decision could be made (the decide stage's deny): the hook blocks the call and says why.
 */
export type HookVerdict = Verdict & { session: string | null; askedInAgent: string | null; failed: boolean };

/** Decide one call of the agent's own tool, recording it. Throws when no decider can be made (the caller blocks the call). */
export async function decideBuiltinCall(call: BuiltinCall, context: HookContext, toolUseId: string | null = null): Promise<HookVerdict> {
  const lookup = await findSession();
  const session = lookup.kind === "joined" ? lookup.session : undefined;
  const profile = session?.profile ?? context.profile;
  const runId = session?.id ?? Bun.randomUUIDv7();
  const decider = await deciderFor(lookup, profile);
  let tracing: HookTracing | null = null;
  // A shell line is read where the call is decided: by the session's service (one warm parser for
  // the session: docs/governance.md, "Built-in tools"), else here.
  const line = shellLine({ serverId: AGENT_SOURCE, method: "tools/call", name: call.name, arguments: call.arguments });
  let deciding: Pick<Decider, "decide"> = decider;
  if (line !== null && lookup.kind === "joined") deciding = readByTheService(decider, line);
  else if (line !== null) call = { ...call, arguments: withShellReading(call.arguments, await readHere(line)) };
  try {
    // Traced as a shim here would be (the decider's plan); nothing of it is loaded otherwise.
    if (decider.tracing) tracing = await (await import("./hook-trace.ts")).startHookTracing(decider.tracing, profile, runId);
    const events = EventStream.open(session ? session.events : context.standaloneEvents(runId), { run_id: runId, server_id: AGENT_SOURCE, profile });
    events.emit("run_start", {
      started_at: new Date().toISOString(),
      pid: process.pid,
      server_command: ["thoughtgate", "hook", context.agent],
      policy: decider.policy,
      version: VERSION,
      ...(session ? { agent_command: session.agent.command, project: session.project } : { project: projectRoot(context.cwd) }),
    });
    const record = new CallRecord(events, () => decider.auditArguments?.() ?? true);
    // The agent's own id for the call, where it gives one, so its PostToolUse finds the call (recordRan).
    const callId = toolUseId !== null ? agentCallId(toolUseId) : Bun.randomUUIDv7();
    const { verdict, askedInAgent } = await runHookCall(call, deciding, record, { callId, signal: context.signal, agentCanPrompt: context.agentCanPrompt, agentMode: context.agentMode ?? null, spans: tracing?.spans });
    // One call, one run: ended here, so wrap's drain does not take the hook for a shim gone silent.
    const forwarded = verdict.action === "forward" ? 1 : 0;
    events.emit("run_end", {
      ended_at: new Date().toISOString(),
      status: "ok",
      pid: process.pid,
      exit_code: 0,
      summary: { calls_total: 1, calls_forwarded: forwarded, calls_denied: 1 - forwarded, calls_errored: 0, messages_agent_to_server: 1, messages_server_to_agent: 0, framing_errors: 0, smuggling_attempts: 0, orphaned_requests: 0, events_dropped: events.dropped },
    });
    await events.close();
    return { ...verdict, session: session?.id ?? null, askedInAgent, failed: isDecisionFailure(verdict) };
  } finally {
    // Before the decider closes: in a wrap session the spans go to the service over its channel.
    await tracing?.close();
    await decider.close?.();
  }
}

/** The bash parser in this process, loaded only now (WebAssembly, a few tens of ms). */
async function readHere(line: string): Promise<ShellReading> {
  return (await import("../shell/shell-commands.ts")).readShellCommand(line);
}

/**
 * The session's service reads the line and decides on its reading, which it sends back for the
 * record. An answer without one (the service could not be asked: the decision is its failure's)
 * is recorded with the line read here, so the record shows the commands whoever decided.
 */
function readByTheService(decider: Pick<Decider, "decide">, line: string): Pick<Decider, "decide"> {
  return {
    async decide(request, context) {
      let read = false;
      const verdict = await decider.decide(request, {
        ...context,
        shellRead: (reading) => {
          read = true;
          context.shellRead?.(reading);
        },
      });
      if (!read) context.shellRead?.(await readHere(line).catch((error: unknown): ShellReading => ({ ok: false, why: `the bash parser failed: ${messageOf(error)}` })));
      return verdict;
    },
  };
}

function agentCallId(toolUseId: string): string {
  return `agent-${toolUseId}`;
}

/**
 * The agent ran a call the hook let through or handed to its own prompt (Claude Code's PostToolUse,
 * with the same tool_use_id): its end goes to the session's record, so a call asked in the agent's
 * prompt shows whether it ran (the person's yes there is not otherwise seen). The agent says so;
 * nothing is decided on it. For a call asked there, the session's service says how far the
 * person's yes reached (agent-answer.ts), recorded as the call's decision. Only in a wrap session;
 * false when there is none.
 */
export async function recordRan(call: BuiltinCall, toolUseId: string, durationMs: number | null, agentMode: string | null = null): Promise<boolean> {
  const lookup = await findSession();
  if (lookup.kind !== "joined") return false;
  const session = lookup.session;
  const answer = await personsAnswer(session, `hook-${agentCallId(toolUseId)}`, agentMode);
  // Its start holds the commands judged: the shell line is not read again.
  if (shellLine({ serverId: AGENT_SOURCE, method: "tools/call", name: call.name, arguments: call.arguments }) !== null) call = { ...call, arguments: withShellReading(call.arguments, { ok: false, why: "not read after the call" }) };
  const events = EventStream.open(session.events, { run_id: session.id, server_id: AGENT_SOURCE, profile: session.profile });
  events.emit("run_start", { started_at: new Date().toISOString(), pid: process.pid, server_command: ["thoughtgate", "hook"], policy: "-", version: VERSION, agent_command: session.agent.command, project: session.project });
  await recordHookCallRan(call, new CallRecord(events, () => false), agentCallId(toolUseId), durationMs, answer);
  events.emit("run_end", {
    ended_at: new Date().toISOString(),
    status: "ok",
    pid: process.pid,
    exit_code: 0,
    summary: { calls_total: 0, calls_forwarded: 0, calls_denied: 0, calls_errored: 0, messages_agent_to_server: 0, messages_server_to_agent: 0, framing_errors: 0, smuggling_attempts: 0, orphaned_requests: 0, events_dropped: events.dropped },
  });
  await events.close();
  return true;
}

async function deciderFor(lookup: SessionLookup, profile: Profile): Promise<Decider> {
  return createShimDecider({
    profile,
    serverId: AGENT_SOURCE,
    endpoint: undefined,
    configFlag: undefined,
    // A session's service that does not answer soon blocks the call (the agent waits on the hook).
    ...(lookup.kind === "joined" ? { readyTimeoutMs: SERVICE_READY_MS } : {}),
    session: lookup,
  });
}
