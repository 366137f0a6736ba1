/**
 * The agents whose hook announces every tool by a name alone, its own tools and its MCP servers'
 * alike: opencode (its plugin, src/wrap/opencode-plugin.ts) and Copilot CLI (its `preToolUse`
 * hook). Their own tools (opencode 1.18.33: bash, read, write, edit, apply_patch, glob, grep, list,
 * webfetch, …; Copilot CLI 1.0.102: bash, view, create, edit, grep, glob, web_fetch, …, measured
 * from the tools each offers its model) are normalised by builtinCall. An MCP server's tool is
 * `<server>_<tool>` in opencode (each name with every character but letters, digits, `_` and `-`
 * made `_`), `<server>-<tool>` in Copilot CLI: indistinguishable by its form from a tool of a
 * plugin or an extension. In a wrap session, a tool of a server every entry of which runs through a
 * shim of the session (the session's descriptor names them, wrap/agent-hooks.ts) is left to its
 * shim, and any other tool is decided under its own name as one of the agent's. Outside a session
 * (an enrolled agent's plain run, whose servers' shims govern on their own) nothing says which
 * names are MCP tools: a tool that is not the agent's own gets no answer (the agent's own rules,
 * and a server's shim, apply), so an MCP call is not decided and recorded twice (docs/governance.md,
 * "Built-in tools").
 */
import type { SessionLookup } from "../governance/deciders/find-session.ts";
import type { HookAnswer, HookCall } from "./agent-formats.ts";
import type { BuiltinCall } from "./builtin-call.ts";

/** Each agent's own tools, by its names for them, and what joins a server's name to its tool's. */
const AGENTS = {
  opencode: { tools: new Set(["bash", "read", "write", "edit", "multiedit", "apply_patch", "patch", "glob", "grep", "list", "webfetch"]), separator: "_" },
  copilot: { tools: new Set(["bash", "view", "create", "edit", "grep", "glob", "web_fetch"]), separator: "-" },
} as const;

export type NamedToolsAgent = keyof typeof AGENTS;

export function announcesByNameAlone(agent: string): agent is NamedToolsAgent {
  return agent in AGENTS;
}

/** Whether `toolName` is one of the agent's own tools (normalised by builtinCall). */
export function isOwnTool(agent: NamedToolsAgent, toolName: string): boolean {
  return AGENTS[agent].tools.has(toolName);
}

/** The answer for a tool that may be an MCP server's (its shim decides), or null when the call is the agent's to decide here. */
export function governedMcpAnswer(agent: NamedToolsAgent, toolName: string, lookup: SessionLookup): HookAnswer | null {
  const { separator } = AGENTS[agent];
  if (isOwnTool(agent, toolName)) return null;
  if (lookup.kind !== "joined") return { kind: "none" };
  const server = lookup.session.governedServers.find((name) => toolName.startsWith(`${name}${separator}`) && toolName.length > name.length + separator.length);
  if (server === undefined) return null;
  return { kind: "allow", reason: `ThoughtGate: the ${server} server runs through ThoughtGate, which decides this call` };
}

/** A tool that is neither the agent's own nor a governed server's: decided under its own name (the policy's rules for other tools apply). */
export function otherTool(call: HookCall): BuiltinCall {
  return { name: call.toolName, arguments: { ...call.toolInput, tool: call.toolName }, annotations: undefined };
}
