import { basename } from "node:path";
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

/**
 * What the agent does with the terminal wrap shares with it (docs/architecture.md, decision 9):
 * `owns` (a full-screen or line-editing TUI: Claude Code without `-p`, Codex's TUI, opencode's TUI,
 * Gemini, Qwen and Copilot without `-p`, Amp, Goose, Cline, Junie, Cursor's and Kiro's CLIs), in
 * which wrap writes nothing while it runs; `prints` (a mode that prints and exits, `agentCanAsk`
 * false), in which a call waiting for a person is announced in one line; `none` (an editor or app
 * that opens its own window, a custom agent), which leaves the terminal to wrap.
 */
export type AgentScreen = "owns" | "prints" | "none";

const TERMINAL_AGENTS: ReadonlySet<AgentType> = new Set(["claude-code", "codex", "opencode", "gemini", "qwen", "copilot", "amp", "goose", "cline", "junie"]);

export function agentScreen(agent: AgentType, command: readonly string[]): AgentScreen {
  if (!agentCanAsk(agent, command)) return "prints";
  if (TERMINAL_AGENTS.has(agent)) return "owns";
  // Cursor's and Kiro's terminal agents, beside their editors.
  const program = basename(command[0] ?? "").toLowerCase();
  if (agent === "cursor" && (program === "cursor-agent" || program === "agent")) return "owns";
  if (agent === "kiro" && program === "kiro-cli") return "owns";
  return "none";
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
