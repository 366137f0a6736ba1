/**
 * Whether a call handed to the agent's own prompt was allowed there once or for the session: the
 * session's service is told the call ran and the agent's permission mode now (Claude Code's
 * PostToolUse), and answers from the calls it handed to that prompt
 * (governance/approval/agent-prompt-answers.ts). The service makes any grant itself; this only
 * learns what to record. No answer (no service, an error) records none: nothing is granted.
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";
import type { Session } from "../governance/deciders/find-session.ts";
import { agentRanResponse, type AgentRanRequest } from "../governance/wire/api.ts";

/** The service answers at once: it looks up one call. */
const ANSWER_MS = 5_000;

export type PersonsAnswer = { scope: "once" | "session"; ruleId: string | null };

export async function personsAnswer(session: Session, requestId: string, agentMode: string | null): Promise<PersonsAnswer | null> {
  try {
    const secret = readFileSync(session.secretFile, "utf8").trim();
    const body: AgentRanRequest = { id: requestId, ...(agentMode !== null ? { agent_mode: agentMode } : {}) };
    const response = await fetch(`${session.endpoint.replace(/\/+$/, "")}/governance/agent-ran`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ANSWER_MS),
    });
    if (!response.ok) return null;
    const parsed = v.safeParse(agentRanResponse, await response.json());
    if (!parsed.success || parsed.output.scope === null) return null;
    return { scope: parsed.output.scope, ruleId: parsed.output.rule_id ?? null };
  } catch {
    // The session ended, or its service is gone: the call's end is still recorded, without a scope.
    return null;
  }
}
