/**
 * The person's answer in an agent's own permission prompt, learnt from what the agent itself tells
 * its hooks (docs/governance.md, "Built-in tools"; docs/security.md, "Only a person approves").
 *
 * Claude Code (2.1.330) shows a hook's `ask` about an edit or a write with three answers: "Yes",
 * "Yes, and switch to accept edits (auto-approve file edits and common file commands) for this
 * session (shift+tab)", and "No" (about a shell command: "Yes" and "No" only). No hook is told which
 * one was chosen, and nothing is written to a settings file; what changes is the agent's permission
 * mode, which every hook's input carries (`permission_mode`): `default` in the PreToolUse of the
 * asked call, `acceptEdits` in the PostToolUse of that same call after the second answer. A "No"
 * runs no PostToolUse at all (the call never runs, and Claude Code stops the turn).
 *
 * So the service keeps the calls it handed to the agent's prompt (open asks: the call, its tool,
 * the rule that asked, the agent's mode then, whether its paths lie in the session's project). When
 * the agent's hook says such a call ran, the person said yes: for the session when the agent's mode
 * turned from another to `acceptEdits` meanwhile, else once. An open ask is answered once, and any
 * later call of the agent's closes every open ask first: the agent runs an asked call before its
 * next one, so an ask still open then was refused, and nothing the agent runs afterwards (a shell
 * command posing as its hook) can answer it.
 */

/** The agent's mode in which it accepts edits (Claude Code's `acceptEdits`). */
const ACCEPT_EDITS = "acceptEdits";
/** Modes in which the agent's prompt offers no "accept edits" answer: a switch to it was not that answer. */
const NO_SWITCH_FROM = new Set([ACCEPT_EDITS, "bypassPermissions", "plan", "auto"]);
/** The agent's own tools the "accept edits" answer covers: its file edits, creating a file included. */
export const EDIT_TOOLS = ["edit", "write"] as const;
/** At most this many open asks (the agent waits on each; more means it is not a person's pace). */
const MAX_OPEN = 16;

export type OpenAsk = {
  /** The tool's normalised name (verdict/agent-tools.ts). */
  name: string;
  /** The rule that asked: a grant made from the answer covers only calls that rule asks about. */
  ruleId: string | null;
  /** The agent's permission mode when it was asked, as its hook said; null when it said none. */
  mode: string | null;
  /** Every path of the call lies within the session's project. */
  inProject: boolean;
};

/** How far the person's yes reached, and the ask it answered. */
export type AgentAnswer = { scope: "once" | "session"; ask: OpenAsk };

export class AgentPromptAsks {
  private readonly open = new Map<string, OpenAsk>();

  /** A call of the agent's is being decided: every ask still open was not answered yes. */
  moveOn(): void {
    this.open.clear();
  }

  /** The service handed this call (its request id) to the agent's prompt. */
  asked(id: string, ask: OpenAsk): void {
    if (this.open.size >= MAX_OPEN) this.open.clear();
    this.open.set(id, ask);
  }

  /**
   * The agent's hook says the call `id` ran, the agent now in `mode`: the person's answer, or null
   * for a call that is not an open ask (never asked, answered already, or closed by a later call).
   */
  ran(id: string, mode: string | null): AgentAnswer | null {
    const ask = this.open.get(id);
    if (ask === undefined) return null;
    this.open.delete(id);
    const switched = ask.mode !== null && !NO_SWITCH_FROM.has(ask.mode) && mode === ACCEPT_EDITS;
    const covered = (EDIT_TOOLS as readonly string[]).includes(ask.name) && ask.inProject;
    return { scope: switched && covered ? "session" : "once", ask };
  }
}
