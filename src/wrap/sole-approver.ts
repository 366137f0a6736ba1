import type { AgentType } from "./adapters/types.ts";
import type { AgentMode } from "./agent-modes.ts";

/**
 * `wrap --sole-approver` (README, "One prompt, not two"): ThoughtGate is the one that asks about
 * the tools of the servers it governs, for this session only, without touching the user's files:
 * the agent is told by its own flags to leave those tools to ThoughtGate.
 *
 * - Claude Code asks "Do you want to proceed?" before every MCP tool call it was not told to allow;
 *   `--allowedTools=mcp__<server>,…` (one token: Claude Code takes a comma-separated list, and the
 *   `=` keeps its variadic option from swallowing the prompt that follows) allows each governed
 *   server's tools for this run. ThoughtGate's gates still decide every call.
 * - Codex runs, under `exec` and in its TUI, only the MCP tools it deems safe (annotated read-only,
 *   or non-destructive and closed-world) and refuses or asks about the rest itself, so ThoughtGate
 *   never sees them; `-c mcp_servers.<server>.default_tools_approval_mode="approve"` per governed
 *   server hands them to ThoughtGate.
 * - Other agents: wrap knows no flag; their own prompts, if they have any, still come first.
 *
 * `lines` is what the banner says: which prompts the person will see, and from whom.
 */
export type SoleApprover = { command: string[]; lines: string[] };

/** A name the agent's own flag can carry as written (anything else is left to the agent's prompts). */
const PLAIN_NAME = /^[A-Za-z0-9_-]+$/;

export function soleApprover(agent: AgentType, command: readonly string[], servers: readonly string[], mode: AgentMode, where: string): SoleApprover {
  const named = [...new Set(servers)];
  const plain = named.filter((name) => PLAIN_NAME.test(name));
  const skipped = named.filter((name) => !PLAIN_NAME.test(name));
  const [program, ...rest] = command;
  const left = skipped.length > 0 ? [`thoughtgate: --sole-approver: ${skipped.join(", ")} cannot be named in the agent's own flags; its own prompt still comes first for ${skipped.length === 1 ? "that server" : "those servers"}`] : [];
  const asks = `ThoughtGate asks, where its policy says to, ${where}`;
  if (program === undefined || plain.length === 0) return { command: [...command], lines: [`thoughtgate: --sole-approver: no governed server to hand over; ${asks}`, ...left] };
  switch (agent) {
    case "claude-code":
      return {
        command: [program, `--allowedTools=${plain.map((name) => `mcp__${name}`).join(",")}`, ...rest],
        lines: [`thoughtgate: sole approver: Claude Code does not ask about the tools of ${plain.join(", ")} this session (--allowedTools, nothing written); ${asks}`, ...left],
      };
    case "codex":
      return {
        command: [program, ...plain.flatMap((name) => ["-c", `mcp_servers.${name}.default_tools_approval_mode="approve"`]), ...rest],
        lines: [`thoughtgate: sole approver: Codex hands every tool of ${plain.join(", ")} to ThoughtGate this session (-c …default_tools_approval_mode="approve", nothing written); ${asks}`, ...left],
      };
    default:
      return {
        command: [...command],
        lines: [`thoughtgate: --sole-approver: wrap knows no flag that stops ${agent}'s own approval prompts${mode === "answers-unseen" ? "" : ", which still come first where it has them"}; ${asks}`],
      };
  }
}

/**
 * Without --sole-approver, what the banner says of the agent's own prompts (the issue wrap cannot
 * fix without being asked): two prompts for one call, or calls ThoughtGate never sees.
 */
export function agentPromptsNote(agent: AgentType, mode: AgentMode, hooks: boolean): string | null {
  // Claude Code's hook lets the governed servers' tools through (src/hook/mcp-tool.ts): one prompt already.
  if (agent === "claude-code" && hooks) {
    return "thoughtgate: Claude Code's hook leaves the tools of the servers ThoughtGate governs to ThoughtGate, which asks where its policy says so: Claude Code does not ask again (--sole-approver is not needed)";
  }
  if (agent === "claude-code") {
    return mode === "interactive"
      ? 'thoughtgate: Claude Code asks its own "Do you want to proceed?" before ThoughtGate\'s question for the same call; `wrap --sole-approver` leaves the asking to ThoughtGate for the servers it governs'
      : "thoughtgate: claude -p runs only the MCP tools you allow it (--allowedTools); `wrap --sole-approver` allows the governed servers' tools and leaves the asking to ThoughtGate";
  }
  if (agent === "codex") {
    return "thoughtgate: Codex runs only the MCP tools it deems safe and refuses (exec) or asks about (TUI) the rest itself, so ThoughtGate never sees them; `wrap --sole-approver` hands them to ThoughtGate";
  }
  return null;
}
