import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import type { ServerProgram } from "./decider.ts";

/**
 * "Always allow this tool on this server" as a decision needs it, whoever writes the rule (the
 * governance service, or a standalone shim: governance/approval/always-allow.ts implements it).
 */

/** Rules "always allow" writes are named `always-allow-<server>-<tool>`: a forward by one is a person's earlier decision (docs/events.md, `always_rule`). */
export const ALWAYS_RULE_PREFIX = "always-allow-";

/** The call an "always" rule is written for, with the project it was made in (the rule's `project:`). */
export type AlwaysCall = {
  /** The task (or call) the rule's comment names. */
  id: string;
  serverId: string;
  method: string;
  name: string;
  arguments: unknown;
  annotations?: ToolAnnotations | undefined;
  /** What runs the server, as its shim said: the rule names it (a call whose shim named none is refused "always"). */
  server?: ServerProgram | undefined;
  project?: string | undefined;
};

/** How far the rule reaches, and who chose it (for the comment above it: "on the approvals page", "in Slack by U…"). */
export type AlwaysHow = { alwaysScope: "project" | "everywhere"; by: string };

export type AlwaysResult = { ok: true; file: string; ruleId: string; note: string } | { ok: false; reason: string };

/**
 * `plan` says, without touching a file, why a rule could not be written for this call (null: it
 * could), so no channel offers what cannot be done; `write` writes it.
 */
export type AlwaysWriter = {
  plan(call: Omit<AlwaysCall, "id">): string | null;
  write(call: AlwaysCall, how: AlwaysHow): Promise<AlwaysResult>;
};
