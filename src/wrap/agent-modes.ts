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
    case "codex":
      return !["exec", "e"].includes(firstWord(args) ?? "");
    case "opencode":
      return firstWord(args) !== "run";
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

/** The subcommand: the first argument that is not an option. */
function firstWord(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith("-"));
}
