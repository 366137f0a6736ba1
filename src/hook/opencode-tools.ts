/**
 * opencode's tool calls, as its plugin (src/wrap/opencode-plugin.ts) announces them: every tool,
 * its own and its MCP servers', by opencode's id for it. Its own tools (opencode 1.18.33: bash,
 * read, write, edit, apply_patch, glob, grep, list, webfetch, …) are normalised by builtinCall;
 * an MCP server's tool is `<server>_<tool>` (each name with every character but letters, digits,
 * `_` and `-` made `_`), indistinguishable by its form from a tool of a plugin, so it is left to
 * its shim only when it is a tool of a server every entry of which runs through a shim of the
 * session (the session's descriptor names them, wrap/agent-hooks.ts). Any other tool is decided
 * under its own name as one of the agent's (docs/governance.md, "Built-in tools").
 */
import { resolve } from "node:path";
import type { SessionLookup } from "../governance/deciders/find-session.ts";
import type { HookAnswer, HookCall } from "./agent-formats.ts";
import type { BuiltinCall } from "./builtin-call.ts";

/** opencode's own tools, by its ids (the names a plugin's `tool.execute.before` is given). */
export const OPENCODE_TOOLS: ReadonlySet<string> = new Set(["bash", "read", "write", "edit", "multiedit", "apply_patch", "patch", "glob", "grep", "list", "webfetch"]);

/** The answer for a tool of a governed MCP server (its shim decides), or null when the call is the agent's to decide here. */
export function opencodeMcpAnswer(toolName: string, lookup: SessionLookup): HookAnswer | null {
  if (OPENCODE_TOOLS.has(toolName) || lookup.kind !== "joined") return null;
  const server = lookup.session.governedServers.find((name) => toolName.startsWith(`${name}_`) && toolName.length > name.length + 1);
  if (server === undefined) return null;
  return { kind: "allow", reason: `ThoughtGate: the ${server} server runs through ThoughtGate, which decides this call` };
}

/** The call as builtinCall reads it: bash runs in its `workdir` when it names one. */
export function opencodeHookCall(call: HookCall): HookCall {
  const workdir = call.toolInput.workdir;
  if (call.toolName === "bash" && typeof workdir === "string" && workdir !== "") return { ...call, cwd: resolve(call.cwd, workdir) };
  return call;
}

/** A tool that is neither opencode's own nor a governed server's: decided under its own name (the policy's rules for other tools apply). */
export function otherOpencodeTool(call: HookCall): BuiltinCall {
  return { name: call.toolName, arguments: { ...call.toolInput, tool: call.toolName }, annotations: undefined };
}
