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

/**
 * The modes `agentCanAsk` answers no for, in words a person types (for `doctor`): their approvals
 * go to the page, `thoughtgate approve` and the desktop instead of the agent's own form.
 */
export const MODES_THAT_CANNOT_ASK = ["claude -p", "codex exec", "opencode run", "gemini -p", "qwen -p", "copilot -p"] as const;

function beforeDoubleDash(args: readonly string[]): string[] {
  const end = args.indexOf("--");
  return end < 0 ? [...args] : args.slice(0, end);
}
