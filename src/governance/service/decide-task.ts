import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import type { AlwaysWriter } from "../approval/always-allow.ts";
import type { Channel, TaskAnswer, DecideResult, Task, TaskStore } from "../approval/tasks.ts";

export type DecideTask = (id: string, decision: TaskAnswer, channel: Channel) => Promise<DecideResult>;

/** How the rule's comment says who chose "always". */
const CHOSEN: Record<Channel, string> = {
  web: "on the approvals page",
  cli: "with thoughtgate approve",
  elicitation: "in the agent's prompt",
  desktop: "from a desktop notification",
  slack: "in Slack",
};

/**
 * Every channel's decision goes through here (docs/governance.md, "What an approval covers"): once,
 * for the session and deny straight to the task store; "always" writes its rule into the user's
 * policy first (always-allow.ts), and the call is approved only once that is done. An "always" that
 * cannot be written leaves the task waiting, and says why.
 */
export function taskDecider(tasks: Pick<TaskStore, "get" | "decide">, always: AlwaysWriter | undefined): DecideTask {
  return async (id, decision, channel) => {
    if (decision.decision === "deny" || decision.scope !== "always") return tasks.decide(id, decision, channel);
    const found = tasks.get(id);
    if (!found) return { ok: false, error: "not_found" };
    if (found.status !== "pending") return { ok: false, error: "not_pending", task: found };
    if (found.digest !== decision.digest) return { ok: false, error: "digest_mismatch", task: found };
    if (found.definition) return notPossible(found, "a definition is accepted as it is shown (it becomes the pin): accept it once");
    if (!always) return notPossible(found, "this service cannot write a policy rule; approve once or for this session");
    const alwaysScope = decision.alwaysScope ?? "project";
    const by = channel === "slack" && decision.who ? `in Slack by ${decision.who}` : CHOSEN[channel];
    const written = await always.write(found, { alwaysScope, by });
    if (!written.ok) return notPossible(found, written.reason);
    return tasks.decide(id, { ...decision, alwaysScope, reason: decision.reason ?? written.note }, channel);
  };
}

/**
 * For a channel that cannot show the person an error once they have answered (the agent's form, a
 * desktop notification): an "always" that cannot be written approves this one call, which the
 * person's answer covers anyway, and the outcome says so (in the task, the audit and the log). The
 * form and the notification offer "always" only where it was possible when the task was made, so
 * this is the rare case of the policy file changing meanwhile.
 */
export function decideOrOnce(decide: DecideTask): DecideTask {
  return async (id, decision, channel) => {
    const result = await decide(id, decision, channel);
    if (result.ok || result.error !== "not_possible") return result;
    const note = `always allow was not possible (${result.reason}); approved once`;
    log.warn(showInvisible(redactText(`approval task ${id}: ${note}`)));
    return decide(id, { ...decision, scope: "once", reason: note }, channel);
  };
}

function notPossible(task: Task, reason: string): DecideResult {
  return { ok: false, error: "not_possible", reason, task };
}
