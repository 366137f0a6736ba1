/**
 * What each agent's hook system sends a hook before a tool call, and how it reads the answer:
 *
 * - Claude Code (`PreToolUse` in settings.json): `{tool_name, tool_input, cwd, hook_event_name, ...}`
 *   on stdin; answers `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision":
 *   "allow" | "deny" | "ask", "permissionDecisionReason": "..."}}` on stdout with exit 0. Exit 2 blocks
 *   the call with stderr as its reason; any other failure lets the call go on, so every failure here
 *   must end in exit 2.
 * - Codex (`PreToolUse` in hooks.json or config.toml): the same input and answer, but only allow or
 *   deny (no `ask`: Codex asks in its `PermissionRequest` event); exit 2 blocks.
 * - Gemini CLI (`BeforeTool` in settings.json): `{tool_name, tool_input, cwd, hook_event_name, ...}`;
 *   answers `{"decision": "allow" | "deny", "reason": "..."}`; exit 2 blocks with stderr.
 * - opencode (ThoughtGate's plugin, src/wrap/opencode-plugin.ts, from `tool.execute.before`): the
 *   same input; answers Gemini CLI's way, and `{"decision": "none"}` where the hook says nothing (the
 *   plugin lets the call go only on allow or none; anything else, exit 2 included, it refuses).
 * - Copilot CLI (`preToolUse` in its settings.json): `{toolName, toolArgs, cwd, sessionId, ...}`
 *   (toolArgs an object, or that object as JSON text); answers `{"permissionDecision": "allow" |
 *   "deny", "permissionDecisionReason": "..."}`, nothing to let its own rules apply; exit 2 blocks
 *   (measured with Copilot CLI 1.0.102).
 */
import * as v from "valibot";

export const HOOK_AGENTS = ["claude-code", "codex", "gemini", "opencode", "copilot"] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** The blocking exit code of every supported agent's hooks. */
const BLOCKING_EXIT = 2;

const hookInput = v.looseObject({
  tool_name: v.pipe(v.string(), v.minLength(1)),
  tool_input: v.optional(v.record(v.string(), v.unknown()), {}),
  cwd: v.optional(v.string()),
  hook_event_name: v.optional(v.string()),
  /** Claude Code's id of the tool call, the same in its PreToolUse and PostToolUse input. */
  tool_use_id: v.optional(v.string()),
  duration_ms: v.optional(v.number()),
  /** Claude Code's permission mode when the hook runs (`default`, `acceptEdits`, …): how a person's answer in its prompt shows. */
  permission_mode: v.optional(v.string()),
  /** Gemini CLI's metadata of an MCP server's tool (its tools are named without a prefix Claude's way). */
  mcp_context: v.optional(v.unknown()),
});

/** One tool call, as the agent's hook announced it. */
export type HookCall = { toolName: string; toolInput: Record<string, unknown>; cwd: string; event: string | null; toolUseId: string | null; durationMs: number | null; mcp: boolean; agentMode: string | null };

/** The hook's input, or why it cannot be read (the call is then blocked). */
export function parseHookInput(text: string, fallbackCwd: string): { ok: true; call: HookCall } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, why: `the hook's input is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const parsed = v.safeParse(hookInput, copilotInput(json));
  if (!parsed.success) return { ok: false, why: `the hook's input is not a tool call: ${v.summarize(parsed.issues).split("\n")[0]}` };
  const { tool_name, tool_input, cwd, hook_event_name, tool_use_id, duration_ms, mcp_context, permission_mode } = parsed.output;
  return {
    ok: true,
    call: { toolName: tool_name, toolInput: tool_input, cwd: cwd ?? fallbackCwd, event: hook_event_name ?? null, toolUseId: tool_use_id || null, durationMs: duration_ms ?? null, mcp: mcp_context !== undefined && mcp_context !== null, agentMode: permission_mode ?? null },
  };
}

/** Copilot CLI's input in the others' names (its toolArgs may come as JSON text); any other input as it is. */
function copilotInput(json: unknown): unknown {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const input = json as Record<string, unknown>;
  if (input.tool_name !== undefined || typeof input.toolName !== "string") return json;
  let args = input.toolArgs;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      // Left as text: refused below as not a tool call.
    }
  }
  return { tool_name: input.toolName, tool_input: args ?? {}, cwd: input.cwd, hook_event_name: "preToolUse" };
}

/** What the hook answers: let the call run, refuse it, let the agent ask its person, or say nothing (the agent's own rules apply). */
export type HookAnswer = { kind: "allow" | "deny" | "ask"; reason: string } | { kind: "none" };

export type Rendered = { stdout: string; stderr: string; exitCode: number };

/** The answer in the agent's format. */
export function renderAnswer(agent: HookAgent, answer: HookAnswer): Rendered {
  if (answer.kind === "none") return { stdout: agent === "opencode" ? `${JSON.stringify({ decision: "none" })}\n` : "", stderr: "", exitCode: 0 };
  // Only Claude Code's hooks can hand the question to the agent's own prompt: elsewhere what would
  // be asked is refused, with the reason.
  const kind = agent !== "claude-code" && answer.kind === "ask" ? "deny" : answer.kind;
  const reason = oneLine(answer.reason);
  if (agent === "copilot") return { stdout: `${JSON.stringify({ permissionDecision: kind, permissionDecisionReason: reason })}\n`, stderr: "", exitCode: 0 };
  if (agent === "gemini" || agent === "opencode") {
    return { stdout: `${JSON.stringify({ decision: kind, reason })}\n`, stderr: "", exitCode: 0 };
  }
  // Codex reads `permissionDecision: "allow"` as a rewrite that needs `updatedInput`, and without
  // one reports the hook as failed (and goes on): its allow is an answer with nothing in it.
  if (agent === "codex" && kind === "allow") return { stdout: "", stderr: "", exitCode: 0 };
  return {
    stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: kind, permissionDecisionReason: reason } })}\n`,
    stderr: "",
    exitCode: 0,
  };
}

/**
 * A call blocked because the hook itself failed (its input unreadable, its session unreachable, a
 * crash, its deadline): the agent's blocking exit code, and one line saying why and how to fix it.
 */
export function renderFailure(why: string): Rendered {
  return { stdout: "", stderr: `thoughtgate hook: blocked: ${oneLine(why)}\n`, exitCode: BLOCKING_EXIT };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").slice(0, 2000);
}
