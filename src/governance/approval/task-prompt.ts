import { acceptancePrompt, type DefinitionChange } from "../verdict/definition-acceptance.ts";
import type { Task } from "./tasks.ts";

/** Where a person reads a whole call whose prompt had to be shortened. */
export const SEE_ALL_AT = "the approvals page, or `thoughtgate tasks --json`";

/** What a person is asked for a definition task (Slack shows it; the shim's elicitation got the same). */
export function definitionTaskPrompt(task: Pick<Task, "serverId" | "name" | "arguments" | "definition">, seeAllAt: string): string | null {
  const d = task.definition;
  if (!d) return null;
  const args = (task.arguments ?? {}) as { served_digest?: unknown; pinned_digest?: unknown };
  const kind = d.kind === "prompt" || d.kind === "resource_template" ? d.kind : "tool";
  const change: DefinitionChange = {
    kind,
    name: task.name,
    status: d.status === "flagged" ? "flagged" : "changed",
    changed: d.changed,
    pinnedDigest: typeof args.pinned_digest === "string" ? args.pinned_digest : null,
    servedDigest: typeof args.served_digest === "string" ? args.served_digest : "",
    diff: d.diff,
    findings: d.findings,
  };
  return acceptancePrompt(task.serverId, change, { seeAllAt });
}
