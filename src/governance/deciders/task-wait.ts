import type * as v from "valibot";
import { messageOf } from "../../core/errors.ts";
import { log, type Logger } from "../../core/log.ts";
import type { JsonRpcRequest } from "../../core/jsonrpc.ts";
import { taskResponse, type EvaluateResponse, type TaskView } from "../wire/api.ts";
import { callRef, DECISION_CHANNELS, type DecidedBy, type DecisionContext, type Verdict } from "../verdict/decider.ts";
import { deniedVerdict } from "../verdict/deny-error.ts";
import { ASK_AGAIN, GOVERNANCE_ERROR } from "../verdict/errors.ts";
import { SESSION_GRANT_PREFIX, type Answer } from "../wire/api.ts";

/**
 * A shim waiting on an approval task of the governance service (docs/governance.md, Approvals):
 * the channels the service hands to the shim (elicitation through the agent, its answer relayed
 * on the shim's own channel, the only place the service takes it from), the task polled until a person decides, it times out or the agent
 * cancels, and the task's end turned into the call's verdict. Whatever cannot be read from the
 * service ends the wait as `service.unavailable` says (fail closed).
 */

/** What the wait needs from the shim's side of the service (remote-decider.ts). */
export type ServiceCalls = {
  serverId: string;
  log: Logger;
  json<S extends v.GenericSchema>(method: "GET" | "POST", path: string, body: unknown, schema: S, timeoutMs: number): Promise<v.InferOutput<S>>;
  call(method: "GET" | "POST", path: string, body: unknown, timeoutMs: number): Promise<Answer>;
  /** The service said it is shutting down. */
  requestStop(reason: string): void;
  /** The verdict when the service cannot be read (deny in production). */
  unavailable(request: JsonRpcRequest, reason: string): Verdict;
};

export const REQUEST_TIMEOUT_MS = 2_000;
const POLL_TIMEOUT_MS = 5_000;

export function isOk(answer: Answer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/**
 * Wait for the task: run the channels the service handed to the shim (elicitation) and poll the
 * task until someone decides, it times out, or the agent cancels the call.
 */
export async function awaitApproval(
  service: ServiceCalls,
  answer: EvaluateResponse,
  taskId: string,
  request: JsonRpcRequest,
  signal: AbortSignal,
  context: DecisionContext,
  prompt: string,
): Promise<Verdict> {
  const path = `/governance/task/${encodeURIComponent(taskId)}`;
  const done = new AbortController();
  const onCancel = () => {
    void service.call("POST", `${path}/cancel`, { reason: "the agent cancelled the request" }, REQUEST_TIMEOUT_MS).catch(() => {});
  };
  signal.addEventListener("abort", onCancel, { once: true });
  try {
    if (answer.shim_channels?.includes("elicitation") && context.elicit) {
      const ask = context.elicit;
      const purpose = context.definitionChange ? "definition" : "call";
      const offered = { always: answer.always === true && purpose === "call" };
      void elicitFor(service, path, prompt, (message, aborted) => ask(message, aborted, purpose, offered), AbortSignal.any([signal, done.signal]));
    }
    const interval = Math.max(50, answer.poll_interval_ms ?? 250);
    for (;;) {
      if (signal.aborted) return blocked(service, request, answer, GOVERNANCE_ERROR.taskCancelled, "cancelled by the agent");
      let task: TaskView;
      try {
        const polled = await service.json("GET", path, undefined, taskResponse, POLL_TIMEOUT_MS);
        if (polled.shutdown) service.requestStop("the governance service is shutting down");
        task = polled.task;
      } catch (error) {
        return service.unavailable(request, `lost the governance service while waiting for approval: ${messageOf(error)}`);
      }
      if (task.status !== "pending") return settled(service, task, request, answer);
      await Bun.sleep(interval);
    }
  } finally {
    done.abort();
    signal.removeEventListener("abort", onCancel);
  }
}

/** Ask the agent's user, then relay the answer on this shim's channel (the session secret alone decides nothing). */
async function elicitFor(service: ServiceCalls, path: string, prompt: string, elicit: NonNullable<DecisionContext["elicit"]>, signal: AbortSignal): Promise<void> {
  try {
    const outcome = await elicit(prompt, signal);
    if (outcome.kind === "unanswered" || outcome.kind === "dismissed") {
      // The agent answered for no one, or the person dismissed the form: the service decides what
      // that is (a dismissal is a no where wrap knows the agent shows its forms to a person);
      // otherwise the task stays pending for the page, the CLI, Slack, until its timeout, and the
      // service tells the person at once (a desktop notification) rather than waiting.
      const dismissed = outcome.kind === "dismissed";
      if (!dismissed) service.log.warn("the agent answered the approval form without asking anyone; waiting for the approvals page or `thoughtgate approve`");
      const reason = dismissed ? "the agent's prompt was dismissed (Esc)" : "the agent answered the approval form without showing it";
      await service.call("POST", `${path}/unanswered`, { reason, ...(dismissed ? { dismissed: true } : {}) }, REQUEST_TIMEOUT_MS).catch(() => undefined);
      return;
    }
    const { task } = await service.json("GET", path, undefined, taskResponse, POLL_TIMEOUT_MS);
    if (task.status !== "pending") return;
    const decision =
      outcome.kind === "declined"
        ? { decision: "deny" }
        : { decision: "approve", scope: outcome.scope, ...(outcome.scope === "always" ? { always_scope: outcome.alwaysScope } : {}) };
    const relayed = await service.call("POST", `${path}/decision`, { ...decision, digest: task.digest }, REQUEST_TIMEOUT_MS);
    if (!isOk(relayed) && relayed.status !== 409) log.warn(`the governance service refused the elicitation answer: HTTP ${relayed.status} (other channels still apply)`);
  } catch (error) {
    if (!signal.aborted) log.warn(`approval through the agent failed: ${messageOf(error)} (other channels still apply)`);
  }
}

function settled(service: ServiceCalls, task: TaskView, request: JsonRpcRequest, answer: EvaluateResponse): Verdict {
  const by = task.decided_by ?? "unknown";
  const person = personOf(task);
  switch (task.status) {
    case "approved":
      return { action: "forward", gate: "approval", ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: approved (${by})`, approvedBy: by, ...person };
    case "timed_out":
      if (task.timeout_outcome === "approve") {
        return { action: "forward", gate: "approval", ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: approved by on_timeout`, approvedBy: "timeout", decidedBy: { channel: "timeout" } };
      }
      return { ...blocked(service, request, answer, GOVERNANCE_ERROR.approvalTimeout, `no answer before the approval timed out; ${ASK_AGAIN}`), decidedBy: { channel: "timeout" } };
    case "expired":
      return blocked(service, request, answer, GOVERNANCE_ERROR.taskExpired, "the approval task expired");
    case "cancelled":
      return blocked(service, request, answer, GOVERNANCE_ERROR.taskCancelled, "the approval task was cancelled");
    default:
      return { ...blocked(service, request, answer, GOVERNANCE_ERROR.approvalRejected, `rejected ${rejectedBy(task)}`, task.person_reason), ...person };
  }
}

/** Who decided the task and their words, for the audit (docs/events.md, `decided_by`, `person_reason`). */
function personOf(task: TaskView): Pick<Verdict, "decidedBy" | "personReason"> {
  const decidedBy = decidedByOf(task);
  return { ...(decidedBy ? { decidedBy } : {}), ...(task.person_reason !== undefined ? { personReason: task.person_reason } : {}) };
}

function decidedByOf(task: TaskView): DecidedBy | undefined {
  const by = task.decided_by;
  if (by === undefined) return undefined;
  if (by.startsWith(SESSION_GRANT_PREFIX)) return { channel: "session_grant", scope: "session" };
  const channel = DECISION_CHANNELS.find((known) => known === by);
  if (channel === undefined) return undefined;
  // How far a yes reaches; a no reaches this call only and says nothing of scope.
  const scope = task.status === "approved" ? (task.scope ?? "once") : undefined;
  return { channel, ...(task.decided_by_who !== undefined ? { who: task.decided_by_who } : {}), ...(scope ? { scope } : {}) };
}

/** `by the person in the agent's prompt`, `in Slack by U0LEAD`, … */
function rejectedBy(task: TaskView): string {
  const who = task.decided_by_who;
  switch (task.decided_by) {
    case "elicitation":
      return "by the person in the agent's prompt";
    case "web":
      return `on the approvals page${who ? ` by ${who}` : ""}`;
    case "cli":
      return `with thoughtgate deny${who ? ` by ${who}` : ""}`;
    case "desktop":
      return "from a desktop notification";
    case "slack":
      return `in Slack${who ? ` by ${who}` : ""}`;
    default:
      return `(${task.decided_by ?? "unknown"})`;
  }
}

function blocked(service: ServiceCalls, request: JsonRpcRequest, answer: EvaluateResponse, code: number, why: string, personReason?: string): Verdict {
  const block = { gate: "approval" as const, code, ruleId: answer.rule_id, policyId: answer.policy_id, reason: `${answer.reason}: ${why}` };
  return deniedVerdict(block, callRef(request, service.serverId), answer.task_id, personReason);
}
