import * as v from "valibot";
import { messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV, errorResponse, taskResponse, tasksResponse, type TaskView } from "./api.ts";

/** How long `thoughtgate approve|deny|tasks` waits for the local service. */
const REQUEST_TIMEOUT_MS = 5_000;

export type ApprovalClientOptions = { endpoint: string | undefined; key: string | undefined; env?: NodeJS.ProcessEnv };

/**
 * A person's side of the approval API (`thoughtgate approve|deny|tasks`): the running service's
 * endpoint and the approval key it printed, from flags or the environment. Every failure is a
 * one-line ThoughtGateError saying what to do.
 */
export class ApprovalClient {
  readonly endpoint: string;
  private readonly key: string;

  constructor(options: ApprovalClientOptions) {
    const env = options.env ?? process.env;
    const endpoint = options.endpoint ?? env[ENDPOINT_ENV];
    const key = options.key ?? env[APPROVAL_KEY_ENV];
    if (!endpoint) throw usageError(`no governance service given: set ${ENDPOINT_ENV} or pass --endpoint (\`thoughtgate serve\` prints both)`);
    if (!key) throw usageError(`no approval key given: set ${APPROVAL_KEY_ENV} or pass --key (\`thoughtgate serve\` prints it)`);
    this.endpoint = endpoint.replace(/\/+$/, "");
    this.key = key;
  }

  async list(): Promise<TaskView[]> {
    return (await this.call("/approvals/api/tasks", tasksResponse)).tasks;
  }

  async get(id: string): Promise<TaskView> {
    return (await this.call(`/approvals/api/tasks/${encodeURIComponent(id)}`, taskResponse)).task;
  }

  /** Approve or deny, bound to the digest of the call as the service shows it now. */
  async decide(id: string, decision: "approve" | "deny", reason: string | undefined): Promise<TaskView> {
    const task = await this.get(id);
    if (task.status !== "pending") throw new ThoughtGateError("TASK", `task ${id} is already ${task.status.replace("_", " ")}`);
    const body = { decision, channel: "cli", digest: task.digest, ...(reason !== undefined ? { reason } : {}) };
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
      throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `cannot reach the governance service at ${this.endpoint} (${messageOf(error)}); is \`thoughtgate serve\` running?`);
    }
    const payload: unknown = await response.json().catch(() => null);
    const said = v.is(errorResponse, payload) ? payload.error : undefined;
    if (response.status === 401) {
      throw new ThoughtGateError("CONFIG", `the governance service at ${this.endpoint} refused the approval key (wrong key, or the service restarted: use the ${APPROVAL_KEY_ENV} it printed)`);
    }
    if (response.status === 404 && path.startsWith("/approvals/api/tasks/")) throw new ThoughtGateError("TASK", said ?? "no such task");
    if (response.status === 409) throw new ThoughtGateError("TASK", said ?? "the task is no longer pending");
    if (!response.ok) throw new ThoughtGateError("PROTOCOL", `the governance service answered ${response.status}${said ? `: ${said}` : ""}`);
    const parsed = v.safeParse(schema, payload);
    if (!parsed.success) throw new ThoughtGateError("PROTOCOL", `the governance service sent an answer this version does not understand (${parsed.issues[0]?.message})`);
    return parsed.output;
  }
}
