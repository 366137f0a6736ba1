import { messageOf } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import type { GovernanceMetrics } from "../../telemetry/metrics.ts";
import type { Profile } from "../../core/profile.ts";
import { agentRanRequest, cancelRequest, evaluateRequest, filterRequest, heartbeatRequest, metricsReport, pinsRequest, relayRequest, unansweredRequest, type AgentRanRequest, type AgentRanResponse, type Answer, type EvaluateRequest, type EvaluateResponse } from "../wire/api.ts";
import type { PolicyEngine } from "../engine/engine.ts";
import { answer, parseValue, refusal } from "./http-guard.ts";
import type { Caller } from "./evaluation.ts";
import type { ChangeResult, Task, TaskStore } from "../approval/tasks.ts";
import type { DecideTask } from "./decide-task.ts";
import type { ShellReader } from "./shell-reading.ts";
import { shellLine } from "../verdict/agent-tools.ts";

/**
 * What a shim asks the governance service (`/governance/*`), free of its transport: the same
 * handler answers an HTTP request and a message on the shim's channel (shim-channel.ts), so both
 * decide alike. Every call here has already shown the session secret; `caller` says which shim
 * channel it came in on (`http` without one). A task is the caller's that asked for it: only that
 * caller reads it, cancels it, or relays its agent's answer to it.
 */
export type ShimApi = (method: string, path: string, body: unknown, caller: Caller) => Answer | Promise<Answer>;

export type ShimApiOptions = {
  evaluate: (request: EvaluateRequest, caller: Caller) => EvaluateResponse;
  engine: () => PolicyEngine;
  /** The service's profile: with the shim's, the stricter decides whether pins are enforced. */
  profile: Profile;
  metrics: GovernanceMetrics;
  tasks: TaskStore;
  shuttingDown: () => boolean;
  /** The agent's prompt for a task got no decision (a desktop notification, if any). */
  unanswered: (task: Task) => void;
  /** A relayed "always": its rule is written first, so it is decided after the answer (decide-task.ts). */
  decideLater: DecideTask;
  /** An agent's hook says a call it handed to the agent's prompt ran: how far the person's yes there reached (agent-prompt-answers.ts). */
  agentRan: (request: AgentRanRequest, caller: Caller) => Omit<AgentRanResponse, "shutdown">;
  /** wrap knows the agent shows its forms to a person: a form dismissed at a person's pace (Esc) is their no. */
  dismissIsNo: boolean;
  /**
   * The service traces (docs/governance.md, Traces): the heartbeat tells shims the session span they
   * hang under, and `POST /governance/spans` takes their spans (span-relay.ts).
   */
  tracing?: { traceparent: string; spans: (body: unknown) => Answer };
  /** The service's bash parser: an agent's shell call that comes before it is loaded waits for it (shell-reading.ts). */
  shell?: ShellReader;
};

const TASK_PATH = /^\/governance\/task\/([^/]+)(\/decision|\/cancel|\/unanswered)?$/;

export function shimApi(options: ShimApiOptions): ShimApi {
  const { evaluate, metrics, tasks } = options;
  const shutdown = options.shuttingDown;
  const context = () => ({ tasks, metrics, shutdown: shutdown() });

  function task(method: string, id: string, action: string | undefined, body: unknown, caller: Caller): Answer | null {
    if (action === undefined && method === "GET") {
      const found = tasks.get(id);
      if (found && !tasks.openedBy(found, caller)) return taskChange({ ok: false, error: "relay_refused", task: found }, id, context());
      return taskChange(found ? { ok: true, task: found } : { ok: false, error: "not_found" }, id, context());
    }
    if (action === "/decision" && method === "POST") {
      const parsed = parseValue(body, relayRequest);
      if (!parsed.ok) return parsed.answer;
      const { always_scope, ...decision } = parsed.value;
      if (decision.decision === "approve" && decision.scope === "always") {
        // The rule is written before the call is approved: checked now, decided when written (the shim polls).
        const checked = tasks.checkRelay(id, caller);
        if (!checked.ok) return taskChange(checked, id, context());
        if (checked.task.status !== "pending") return taskChange({ ok: false, error: "not_pending", task: checked.task }, id, context());
        if (checked.task.digest !== decision.digest) return taskChange({ ok: false, error: "digest_mismatch", task: checked.task }, id, context());
        void options.decideLater(id, { ...decision, alwaysScope: always_scope }, "elicitation");
        return taskChange(checked, id, context());
      }
      return taskChange(tasks.relay(id, caller, decision), id, context());
    }
    if (action === "/unanswered" && method === "POST") {
      const parsed = parseValue(body, unansweredRequest, {});
      if (!parsed.ok) return parsed.answer;
      const found = tasks.get(id);
      if (!found) return taskChange({ ok: false, error: "not_found" }, id, context());
      if (found.relayOffered !== true || !tasks.openedBy(found, caller)) return taskChange({ ok: false, error: "relay_refused", task: found }, id, context());
      if (found.status === "pending" && parsed.value.dismissed === true && options.dismissIsNo) {
        // Esc in an agent wrap knows to show its forms to a person: their no, at once (docs/governance.md, Approvals).
        return taskChange(tasks.decide(id, { decision: "deny", digest: found.digest, reason: "declined by the person: they dismissed the agent's prompt (Esc)" }, "elicitation"), id, context());
      }
      if (found.status === "pending") options.unanswered(found);
      return answer({ task: tasks.toView(found), shutdown: shutdown() });
    }
    if (action === "/cancel" && method === "POST") {
      const parsed = parseValue(body, cancelRequest, {});
      return parsed.ok ? taskChange(tasks.cancel(id, parsed.value.reason ?? "cancelled by the agent", caller), id, context()) : parsed.answer;
    }
    return null;
  }

  return (method, path, body, caller) => {
    if (path === "/governance/evaluate" && method === "POST") {
      const parsed = parseValue(body, evaluateRequest);
      if (!parsed.ok) return parsed.answer;
      const request = parsed.value;
      const shell = options.shell;
      if (shell && !shell.ready() && shellLine({ serverId: request.server_id, method: request.method, name: request.name, arguments: request.arguments }) !== null) {
        return shell.whenReady().then(() => answer(evaluate(request, caller)));
      }
      return answer(evaluate(request, caller));
    }
    if (path === "/governance/agent-ran" && method === "POST") {
      const parsed = parseValue(body, agentRanRequest);
      return parsed.ok ? answer({ ...options.agentRan(parsed.value, caller), shutdown: shutdown() }) : parsed.answer;
    }
    if (path === "/governance/pins" && method === "POST") {
      const parsed = parseValue(body, pinsRequest);
      if (!parsed.ok) return parsed.answer;
      const { mode, blockSeverity } = options.engine().pins(parsed.value.server_id);
      const enforce = options.profile === "production" || parsed.value.profile === "production";
      return answer({ mode, block_severity: blockSeverity, enforce, shutdown: shutdown() });
    }
    if (path === "/governance/heartbeat" && method === "POST") {
      const parsed = parseValue(body, heartbeatRequest);
      if (!parsed.ok) return parsed.answer;
      metrics.seen(parsed.value.server_id);
      // The server's secret scanning settings ride on the heartbeat (the shim asks once before its first message).
      const tracing = options.tracing ? { tracing: { traceparent: options.tracing.traceparent } } : {};
      const engine = options.engine();
      return answer({ shutdown: shutdown(), secrets: engine.secretScan(parsed.value.server_id), audit_arguments: engine.auditArguments() ? "redacted" : "hash", ...tracing });
    }
    if (path === "/governance/filter" && method === "POST") {
      const parsed = parseValue(body, filterRequest);
      if (!parsed.ok) return parsed.answer;
      const { server_id, kind, names } = parsed.value;
      metrics.seen(server_id);
      let visible: string[];
      try {
        visible = options.engine().visibility.filter(server_id, kind, names);
      } catch (error) {
        log.error(`visibility filter failed (showing nothing, fail closed): ${messageOf(error)}`);
        visible = [];
      }
      return answer({ visible, shutdown: shutdown() });
    }
    if (path === "/governance/spans" && method === "POST") {
      return options.tracing ? options.tracing.spans(body) : refusal(404, "not_found", "this governance service does not trace (no telemetry.otlp in its policy)");
    }
    if (path === "/governance/events" && method === "POST") {
      const parsed = parseValue(body, metricsReport);
      if (!parsed.ok) return parsed.answer;
      const report = parsed.value;
      metrics.seen(report.server_id);
      for (const m of report.messages) metrics.countMessages(report.server_id, m.direction, m.method, m.count);
      for (const f of report.framing_errors) metrics.countFramingErrors(report.server_id, f.error_type, f.count);
      if (report.server_state) metrics.setServerState(report.server_id, report.server_state);
      return answer({ shutdown: shutdown() });
    }
    const match = TASK_PATH.exec(path);
    const handled = match ? task(method, safeDecode(match[1] ?? ""), match[2], body, caller) : null;
    return handled ?? refusal(404, "not_found", `no such endpoint: ${method} ${path}`);
  };
}

/** A task's answer after a change (or a look), or the refusal that says why not. */
export function taskChange(result: ChangeResult, id: string, context: { tasks: TaskStore; metrics: GovernanceMetrics; shutdown: boolean }): Answer {
  if (result.ok) return answer({ task: context.tasks.toView(result.task), shutdown: context.shutdown });
  if (result.error === "not_found") return refusal(404, "not_found", `no task ${id} (unknown, or finished long ago)`);
  if (result.error === "relay_refused") {
    context.metrics.unauthorized.inc();
    return refusal(401, "unauthorized", `task ${id} is not this shim's: only the shim whose call it is, on its own channel, reads it, cancels it or relays its agent's answer`);
  }
  if (result.error === "not_pending") return refusal(409, "not_pending", `task ${id} is already ${result.task.status.replace("_", " ")}`);
  return refusal(409, "digest_mismatch", `task ${id}: the decision names a different call than the task (digest mismatch); refused`);
}

/** A task id from a path; a malformed escape names no task. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
