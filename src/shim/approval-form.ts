import { CHOICE_TITLES, offeredChoices } from "../governance/verdict/choices.ts";
import type { AskOptions, AskPurpose, ElicitOutcome } from "../governance/verdict/decider.ts";

/**
 * An answer that comes back faster than this was not a person reading the question: no answer.
 * Accept, decline and cancel alike: an agent that answers the form itself (`claude -p` cancels in
 * under 10 ms, `codex exec` declines in under 1 ms, a retry can carry an accept 8 ms after the
 * question) must not be taken for a person's yes or no.
 */
export const HUMAN_MIN_ANSWER_MS = 300;

/** A changed or flagged definition is accepted as it is shown (it becomes the pin), or not: no "session". */
const DEFINITION_CHOICES = [
  { const: "once", title: "Accept the new definition (it becomes the pin)" },
  { const: "deny", title: "Keep it hidden and its calls refused" },
] as const;

/**
 * The approval form the shim shows through the agent (MCP form elicitation: a flat object of
 * primitives): one required choice, `decision`. For a call: "once" (the `default`, so Accept alone
 * allows once: Enter, Enter in Claude Code), "session", the two "always" (only when a rule could be
 * written for this call) and "deny"; Decline denies. One field, not two: every field costs each
 * answer another keystroke. Clients of MCP 2025-11-25 and later read a titled `oneOf` of constants;
 * older ones an `enum` with `enumNames`.
 *
 * A definition has no default: accepting a changed or poisoned definition is a choice made on
 * purpose, never the form's Accept pressed twice.
 */
export function approvalForm(protocolVersion: string | null, purpose: AskPurpose = "call", options: AskOptions = {}): Record<string, unknown> {
  const titled = protocolVersion === null || protocolVersion >= "2025-11-25";
  const choices =
    purpose === "definition"
      ? DEFINITION_CHOICES
      : offeredChoices(options.always === true).map((c) => ({ const: c, title: CHOICE_TITLES[c] }));
  const title = purpose === "definition" ? "Accept the new definition?" : "Allow this call?";
  const preset = purpose === "definition" ? {} : { default: "once" };
  const decision = titled
    ? { type: "string", title, oneOf: choices.map((c) => ({ ...c })), ...preset }
    : { type: "string", title, enum: choices.map((c) => c.const), enumNames: choices.map((c) => c.title), ...preset };
  return { type: "object", properties: { decision }, required: ["decision"] };
}

/**
 * What an answer to the form means: an approval (once, for the session, always here or
 * everywhere), a person's no (Decline, or Accept with Deny), the form dismissed at a person's pace
 * (`cancel`: Esc), or no answer at all: anything faster than a person could have read the
 * question, or an Accept without a choice the form offered (it counts as nothing, and never as a
 * yes; so does an "always" the form did not offer). null: not an answer to this form.
 */
export function outcomeOf(response: unknown, elapsedMs: number, offered: AskOptions = {}): ElicitOutcome | null {
  if (response === null || typeof response !== "object" || Array.isArray(response)) return null;
  const { action, content } = response as { action?: unknown; content?: unknown };
  if (action !== "accept" && action !== "decline" && action !== "cancel") return null;
  if (elapsedMs < HUMAN_MIN_ANSWER_MS) return { kind: "unanswered" };
  if (action === "decline") return { kind: "declined" };
  if (action === "cancel") return { kind: "dismissed" };
  const decision = content !== null && typeof content === "object" ? (content as { decision?: unknown }).decision : undefined;
  switch (decision) {
    case "once":
      return { kind: "approved", scope: "once" };
    case "session":
      return { kind: "approved", scope: "session" };
    case "always_project":
    case "always_everywhere":
      if (offered.always !== true) return { kind: "unanswered" };
      return { kind: "approved", scope: "always", alwaysScope: decision === "always_project" ? "project" : "everywhere" };
    case "deny":
      return { kind: "declined" };
    default:
      // An accept with no choice, or one the form never offered: no one's answer.
      return { kind: "unanswered" };
  }
}
