import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import { decisionRequest, type DecisionRequest } from "../wire/api.ts";
import { failure, json, parseBody } from "./http-guard.ts";
import type { SessionGrants } from "../approval/session-grants.ts";
import type { Channel, ChangeResult, TaskStore } from "../approval/tasks.ts";
import type { DecideTask } from "./decide-task.ts";

export type ApprovalsApiOptions = {
  tasks: TaskStore;
  grants: SessionGrants;
  /** Every channel's decision (decide-task.ts): "always" writes its rule first. */
  decide: DecideTask;
  /** Who the page and the CLI are: the local user the service runs as (docs/events.md, `decided_by.who`), when known. */
  who?: string;
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

  /** A person's decision on the page or with `thoughtgate approve|deny`, their reason kept as their own words. */
  async function decide(id: string, decision: DecisionRequest, channel: Channel): Promise<Response> {
    const { reason, always_scope, ...rest } = decision;
    const result = await options.decide(id, { ...rest, alwaysScope: always_scope, ...(options.who ? { who: options.who } : {}), ...(reason !== undefined ? { personReason: reason } : {}) }, channel);
    if (!result.ok && result.error === "not_possible") return failure(409, "not_possible", result.reason);
    return changed(result, id);
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
