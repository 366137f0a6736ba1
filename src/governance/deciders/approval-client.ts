import * as v from "valibot";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { errorResponse, taskResponse, tasksResponse, type GrantView, type TaskView } from "../wire/api.ts";
import type { ApprovalTarget } from "../wire/service-descriptor.ts";

/** What `thoughtgate approve` allows: this call, this tool for the session, or always (here or everywhere). */
export type ApprovalScope = { scope: "once" | "session" } | { scope: "always"; alwaysScope: "project" | "everywhere" };

/** How long `thoughtgate approve|deny|tasks` waits for the local service. */
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * A person's side of the approval API (`thoughtgate approve|deny|tasks`): the running service's
 * endpoint and its CLI key (src/governance/wire/service-descriptor.ts finds them). The service records
 * what this client decides as channel cli, from the key. Every failure is a one-line
 * ThoughtGateError saying what to do.
 */
export class ApprovalClient {
  readonly endpoint: string;
  private readonly key: string;

  constructor(target: ApprovalTarget) {
    this.endpoint = target.endpoint.replace(/\/+$/, "");
    this.key = target.key;
  }

  async list(): Promise<TaskView[]> {
    return (await this.call("/approvals/api/tasks", tasksResponse)).tasks;
  }

  /** The tasks and the session's "allow for this session" grants. */
  async overview(): Promise<{ tasks: TaskView[]; grants: GrantView[] }> {
    return this.call("/approvals/api/tasks", tasksResponse);
  }

  async get(id: string): Promise<TaskView> {
    return (await this.call(`/approvals/api/tasks/${encodeURIComponent(id)}`, taskResponse)).task;
  }

  /**
   * Approve (this call; with `scope: "session"` this tool on this server until the session ends;
   * with `scope: "always"` a rule in the user's policy, in this project or everywhere) or deny,
   * bound to the digest of the call as the service shows it now. `reason`: the person's own words.
   */
  async decide(id: string, decision: "approve" | "deny", reason: string | undefined, scope: ApprovalScope = { scope: "once" }): Promise<TaskView> {
    const task = await this.get(id);
    if (task.status !== "pending") throw new ThoughtGateError("TASK", `task ${id} is already ${task.status.replace("_", " ")}`);
    const body = { decision, digest: task.digest, scope: scope.scope, ...(scope.scope === "always" ? { always_scope: scope.alwaysScope } : {}), ...(reason !== undefined ? { reason } : {}) };
    return (await this.call(`/approvals/api/tasks/${encodeURIComponent(id)}`, taskResponse, body)).task;
  }

  private async call<S extends v.GenericSchema>(path: string, schema: S, body?: unknown): Promise<v.InferOutput<S>> {
    let response: Response;
    try {
      response = await fetch(`${this.endpoint}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${this.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `cannot reach the governance service at ${this.endpoint} (${messageOf(error)}); is its \`thoughtgate wrap\` or \`thoughtgate serve\` still running?`);
    }
    const payload: unknown = await response.json().catch(() => null);
    const said = v.is(errorResponse, payload) ? payload.error : undefined;
    if (response.status === 401) {
      throw new ThoughtGateError("CONFIG", `the governance service at ${this.endpoint} refused the approval key (wrong key, or the service restarted; without --key, tasks|approve|deny find a running service's key themselves)`);
    }
    if (response.status === 404 && path.startsWith("/approvals/api/tasks/")) throw new ThoughtGateError("TASK", said ?? "no such task");
    if (response.status === 409) throw new ThoughtGateError("TASK", said ?? "the task is no longer pending");
    if (!response.ok) throw new ThoughtGateError("PROTOCOL", `the governance service answered ${response.status}${said ? `: ${said}` : ""}`);
    const parsed = v.safeParse(schema, payload);
    if (!parsed.success) throw new ThoughtGateError("PROTOCOL", `the governance service sent an answer this version does not understand (${parsed.issues[0]?.message})`);
    return parsed.output;
  }
}
