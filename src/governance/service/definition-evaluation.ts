import type { Profile } from "../../core/profile.ts";
import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import type { DefinitionChangeWire, EvaluateRequest, EvaluateResponse } from "../wire/api.ts";
import { fromWire } from "../wire/definition-change.ts";
import { acceptancePrompt, definitionRefusal } from "../verdict/definition-acceptance.ts";
import { KIND_WORDS } from "../definitions/definition.ts";
import type { PolicyEngine } from "../engine/engine.ts";
import type { TaskStore } from "../approval/tasks.ts";

/** The method a definition's acceptance task carries (never a real MCP method). */
const ACCEPT_DEFINITION = "definitions/accept";

type Base = { gate: null; rule_id: null; policy_id: null; shutdown: boolean };

/**
 * The service's side of the definitions gate: a shim found a changed or flagged definition behind a
 * call and asks whether a person accepts it. It becomes a task like an approval (the page, the CLI,
 * Slack, the agent's prompt), bound to the digest of the served definition, under the policy's
 * `pins.approval` workflow; a timeout never accepts a definition, whatever the workflow's
 * `on_timeout`. The shim writes the pin when the task is approved and then asks about the call.
 */
/** Who asks (`caller`: its shim channel) and whether its agent may be put the form (`canElicit`). */
export type Asker = { caller: string; canElicit: boolean };

export function evaluateDefinitionChange(request: EvaluateRequest, change: DefinitionChangeWire, profile: Profile, engine: PolicyEngine, tasks: TaskStore, base: Base, seeAllAt: string, asker: Asker): EvaluateResponse {
  const settings = engine.pins(request.server_id);
  const what = `the ${KIND_WORDS[change.kind]} ${change.name} ${change.status === "changed" ? `changed its definition (${change.changed.join(", ")})` : "was flagged by the poisoning checks"}`;
  if (settings.mode !== "strict") return { ...base, decision: "forward", reason: `${what}; pin: ${settings.mode}` };
  if (profile === "development") return { ...base, decision: "forward", gate: null, reason: `WOULD_BLOCK: ${what}`, would: "WOULD_BLOCK" };
  const internal = fromWire(change);
  const call = { serverId: request.server_id, method: request.method, name: request.name, correlationId: String(request.id ?? "") };
  const destination = settings.workflow.destination.type;
  const elicit = asker.canElicit && request.channels.includes("elicitation") && (destination === "any" || destination === "elicitation" || destination === "slack");
  const created = tasks.create(
    {
      serverId: request.server_id,
      method: ACCEPT_DEFINITION,
      name: change.name,
      arguments: { kind: change.kind, served_digest: change.served_digest, pinned_digest: change.pinned_digest, changed: change.changed, findings: change.findings.map((f) => f.rule) },
      ruleId: null,
      workflowName: settings.workflowName,
      workflow: { ...settings.workflow, on_timeout: "deny" },
      reason: `${what}: accept the new definition?`,
      definition: { kind: change.kind, status: change.status, changed: change.changed, diff: change.diff, findings: change.findings },
    },
    { openedBy: asker.caller, relay: elicit },
  );
  if (!created.ok) {
    const refusal = definitionRefusal(internal, call, `too many approvals pending (${tasks.pendingCount})`);
    return { ...base, decision: "deny", gate: "definitions", reason: refusal.reason, ...(refusal.action === "deny" ? { error: refusal.error } : {}) };
  }
  const task = created.task;
  log.info(showInvisible(redactText(`definition to accept: task ${task.id} ${task.serverId}.${task.name}; thoughtgate approve ${task.id} (or thoughtgate pins accept ${task.serverId} ${task.name})`)));
  return {
    ...base,
    decision: "pending_approval",
    gate: "definitions",
    reason: what,
    task_id: task.id,
    prompt: acceptancePrompt(request.server_id, internal, { seeAllAt }),
    ...(task.relayOffered ? { shim_channels: ["elicitation" as const] } : {}),
  };
}
