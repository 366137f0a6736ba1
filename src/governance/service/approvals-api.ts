import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import { decisionRequest, type DecisionRequest } from "../wire/api.ts";
import type { AlwaysResult } from "../approval/always-allow.ts";
import { failure, json, parseBody } from "./http-guard.ts";
import type { SessionGrants } from "../approval/session-grants.ts";
import type { Channel, ChangeResult, Task, TaskStore } from "../approval/tasks.ts";

export type ApprovalsApiOptions = {
  tasks: TaskStore;
  grants: SessionGrants;
  /** "Always allow" (src/governance/approval/always-allow.ts); absent: refused as not possible here. */
  alwaysAllow?: (task: Task) => Promise<AlwaysResult>;
  /** The service's answer for a task change (the task view, or the error it maps to). */
  changed(result: ChangeResult, id: string): Response;
};

/**
 * `/approvals/api/*`: what people call, from the page (page key, channel web) or `thoughtgate
 * approve|deny|tasks` (CLI key, channel cli); the caller has checked the key. Tasks and the
 * session's grants, a decision with its scope, and revoking a grant.
 */
export function approvalsApi(options: ApprovalsApiOptions): (request: Request, path: string, channel: Channel) => Promise<Response> {
  const { tasks, grants, changed } = options;

  /**
   * A person's decision. `always` comes only from the approvals page: it writes a rule into the
   * user's policy file first, and the call is approved only once that is done.
   */
  async function decide(id: string, decision: DecisionRequest, channel: Channel): Promise<Response> {
    if (decision.decision === "deny" || decision.scope !== "always") return changed(tasks.decide(id, decision, channel), id);
    if (channel !== "web") return failure(403, "forbidden", "only the approvals page can always allow a tool (it writes your policy file); approve once or for this session here");
    const found = tasks.get(id);
    if (!found) return changed({ ok: false, error: "not_found" }, id);
    if (found.definition) return failure(409, "not_possible", "a definition is accepted as it is shown (it becomes the pin): accept it once");
    if (found.status !== "pending") return changed({ ok: false, error: "not_pending", task: found }, id);
    if (found.digest !== decision.digest) return changed({ ok: false, error: "digest_mismatch", task: found }, id);
    if (!options.alwaysAllow) return failure(409, "not_possible", "this service cannot write a policy rule; approve once or for this session");
    const written = await options.alwaysAllow(found);
    if (!written.ok) return failure(409, "not_possible", written.reason);
    return changed(tasks.decide(id, { ...decision, reason: decision.reason ?? written.note }, channel), id);
  }

  return async (request, path, channel) => {
    if (path === "/approvals/api/tasks" && request.method === "GET") {
      return json({ tasks: tasks.list().map((t) => tasks.toView(t)), grants: grants.list().map((g) => grants.toView(g)) });
    }
    const task = /^\/approvals\/api\/tasks\/([^/]+)$/.exec(path);
    if (task) {
      const id = decodeURIComponent(task[1] ?? "");
      if (request.method === "GET") {
        const found = tasks.get(id);
        return changed(found ? { ok: true, task: found } : { ok: false, error: "not_found" }, id);
      }
      if (request.method === "POST") {
        const body = await parseBody(request, decisionRequest);
        return body.ok ? decide(id, body.value, channel) : body.response;
      }
    }
    const grant = /^\/approvals\/api\/grants\/([^/]+)\/revoke$/.exec(path);
    if (grant && request.method === "POST") {
      const revoked = grants.revoke(decodeURIComponent(grant[1] ?? ""));
      if (!revoked) return failure(404, "not_found", "no such session grant (revoked already, or the session ended)");
      log.info(showInvisible(redactText(`session grant of ${revoked.serverId}.${revoked.name} (task ${revoked.taskId}) revoked by ${channel}`)));
      return json({ grant: grants.toView(revoked) });
    }
    return failure(404, "not_found", `no such endpoint: ${request.method} ${path}`);
  };
}
