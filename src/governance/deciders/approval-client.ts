import * as v from "valibot";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { errorResponse, pageLink, PERSON_HEADER, taskResponse, tasksResponse, type GrantView, type PersonAtCli, type TaskView } from "../wire/api.ts";
import type { ApprovalTarget } from "../wire/service-descriptor.ts";

/** What `thoughtgate approve` allows: this call, this tool for the session, or always (here or everywhere). */
export type ApprovalScope = { scope: "once" | "session" } | { scope: "always"; alwaysScope: "project" | "everywhere" };

/** How long `thoughtgate approve|deny|tasks` waits for the local service. */
const REQUEST_TIMEOUT_MS = 5_000;


/** The service holds no task by that id (another session may). */
class NoSuchTask extends ThoughtGateError {
  constructor(message: string) {
    super("TASK", message);
  }
}

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

  /** The tasks; like a decision, only for a person at a terminal (`person`, checked by the service: person-check.ts). */
  async list(person: PersonAtCli): Promise<TaskView[]> {
    return (await this.overview(person)).tasks;
  }

  /** The tasks and the session's "allow for this session" grants. */
  async overview(person: PersonAtCli): Promise<{ tasks: TaskView[]; grants: GrantView[] }> {
    return this.call("/approvals/api/tasks", tasksResponse, undefined, person);
  }

  /** The task `approve` or `deny` is about to decide, shown to the person first. */
  async get(id: string, person: PersonAtCli): Promise<TaskView> {
    return (await this.call(`/approvals/api/tasks/${encodeURIComponent(id)}`, taskResponse, undefined, person)).task;
  }

  /** The task, or null when this service holds none by that id. */
  async find(id: string, person: PersonAtCli): Promise<TaskView | null> {
    try {
      return await this.get(id, person);
    } catch (error) {
      if (error instanceof NoSuchTask) return null;
      throw error;
    }
  }

  /**
   * Approve (this call; with `scope: "session"` this tool on this server until the session ends;
   * with `scope: "always"` a rule in the user's policy, in this project or everywhere) or deny
   * `task`, bound to the digest of the call as it was shown to the person. `reason`: the person's own words.
   */
  async decide(task: TaskView, decision: "approve" | "deny", reason: string | undefined, scope: ApprovalScope, person: PersonAtCli): Promise<TaskView> {
    const body = { decision, digest: task.digest, scope: scope.scope, ...(scope.scope === "always" ? { always_scope: scope.alwaysScope } : {}), ...(reason !== undefined ? { reason } : {}) };
    return (await this.call(`/approvals/api/tasks/${encodeURIComponent(task.task_id)}`, taskResponse, body, person)).task;
  }

  /** The approvals page's link with its key (only for a person at a terminal: person-check.ts). */
  async pageLink(person: PersonAtCli): Promise<string> {
    return (await this.call("/approvals/api/page-link", pageLink, undefined, person)).url;
  }

  /** A one-time link to the page (`#open=<code>`, redeemed once within a minute) for a browser's command line. */
  async openLink(person: PersonAtCli): Promise<string> {
    return (await this.call("/approvals/api/open-link", pageLink, {}, person)).url;
  }

  private async call<S extends v.GenericSchema>(path: string, schema: S, body?: unknown, person?: PersonAtCli): Promise<v.InferOutput<S>> {
    let response: Response;
    try {
      response = await fetch(`${this.endpoint}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${this.key}`, ...(person ? { [PERSON_HEADER]: person } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
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
    // Who asked is not a person the service can see (person-check.ts): its one line says why.
    if (response.status === 403 && said) throw new ThoughtGateError("CONFIG", said);
    if (response.status === 404 && path.startsWith("/approvals/api/tasks/")) throw new NoSuchTask(said ?? "no such task");
    if (response.status === 409) throw new ThoughtGateError("TASK", said ?? "the task is no longer pending");
    if (!response.ok) throw new ThoughtGateError("PROTOCOL", `the governance service answered ${response.status}${said ? `: ${said}` : ""}`);
    const parsed = v.safeParse(schema, payload);
    if (!parsed.success) throw new ThoughtGateError("PROTOCOL", `the governance service sent an answer this version does not understand (${parsed.issues[0]?.message})`);
    return parsed.output;
  }
}
