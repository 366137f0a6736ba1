/**
 * One built-in tool call through the stages every front end shares (docs/architecture.md, "Every
 * tool call, one pipeline"): the hook's input becomes a `Call` (origin `hooks`, the agent's tool as
 * a `tools/call`), the decide stage asks the decider (a decider that throws or rejects is a deny),
 * the audit stage writes the call's record through the one `CallRecord` the shim and the arbiter
 * write through, the trace stage puts the decision on the call's spans when tracing is on
 * (hook-trace.ts), and the hook's own last stage (its answer to the agent) ends a refused call there.
 * Its end is the agent's to report when it ran the call (`recordRan`).
 */
import { argsHash } from "../core/canonical-json.ts";
import { RPC } from "../core/jsonrpc.ts";
import { AGENT_SOURCE, withShellReading } from "../governance/verdict/agent-tools.ts";
import type { DecisionContext, Decider, Verdict } from "../governance/verdict/decider.ts";
import { auditStage, recordPending } from "../pipeline/audit-stage.ts";
import { callOf, toolCallRequest, type Call, type CallSpans } from "../pipeline/call.ts";
import { decisionFields, type CallRecord } from "../pipeline/call-record.ts";
import { decideStage } from "../pipeline/decide-stage.ts";
import { compose, type Stage } from "../pipeline/stages.ts";
import { traceStage } from "../pipeline/trace-stage.ts";
import type { PersonsAnswer } from "./agent-answer.ts";
import type { BuiltinCall } from "./builtin-call.ts";

export type HookCallOptions = {
  /** The call's id in the record: the agent's own (its tool use id) where it gives one. */
  callId: string;
  /** When the hook must have answered (before the agent's own hook timeout). */
  signal: AbortSignal;
  /** The agent can show its person a question of the hook's (Claude Code's `ask`). */
  agentCanPrompt: boolean;
  /** The agent's permission mode, as its hook input said (agent-answer.ts). */
  agentMode?: string | null;
  /** Tracing on: the call's spans, begun as the call is built (hook-trace.ts). */
  spans?: ((call: Call) => CallSpans) | undefined;
};

/** `askedInAgent`: the question handed to the agent's own prompt (decider.ts, `askInAgent`), or null. */
export type HookOutcome = { verdict: Verdict; askedInAgent: string | null };

/**
 * The hook's answer, its forward stage: a call that is not let through ends here, refused (the
 * agent gets the deny), so its end is recorded with it. One with no verdict is refused too.
 */
const answer: Stage = {
  name: "forward",
  request(call, next) {
    if (call.verdict?.action !== "forward") {
      call.status = "denied";
      call.bytesOut = 0;
    }
    return next(call);
  },
};

/** Decide one call of the agent's own tool and record it; resolves with the verdict the hook answers with. */
export async function runHookCall(builtin: BuiltinCall, decider: Pick<Decider, "decide">, record: CallRecord, options: HookCallOptions): Promise<HookOutcome> {
  const call = callOf("hooks", AGENT_SOURCE, toolCallRequest(`hook-${options.callId}`, builtin.name, builtin.arguments));
  call.recordCallId = options.callId;
  if (options.spans) call.spans = options.spans(call);
  let askedInAgent: string | null = null;
  const contextOf = (call: Call): DecisionContext => ({
    signal: options.signal,
    serverId: AGENT_SOURCE,
    annotations: builtin.annotations,
    // The person is asked where ThoughtGate asks (the page, `approve`, Slack, the desktop), never
    // through an MCP form: the hook has no agent connection to show one on.
    elicit: null,
    // Where the agent shows a person its own prompt, the question goes there instead, once (the
    // service says whether the agent's mode shows one: not `claude -p`).
    ...(options.agentCanPrompt ? { askInAgent: (prompt: string) => void (askedInAgent = prompt), ...(options.agentMode ? { agentMode: options.agentMode } : {}) } : {}),
    awaitingApproval: (reason) => {
      recordPending(record, call, reason);
      call.spans?.waiting();
    },
    span: call.spans?.deciding,
    // The service read the shell line: the call is recorded with the commands it judged.
    shellRead: (reading) => {
      (call.request.params as { arguments: unknown }).arguments = withShellReading(builtin.arguments, reading);
    },
  });
  const audit = auditStage(record);
  // The agent runs a call let through after the hook answered: its spans end with the answer.
  const trace = traceStage({ endsWithAnswer: true });
  await compose<Call>([decideStage(decider, contextOf), audit, trace, answer], "request")(call);
  if (call.status !== undefined) await compose<Call>([audit, trace], "response")(call);
  return { verdict: call.verdict ?? refused(), askedInAgent };
}

/**
 * The agent ran a call the hook let through (its PostToolUse, with the same tool use id): the call's
 * end, through the audit stage, under the id its start was recorded with. A call the hook handed to
 * the agent's own prompt ran because the person said yes there: that answer (agent-answer.ts) is
 * recorded as the call's decision first, with its scope.
 */
export async function recordHookCallRan(builtin: BuiltinCall, record: CallRecord, callId: string, durationMs: number | null, answer: PersonsAnswer | null = null): Promise<void> {
  if (answer !== null) {
    const how = answer.scope === "session" ? "allowed in the agent's own prompt, with its edits for this session" : "allowed in the agent's own prompt, once";
    record.decision({ callId, argsHash: argsHash(builtin.arguments) }, builtin.name, decisionFields("forward", { gate: "approval", ruleId: answer.ruleId, policyId: null, reason: how, decidedBy: { channel: "agent_prompt", scope: answer.scope } }, how));
  }
  const call = callOf("hooks", AGENT_SOURCE, toolCallRequest(`hook-${callId}`, builtin.name, builtin.arguments), performance.now() - (durationMs ?? 0));
  call.audit = { callId, argsHash: argsHash(builtin.arguments) };
  call.status = "ok";
  call.bytesOut = 0;
  await compose<Call>([auditStage(record)], "response")(call);
}

/** What the hook answers a call that reached its end undecided: never an allow. */
function refused(): Verdict {
  return { action: "deny", gate: "governance", ruleId: null, reason: "no decision was reached", error: { code: RPC.internalError, message: "ThoughtGate reached no decision" } };
}
