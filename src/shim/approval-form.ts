import type { AskPurpose, ElicitOutcome } from "../governance/decision/decider.ts";

/** A decline that comes back faster than this was not a person reading the question: no answer. */
export const HUMAN_MIN_ANSWER_MS = 300;

const CHOICES = [
  { const: "once", title: "Allow once" },
  { const: "session", title: "Allow for this session (this tool on this server, any arguments, until the session ends)" },
  { const: "deny", title: "Deny" },
] as const;

/** A changed or flagged definition is accepted as it is shown (it becomes the pin), or not: no "session". */
const DEFINITION_CHOICES = [
  { const: "once", title: "Accept the new definition (it becomes the pin; a later change is asked about again)" },
  { const: "deny", title: "Keep it hidden and its calls refused" },
] as const;

/**
 * The approval form the shim shows through the agent (MCP form elicitation: a flat object of
 * primitives): one required choice, `decision`, of "once", "session" or "deny". Clients of MCP
 * 2025-11-25 and later read a titled `oneOf` of constants; older ones an `enum` with `enumNames`.
 */
export function approvalForm(protocolVersion: string | null, purpose: AskPurpose = "call"): Record<string, unknown> {
  const titled = protocolVersion === null || protocolVersion >= "2025-11-25";
  const choices = purpose === "definition" ? DEFINITION_CHOICES : CHOICES;
  const title = purpose === "definition" ? "Accept the new definition?" : "Allow this call?";
  const decision = titled
    ? { type: "string", title, oneOf: choices.map((c) => ({ ...c })) }
    : { type: "string", title, enum: choices.map((c) => c.const), enumNames: choices.map((c) => c.title) };
  return { type: "object", properties: { decision }, required: ["decision"] };
}

/**
 * What an answer to the form means: an approval (once, or for the session), a person's no, or no
 * answer at all — `cancel` (what an agent that cannot ask anyone answers, e.g. `claude -p`), or a
 * decline faster than anyone could have read the question (what `codex exec` answers). null: not an
 * answer to this form.
 */
export function outcomeOf(response: unknown, elapsedMs: number): ElicitOutcome | null {
  if (response === null || typeof response !== "object" || Array.isArray(response)) return null;
  const { action, content } = response as { action?: unknown; content?: { decision?: unknown } };
  if (action === "accept") {
    const decision = content?.decision;
    if (decision === "once") return "approved";
    if (decision === "session") return "approved_session";
    // "deny", or an accept without a choice: not an approval.
    return "declined";
  }
  if (action === "decline") return elapsedMs < HUMAN_MIN_ANSWER_MS ? "unanswered" : "declined";
  if (action === "cancel") return "unanswered";
  return null;
}
