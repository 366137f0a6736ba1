/**
 * An agent's own tools (its shell, file reads, edits and writes, web fetches) as the policy sees them
 * when the hook front end announces them (docs/governance.md, "Built-in tools"): one source, `agent`,
 * names normalised across agents, and the arguments the hook builds from the tool's input:
 *
 * | name | arguments |
 * |---|---|
 * | `shell` | `command` (the line as given), `commands` (each command it runs, src/shell/shell-commands.ts) or `unreadable` (why the parser could not read it) |
 * | `read`, `edit`, `write` | `path` (absolute), and what the agent sends with it (`content`, `old_string`, `new_string`) |
 * | `fetch` | `url`, `host` |
 *
 * Each call also carries `tool`, the agent's own name for it (`Bash`, `run_shell_command`,
 * `apply_patch`): a rule's `match` matches either name.
 */
export const AGENT_SOURCE = "agent";

/** The normalised names. */
const AGENT_TOOLS = ["shell", "read", "edit", "write", "fetch"] as const;
export type AgentTool = (typeof AGENT_TOOLS)[number];

type Call = { serverId: string; method: string; name: string; arguments: unknown };

/** The agent's own name of a built-in tool's call (`tool`), or null for any other call. */
export function agentToolName(call: Call): string | null {
  if (call.serverId !== AGENT_SOURCE || call.method !== "tools/call") return null;
  const args = call.arguments;
  if (args === null || typeof args !== "object") return null;
  const tool = (args as { tool?: unknown }).tool;
  return typeof tool === "string" ? tool : null;
}

/**
 * Why an agent's shell call cannot be judged command by command (the parser could not read it, or
 * no command list came with it), or null when it can. Such a call is asked, whatever a rule says.
 */
export function unreadableShell(call: Call): string | null {
  if (call.serverId !== AGENT_SOURCE || call.method !== "tools/call" || call.name !== "shell") return null;
  const args = (call.arguments ?? {}) as { commands?: unknown; unreadable?: unknown };
  if (Array.isArray(args.commands) && args.commands.length > 0 && args.commands.every((line) => typeof line === "string")) return null;
  return typeof args.unreadable === "string" ? args.unreadable : "no command list came with it";
}

/** What the bash parser made of a shell line (src/shell/shell-commands.ts). */
export type ShellReading = { ok: true; commands: string[] } | { ok: false; why: string };

/** The line of an agent's shell call (its `command`), or null for any other call. */
export function shellLine(call: Call): string | null {
  if (call.serverId !== AGENT_SOURCE || call.method !== "tools/call" || call.name !== "shell") return null;
  const command = (call.arguments as { command?: unknown } | null)?.command;
  return typeof command === "string" ? command : "";
}

/**
 * A shell call's arguments with the parser's reading of its line, where the rules read it:
 * `commands`, or `unreadable` with why. Any `commands` or `unreadable` already there is dropped,
 * whoever put it there: only the reading of `command` itself is judged. The keys keep the order
 * the hook builds them in (`command`, the reading, the tool's own input, `tool`), so the record and
 * the person see the same arguments wherever the line was read.
 */
export function withShellReading(args: unknown, reading: ShellReading): Record<string, unknown> {
  const given = args !== null && typeof args === "object" ? (args as Record<string, unknown>) : {};
  const { command, commands: _commands, unreadable: _unreadable, ...rest } = given;
  return { command: typeof command === "string" ? command : "", ...(reading.ok ? { commands: reading.commands } : { unreadable: reading.why }), ...rest };
}
