import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import { decisionRequest, openRequest, type DecisionRequest, type PageLink, type SessionView } from "../wire/api.ts";
import { newSecret } from "../wire/secrets.ts";
import { failure, json, parseBody } from "./http-guard.ts";
import type { SessionGrants } from "../approval/session-grants.ts";
import type { Channel, ChangeResult, TaskStore } from "../approval/tasks.ts";
import type { DecideTask } from "./decide-task.ts";

export type ApprovalsApiOptions = {
  tasks: TaskStore;
  grants: SessionGrants;
  /** The approvals page's address (`…/approvals`) and its key (the link people open is `url#key=…`). */
  page: () => { url: string; key: string };
  /** Every channel's decision (decide-task.ts): "always" writes its rule first. */
  decide: DecideTask;
  /** Who the page and the CLI are: the local user the service runs as (docs/events.md, `decided_by.who`), when known. */
  who?: string;
  /** The service's answer for a task change (the task view, or the error it maps to). */
  changed(result: ChangeResult, id: string): Response;
  /** The session this service serves, as the page's header and cards name it. */
  session?: SessionView;
};

/** How long the one-time link `thoughtgate approvals --open` opens may be redeemed. */
const OPEN_LINK_MS = 60_000;

/**
 * `/approvals/api/*`: what people call, from the page (page key, channel web) or `thoughtgate
 * approve|deny|tasks|approvals` (CLI key, channel cli); the caller has checked the key and who sent
 * it (person-check.ts). Tasks and the session's grants, a decision with its scope, revoking a
 * grant, and the page's link for the CLI.
 */
export function approvalsApi(options: ApprovalsApiOptions): {
  handle: (request: Request, path: string, channel: Channel) => Promise<Response>;
  /** `POST /approvals/api/open` (no key): a one-time link's code for the page key, once. */
  redeem: (request: Request) => Promise<Response>;
} {
  const { tasks, grants, changed } = options;
  // One-time codes for `approvals --open`: the browser opener's command line (readable by every
  // local user) carries one of these, never the page key.
  const openCodes = new Map<string, number>();

  /** A person's decision on the page or with `thoughtgate approve|deny`, their reason kept as their own words. */
  async function decide(id: string, decision: DecisionRequest, channel: Channel): Promise<Response> {
    const { reason, always_scope, ...rest } = decision;
    const result = await options.decide(id, { ...rest, alwaysScope: always_scope, ...(options.who ? { who: options.who } : {}), ...(reason !== undefined ? { personReason: reason } : {}) }, channel);
    if (!result.ok && result.error === "not_possible") return failure(409, "not_possible", result.reason);
    return changed(result, id);
  }

  async function redeem(request: Request): Promise<Response> {
    const body = await parseBody(request, openRequest);
    if (!body.ok) return body.response;
    const now = Date.now();
    for (const [code, expires] of openCodes) if (expires <= now) openCodes.delete(code);
    if (!openCodes.delete(body.value.code)) return failure(401, "unauthorized", "this approvals link was used already or is too old: run thoughtgate approvals again");
    return json({ key: options.page().key });
  }

  const handle = async (request: Request, path: string, channel: Channel): Promise<Response> => {
    if (path === "/approvals/api/page-link" && request.method === "GET") return json({ url: `${options.page().url}#key=${options.page().key}` } satisfies PageLink);
    if (path === "/approvals/api/open-link" && request.method === "POST") {
      const code = newSecret();
      openCodes.set(code, Date.now() + OPEN_LINK_MS);
      return json({ url: `${options.page().url}#open=${code}` } satisfies PageLink);
    }
    if (path === "/approvals/api/tasks" && request.method === "GET") {
      return json({ tasks: tasks.list().map((t) => tasks.toView(t)), grants: grants.list().map((g) => grants.toView(g)), ...(options.session ? { session: options.session } : {}) });
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
  return { handle, redeem };
}
