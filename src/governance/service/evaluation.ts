import type { Profile } from "../../core/profile.ts";
import { log } from "../../core/log.ts";
import { placeOf, type Place } from "../../core/project.ts";
import { showInvisible } from "../../core/visible-text.ts";
import type { GovernanceMetrics } from "../../telemetry/metrics.ts";
import { redactText } from "../../telemetry/redact.ts";
import { parseTraceparent } from "../../telemetry/tracing/trace-context.ts";
import type { Attributes, Span, Tracer } from "../../telemetry/tracing/tracer.ts";
import type { EvaluateRequest, EvaluateResponse } from "../wire/api.ts";
import { approvalPrompt, previewOf } from "../verdict/approval-prompt.ts";
import { projectFileReader } from "../verdict/file-before.ts";
import type { AlwaysWriter } from "../approval/always-allow.ts";
import { decisionInput, GOVERNED_METHODS } from "../verdict/decider.ts";
import { evaluateDefinitionChange } from "./definition-evaluation.ts";
import { denyError } from "../verdict/deny-error.ts";
import { decideSafely, type EvaluateInput, type Outcome, type PolicyEngine } from "../engine/engine.ts";
import { GOVERNANCE_ERROR } from "../verdict/errors.ts";
import { recordGates } from "../engine/gate-trail.ts";
import { grantApprover, grantHolder, type SessionGrants } from "../approval/session-grants.ts";
import type { AgentPromptAsks } from "../approval/agent-prompt-answers.ts";
import { AGENT_SOURCE, shellLine, withShellReading } from "../verdict/agent-tools.ts";
import { pathsWithin } from "../engine/argument-match.ts";
import type { Task, TaskStore } from "../approval/tasks.ts";
import { SEE_ALL_AT } from "../approval/task-prompt.ts";
import type { ShellReader } from "./shell-reading.ts";

/** How often a shim should poll a pending task. */
const POLL_INTERVAL_MS = 250;


export type EvaluationOptions = {
  engine: () => PolicyEngine;
  profile: Profile;
  tasks: TaskStore;
  /** "Allow for this session" grants: a call one covers is approved without asking anyone. */
  grants: SessionGrants;
  metrics: GovernanceMetrics;
  /**
   * False when the agent is known to answer no elicitation (a non-interactive mode such as
   * `claude -p` or `codex exec`, which cancel or decline at once): no shim is offered elicitation,
   * and every approval goes to the person's other channels at once.
   */
  agentCanAsk?: boolean;
  /** A new task waits for a person; `elicitation` says whether the agent's shim is asking too. */
  onPending?: (task: Task, elicitation: boolean) => void;
  /** Piggy-backed on every answer: wrap is ending and the shim should drain. */
  shuttingDown: () => boolean;
  /** Tracing on: a span per decision, under the shim's span when the shim sent its `traceparent`. */
  tracer?: Tracer;
  /** "Always allow" (always-allow.ts): whether a task may offer it is planned when it is made. */
  always?: AlwaysWriter;
  /** The calls handed to an agent's own prompt, whose answer the agent's hook reports (agent-prompt-answers.ts); absent: none are kept. */
  agentAsks?: AgentPromptAsks;
  /** A wrap session's project: it wins over what a shim sends (docs/governance.md, "Rules that see arguments"); absent (`serve`): the shim's, else the service's own working directory's. */
  sessionProject?: string;
  /** The service's bash parser, which reads an agent's shell calls (shell-reading.ts); absent: each is denied. */
  shell?: ShellReader;
};

/**
 * Who asks: the shim channel the request came in on (`channel:<n>`), or `http` for a request
 * without one. Elicitation is offered only on a channel: its answer is relayed on that channel, for
 * that call, and nowhere else (docs/security.md, Only a person approves).
 */
export type Caller = string;
export const HTTP_CALLER: Caller = "http";
const isChannel = (caller: Caller) => caller.startsWith("channel:");

/**
 * The governance service's decision, free of HTTP: one evaluate request in, its answer out. A
 * call that needs a human becomes an approval task; every deny carries the one deny error.
 */
export function createEvaluator(options: EvaluationOptions): (request: EvaluateRequest, caller: Caller) => EvaluateResponse {
  const { tasks, metrics } = options;
  // A call's project is the one an "always … in this project" rule is kept to, and the only place a
  // prompt reads a file's old text from (file-before.ts): a wrap session has one, `serve` one per shim.
  const readers = new Map<string, ReturnType<typeof projectFileReader>>();
  const readerFor = (project: string) => {
    let reader = readers.get(project);
    if (!reader) {
      if (readers.size >= 64) readers.clear();
      reader = projectFileReader(project);
      readers.set(project, reader);
    }
    return reader;
  };
  // The engine in force is looked up per call (a reload swaps it); a failing lookup fails closed too.
  const current = { evaluate: (input: EvaluateInput) => options.engine().evaluate(input) };

  function count(response: EvaluateResponse, request: EvaluateRequest, profile: Profile): EvaluateResponse {
    metrics.countDecision(request.server_id, response.decision, profile);
    log.debug(`${request.server_id} ${request.method} ${request.name}: ${response.decision} (${response.reason})`);
    return response;
  }

  const own = placeOf(process.cwd(), options.sessionProject);
  /** The call's place: the shim's working directory, and the session's project, else the shim's, else the service's own. */
  function placeOfRequest(request: EvaluateRequest): Place {
    return { cwd: request.cwd ?? own.cwd, project: options.sessionProject ? own.project : (request.project ?? own.project), home: own.home };
  }

  return function evaluate(request: EvaluateRequest, caller: Caller): EvaluateResponse {
    const tracer = options.tracer;
    if (!tracer?.on) return respond(request, caller, undefined);
    const span = tracer.start("thoughtgate.evaluate", {
      kind: "server",
      parent: parseTraceparent(request.traceparent) ?? tracer.root,
      attributes: { "mcp.method.name": request.method, "thoughtgate.server_id": request.server_id },
    });
    const response = respond(request, caller, span);
    span.set(responseAttributes(response));
    span.end();
    return response;
  };

  function respond(request: EvaluateRequest, caller: Caller, span: Span | undefined): EvaluateResponse {
    metrics.seen(request.server_id);
    // The stricter profile wins: a shim may ask for enforcement, never opt out of it.
    const profile: Profile = options.profile === "production" || request.profile === "production" ? "production" : "development";
    const base = { gate: null, rule_id: null, policy_id: null, shutdown: options.shuttingDown() };
    if (request.direction !== "agent_to_server" || request.message_type !== "request" || !GOVERNED_METHODS.has(request.method)) {
      return count({ ...base, decision: "forward", reason: "not a governed method (forwarded and audited)" }, request, profile);
    }
    // The agent behind this shim may be put the form: it can show one, and its answer can come back
    // on the channel the call came in on.
    const canElicit = options.agentCanAsk !== false && isChannel(caller);
    if (request.definition_change) {
      let engine: PolicyEngine;
      try {
        engine = options.engine();
      } catch {
        return count({ ...base, decision: "deny", gate: "definitions", reason: "governance engine unavailable: the definition cannot be accepted" }, request, profile);
      }
      return count(evaluateDefinitionChange(request, request.definition_change, profile, engine, tasks, base, SEE_ALL_AT, { caller, canElicit }), request, profile);
    }
    const line = shellLine({ serverId: request.server_id, method: request.method, name: request.name, arguments: request.arguments });
    if (line === null) return decideCall(request, caller, span, profile, base, canElicit);
    // An agent's shell call: the gates decide on this service's reading of the line the agent gave,
    // never on one the caller sent (docs/governance.md, "Built-in tools"); the caller is told it.
    const reading = options.shell?.read(line) ?? { failed: "this governance service reads no shell commands" };
    if ("failed" in reading) {
      const block = { gate: "governance" as const, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: null, policyId: null, reason: reading.failed };
      log.error(`${request.server_id} ${request.name}: ${reading.failed}; denying (fail closed)`);
      return count({ ...base, decision: "deny", gate: "governance", reason: reading.failed, error: denyError(block, callOf(request)), shell: { unreadable: reading.failed } }, request, profile);
    }
    const read = { ...request, arguments: withShellReading(request.arguments, reading) };
    return { ...decideCall(read, caller, span, profile, base, canElicit), shell: reading.ok ? { commands: reading.commands } : { unreadable: reading.why } };
  }

  function decideCall(request: EvaluateRequest, caller: Caller, span: Span | undefined, profile: Profile, base: Base, canElicit: boolean): EvaluateResponse {
    const call = callOf(request);
    const place = placeOfRequest(request);
    const input = decisionInput({
      serverId: request.server_id,
      server: request.server,
      method: request.method,
      name: request.name,
      arguments: request.arguments,
      annotations: request.annotations,
      annotationSource: request.annotation_source,
      place,
    });
    // The agent is on to its next call: a call of its handed to its prompt earlier was answered by now.
    if (request.server_id === AGENT_SOURCE) options.agentAsks?.moveOn();
    const started = performance.now();
    const outcome = decideSafely(current, input, profile);
    recordGates(span, outcome);
    if (ranCedar(outcome)) metrics.cedarLatency.observe({}, (performance.now() - started) / 1000);
    if (outcome.kind === "forward") {
      return count(
        {
          ...base,
          decision: "forward",
          gate: outcome.gate,
          rule_id: outcome.ruleId,
          policy_id: outcome.policyId,
          reason: outcome.reason,
          ...(outcome.would ? { would: outcome.would } : {}),
          ...(outcome.autoApproved ? { auto_approved: true } : {}),
        },
        request,
        profile,
      );
    }
    if (outcome.kind === "deny") {
      const { gate, ruleId, policyId, reason } = outcome.block;
      return count({ ...base, decision: "deny", gate, rule_id: ruleId, policy_id: policyId, reason, error: denyError(outcome.block, call) }, request, profile);
    }
    const decided = { gate: "approval", rule_id: outcome.ruleId, policy_id: outcome.policyId };
    const destination = outcome.workflow.destination.type;
    // A session grant stands in for the person who made it: the call still gets its own task,
    // approved as it is made, so the shim's protocol and the audit are those of any approval. Only a
    // grant made for this very shim's call, to the same server program, counts (session-grants.ts).
    const grant = options.grants.use(request.server_id, request.method, request.name, grantHolder(request.server_id, caller), request.server, outcome.ruleId);
    // Slack adds a channel and takes none away: the agent's user may still answer (first answer wins).
    const elicit = !grant && canElicit && request.channels.includes("elicitation") && (destination === "any" || destination === "elicitation" || destination === "slack");
    const asked = {
      serverId: request.server_id,
      method: request.method,
      name: request.name,
      arguments: request.arguments ?? null,
      ...(request.annotations ? { annotations: request.annotations } : {}),
      ...(request.server ? { server: request.server } : {}),
      project: place.project,
    };
    const change = grant || request.method !== "tools/call" ? null : previewOf(asked.arguments, readerFor(asked.project));
    // An agent's hook whose agent shows a person its own permission prompt: the person is asked
    // there, once, with the same words and change; no task, so no other channel asks again
    // (docs/governance.md, "Built-in tools").
    const askAgent = !grant && canElicit && request.channels.includes("agent_prompt") && request.method === "tools/call" && (destination === "any" || destination === "elicitation" || destination === "slack");
    if (askAgent) {
      const prompt = approvalPrompt({ ...asked, ruleId: outcome.ruleId }, outcome.reason, { seeAllAt: SEE_ALL_AT, change });
      // Kept until the agent's hook says whether it ran, and in which mode (the person's answer there).
      if (request.server_id === AGENT_SOURCE && typeof request.id === "string") {
        const path = (asked.arguments as { path?: unknown } | null)?.path;
        options.agentAsks?.asked(request.id, { name: request.name, ruleId: outcome.ruleId, mode: request.agent_mode ?? null, inProject: pathsWithin(path, place.project, place) });
      }
      return count({ ...base, ...decided, decision: "ask_agent", reason: outcome.reason, prompt }, request, profile);
    }
    // Every channel offers "always" only where a rule could be written for this call.
    const alwaysRefusal = grant ? null : options.always ? options.always.plan(asked) : "this service cannot write a policy rule";
    const created = tasks.create({
      ...asked,
      ruleId: outcome.ruleId,
      workflowName: outcome.workflowName,
      workflow: outcome.workflow,
      reason: outcome.reason,
      ...(change ? { change } : {}),
      alwaysPossible: !grant && alwaysRefusal === null,
      ...(alwaysRefusal ? { alwaysRefusal } : {}),
    }, grant ? { openedBy: caller, approvedBy: { by: grantApprover(grant), reason: `allowed for this session (task ${grant.taskId}, by ${grant.grantedBy})` } } : { openedBy: caller, relay: elicit });
    if (!created.ok) {
      const reason = `too many approvals pending (${tasks.pendingCount}); denying (fail closed)`;
      log.error(reason);
      const block = { gate: "approval" as const, code: GOVERNANCE_ERROR.serviceUnavailable, ruleId: outcome.ruleId, policyId: outcome.policyId, reason };
      return count({ ...base, ...decided, decision: "deny", reason, error: denyError(block, call) }, request, profile);
    }
    const task = created.task;
    if (grant) log.info(showInvisible(redactText(`${task.serverId}.${task.name}: allowed for this session (grant of task ${grant.taskId}); task ${task.id}`)));
    else {
      log.info(showInvisible(redactText(`approval needed: task ${task.id} ${task.serverId}.${task.name} (rule ${task.ruleId ?? "-"}); thoughtgate approve ${task.id} [--session | --always [--everywhere]]`)));
      options.onPending?.(task, task.relayOffered === true);
    }
    return count(
      {
        ...base,
        ...decided,
        decision: "pending_approval",
        reason: outcome.reason,
        task_id: task.id,
        poll_interval_ms: POLL_INTERVAL_MS,
        prompt: approvalPrompt(task, outcome.reason, { seeAllAt: SEE_ALL_AT, change: task.change ?? null }),
        // Only the shim that asked, on its channel, runs the form and relays its answer.
        ...(task.relayOffered ? { shim_channels: ["elicitation" as const], always: task.alwaysPossible === true } : {}),
      },
      request,
      profile,
    );
  }
}

/** What every answer carries. */
type Base = { gate: null; rule_id: null; policy_id: null; shutdown: boolean };

/** The call a deny's error names; the JSON-RPC id ties the error to the shim's audit events, as in the in-process shim. */
function callOf(request: EvaluateRequest) {
  const correlationId = request.id === undefined || request.id === null ? Bun.randomUUIDv7() : String(request.id);
  return { serverId: request.server_id, method: request.method, name: request.name, correlationId };
}

/** The decision on the service's span; the reason redacted like every text a person may read. */
function responseAttributes(response: EvaluateResponse): Attributes {
  const attributes: Attributes = { "thoughtgate.decision": response.decision, "thoughtgate.reason": redactText(response.reason) };
  if (response.gate) attributes["thoughtgate.gate"] = response.gate;
  if (response.rule_id) attributes["thoughtgate.rule_id"] = response.rule_id;
  if (response.policy_id) attributes["thoughtgate.policy_id"] = response.policy_id;
  if (response.task_id) attributes["thoughtgate.task_id"] = response.task_id;
  if (response.would) attributes["thoughtgate.would"] = response.would;
  if (response.error) attributes["error.type"] = String(response.error.code);
  return attributes;
}

/** Whether the Cedar gate took part (for its latency histogram). */
function ranCedar(outcome: Outcome): boolean {
  if (outcome.kind === "deny") return outcome.block.gate === "cedar";
  if (outcome.kind === "forward") return outcome.gate === "cedar";
  return outcome.policyId !== null;
}
