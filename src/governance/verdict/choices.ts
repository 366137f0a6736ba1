/**
 * The answers a person can give to a call's approval, in the words every channel uses (the agent's
 * form, the approvals page, Slack, the desktop notification; the CLI's flags name the same):
 * once, this tool for the session, always (kept to this project, or everywhere), deny. Each title
 * fits whole in Claude Code's form, which cuts an option's title after about 47 characters
 * whatever the terminal's width (measured with 2.1.330 at 80 and 160 columns).
 */
export const CHOICE_TITLES = {
  once: "Allow once",
  session: "Allow this tool for this session",
  always_project: "Always allow this tool in this project",
  always_everywhere: "Always allow this tool everywhere",
  deny: "Deny",
} as const;

export type Choice = keyof typeof CHOICE_TITLES;

/** What each choice decides: approve (with its scope) or deny. */
export const CHOICE_DECISIONS: Record<Choice, { decision: "approve" | "deny"; scope: "once" | "session" | "always"; alwaysScope?: "project" | "everywhere" }> = {
  once: { decision: "approve", scope: "once" },
  session: { decision: "approve", scope: "session" },
  always_project: { decision: "approve", scope: "always", alwaysScope: "project" },
  always_everywhere: { decision: "approve", scope: "always", alwaysScope: "everywhere" },
  deny: { decision: "deny", scope: "once" },
};

/** The choices a task offers: "always" only where a rule could be written for it. */
export function offeredChoices(always: boolean): Choice[] {
  return (Object.keys(CHOICE_TITLES) as Choice[]).filter((choice) => always || !choice.startsWith("always"));
}
