/**
 * An MCP server's tool announced to the agent's hook (`mcp__<server>__<tool>` in Claude Code): the
 * server's shim decides it, and asks a person where the policy says so, in the agent's own form
 * (docs/governance.md, "Built-in tools"). So the hook lets the call through to the shim, and
 * the agent's own permission prompt does not ask about it a second time, only for a server every
 * entry of which runs through a shim of the session the agent runs in (the session's descriptor
 * names them: governance/deciders/find-session.ts). Any other server's tool (ungoverned, added during
 * the session, outside any session) gets no answer: the agent's own rules apply, as without
 * ThoughtGate.
 */
import type { SessionLookup } from "../governance/deciders/find-session.ts";
import type { HookAnswer } from "./agent-formats.ts";

export function mcpToolAnswer(toolName: string, lookup: SessionLookup): HookAnswer {
  if (lookup.kind !== "joined") return { kind: "none" };
  const server = lookup.session.governedServers.find((name) => toolName.startsWith(`mcp__${name}__`) && toolName.length > `mcp__${name}__`.length);
  if (server === undefined) return { kind: "none" };
  return { kind: "allow", reason: `ThoughtGate: the ${server} server runs through ThoughtGate, which decides this call (and asks you where its policy says so)` };
}
