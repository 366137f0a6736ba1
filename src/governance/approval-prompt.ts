import { canonicalJson } from "../core/canonical-json.ts";
import { redact } from "../telemetry/redact.ts";

/** Arguments longer than this are shortened in a prompt, and the prompt says by how much. */
const PROMPT_ARGUMENTS_CHARS = 500;

export type PromptCall = { serverId: string; method: string; name: string; arguments: unknown };

/**
 * What a human is asked, on every channel (elicitation through the agent, the approvals page, the
 * terminal): which server, which tool (or method and target), with which arguments — credentials
 * redacted — and why. "Allow github.delete_repo with {"repo":"x"}? (rule destructive: approval required)".
 */
export function approvalPrompt(call: PromptCall, reason?: string): string {
  const args = canonicalJson(redact(call.arguments ?? {}));
  const shown = args.length > PROMPT_ARGUMENTS_CHARS ? `${args.slice(0, PROMPT_ARGUMENTS_CHARS)}… (${args.length - PROMPT_ARGUMENTS_CHARS} more characters)` : args;
  const target = call.method === "tools/call" ? `${call.serverId}.${call.name}` : `${call.serverId} ${call.method} ${call.name}`;
  return `Allow ${target} with ${shown}?${reason ? ` (${reason})` : ""}`;
}
