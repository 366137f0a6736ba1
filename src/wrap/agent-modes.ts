import type { AgentType } from "./adapters/types.ts";

/**
 * Whether the agent, started as `command`, can put a question in front of a person. The modes that
 * run one prompt and exit answer every MCP elicitation at once without showing it (measured:
 * `claude -p` cancels in under 10 ms, `codex exec` declines in under 1 ms, whatever its
 * approval_policy), and opencode declares no elicitation at all. For these, the governance service
 * offers no shim elicitation: an approval goes straight to the person's other channels (desktop
 * notification, approvals page, `thoughtgate approve`) instead of being answered by the agent.
 */
export function agentCanAsk(agent: AgentType, command: readonly string[]): boolean {
  const args = beforeDoubleDash(command.slice(1));
  switch (agent) {
    case "claude-code":
      return !args.some((arg) => arg === "-p" || arg === "--print");
    // The subcommand may follow options that take values (`codex -m o4 exec`): any word that is it counts.
    case "codex":
      return !args.some((arg) => arg === "exec" || arg === "e");
    case "opencode":
      return !args.includes("run");
    case "gemini":
    case "qwen":
    case "copilot":
      return !args.some((arg) => arg === "-p" || arg === "--prompt" || arg.startsWith("--prompt="));
    default:
      return true;
  }
}

function beforeDoubleDash(args: readonly string[]): string[] {
  const end = args.indexOf("--");
  return end < 0 ? [...args] : args.slice(0, end);
}

/**
 * What wrap knows of how the agent, started as `command`, treats ThoughtGate's form: `interactive`
 * (a known agent in its interactive mode: its forms are shown to a person, so Esc on one is that
 * person's no), `answers-unseen` (a mode that answers every form itself, agentCanAsk), or
 * `unknown` (a custom agent: a dismissed form may be no one's, and other channels still apply).
 */
export type AgentMode = "interactive" | "answers-unseen" | "unknown";

export function agentMode(agent: AgentType, command: readonly string[]): AgentMode {
  if (!agentCanAsk(agent, command)) return "answers-unseen";
  return agent === "custom" ? "unknown" : "interactive";
}
