import { defineCommand, type ArgsDef } from "citty";
import { EXIT } from "../core/errors.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV, type TaskView } from "../governance/api.ts";
import { ApprovalClient } from "../governance/approval-client.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

/** Where the running service is: `thoughtgate serve` prints both values. */
export const serviceArgs = {
  endpoint: { type: "string", description: `The governance service (default $${ENDPOINT_ENV})`, valueHint: "URL" },
  key: { type: "string", description: `The approval key it printed (default $${APPROVAL_KEY_ENV})`, valueHint: "KEY" },
} as const satisfies ArgsDef;

export function clientFrom(parsed: { endpoint?: string | undefined; key?: string | undefined }): ApprovalClient {
  return new ApprovalClient({ endpoint: parsed.endpoint, key: parsed.key });
}

/** `thoughtgate approve` and `thoughtgate deny`: the same command but for the verdict. */
export function decisionCommand(decision: "approve" | "deny") {
  const args = {
    "task-id": { type: "positional", required: true, description: "The task, as `thoughtgate tasks` or the service's log shows it" },
    reason: { type: "string", description: "Why (kept with the task)", valueHint: "TEXT" },
    ...serviceArgs,
    ...commonArgs,
  } as const satisfies ArgsDef;
  return defineCommand({
    meta: { name: decision, description: `${decision === "approve" ? "Approve" : "Deny"} a call waiting for approval in a running governance service` },
    args,
    async run({ rawArgs, args: parsed }) {
      rejectUnknownFlags(rawArgs, args);
      const task = await clientFrom(parsed).decide(parsed["task-id"], decision, parsed.reason);
      await Bun.write(Bun.stdout, `${task.status} ${task.task_id}: ${callLabel(task)}\n`);
      return EXIT.ok;
    },
  });
}

/** `github.delete_repo`, or `fs resources/read file:///x` for other methods; control characters shown escaped. */
export function callLabel(task: Pick<TaskView, "server_id" | "method" | "name">): string {
  const label = task.method === "tools/call" ? `${task.server_id}.${task.name}` : `${task.server_id} ${task.method} ${task.name}`;
  return printable(label);
}

/**
 * Names and arguments come from agents and servers: an escape sequence in them must not drive the
 * user's terminal, so control characters are printed as JSON escapes.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
