/**
 * An agent's tool call as the policy sees it (governance/verdict/agent-tools.ts): the normalised
 * name, the arguments the rules match on, and the annotations a policy written for MCP tools reads
 * (a read is read-only; an edit or write may destroy; a fetch reaches the open world; a shell command
 * declares nothing, so MCP's defaults count it as destructive).
 */
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { ToolAnnotations } from "../core/mcp-schema.ts";
import type { AgentTool } from "../governance/verdict/agent-tools.ts";
import type { HookCall } from "./agent-formats.ts";

export type BuiltinCall = { name: string; arguments: Record<string, unknown>; annotations: ToolAnnotations | undefined };

/** Each agent's own tool names, normalised, and where the tool's input keeps the path, URL or command. */
const TOOLS: Record<string, { tool: AgentTool; path?: string[]; url?: string; command?: string }> = {
  // Claude Code
  Bash: { tool: "shell", command: "command" },
  Read: { tool: "read", path: ["file_path"] },
  Glob: { tool: "read", path: ["path"] },
  Grep: { tool: "read", path: ["path"] },
  LS: { tool: "read", path: ["path"] },
  Edit: { tool: "edit", path: ["file_path"] },
  MultiEdit: { tool: "edit", path: ["file_path"] },
  NotebookEdit: { tool: "edit", path: ["notebook_path"] },
  Write: { tool: "write", path: ["file_path"] },
  WebFetch: { tool: "fetch", url: "url" },
  // Codex (its shell is announced as Bash too)
  shell: { tool: "shell", command: "command" },
  exec_command: { tool: "shell", command: "cmd" },
  apply_patch: { tool: "edit" },
  // Gemini CLI
  run_shell_command: { tool: "shell", command: "command" },
  read_file: { tool: "read", path: ["absolute_path", "file_path"] },
  read_many_files: { tool: "read" },
  list_directory: { tool: "read", path: ["path", "dir_path"] },
  glob: { tool: "read", path: ["path", "dir_path", "paths"] },
  search_file_content: { tool: "read", path: ["path", "dir_path"] },
  write_file: { tool: "write", path: ["file_path"] },
  replace: { tool: "edit", path: ["file_path"] },
  web_fetch: { tool: "fetch" },
  // opencode (its tools' ids, as its plugin is given them: src/hook/own-tool-names.ts)
  bash: { tool: "shell", command: "command" },
  read: { tool: "read", path: ["filePath"] },
  grep: { tool: "read", path: ["path", "paths"] },
  list: { tool: "read", path: ["path"] },
  write: { tool: "write", path: ["filePath"] },
  edit: { tool: "edit", path: ["filePath", "path"] },
  multiedit: { tool: "edit", path: ["filePath"] },
  patch: { tool: "edit" },
  webfetch: { tool: "fetch", url: "url" },
  // Copilot CLI (bash, edit, grep, glob and web_fetch as above)
  view: { tool: "read", path: ["path"] },
  create: { tool: "write", path: ["path"] },
};

/** The arguments the hook derives: the agent's input never sets them. */
const DERIVED = new Set(["tool", "command", "commands", "unreadable", "path", "url", "host"]);

const ANNOTATIONS: Record<AgentTool, ToolAnnotations | undefined> = {
  read: { readOnlyHint: true, openWorldHint: false },
  fetch: { readOnlyHint: true, openWorldHint: true },
  edit: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  shell: undefined,
};

/**
 * The call for the policy, or null for a call that is not the agent's own tool: an MCP server's
 * tool (`mcp__server__tool` in Claude Code and Codex; in Gemini CLI, one announced with its
 * `mcp_context`), which the server's shim governs. A shell call carries its line as `command`, not
 * yet read: where it is read (the session's service, else this process) is hook-decision.ts's
 * choice, and the reading goes in with `withShellReading` (governance/verdict/agent-tools.ts).
 */
export function builtinCall(hook: HookCall): BuiltinCall | null {
  if (hook.toolName.startsWith("mcp__") || hook.mcp) return null;
  const known = TOOLS[hook.toolName];
  const input = hook.toolInput;
  if (!known) return { name: hook.toolName, arguments: { ...input, tool: hook.toolName }, annotations: undefined };
  const args: Record<string, unknown> = {};
  if (known.command !== undefined) {
    const command = input[known.command];
    const line = typeof command === "string" ? command : Array.isArray(command) ? command.join(" ") : "";
    args.command = line;
  }
  if (known.path !== undefined) {
    const given = known.path.map((key) => input[key]).find((value): value is string => typeof value === "string");
    // Glob and Grep without a path search the working directory.
    args.path = absolute(given ?? ".", hook.cwd);
  }
  // Gemini CLI's read_many_files, Copilot CLI's grep and glob: a list of paths.
  if ((known.path !== undefined || hook.toolName === "read_many_files") && Array.isArray(input.paths)) {
    args.path = input.paths.filter((p): p is string => typeof p === "string").map((p) => absolute(p, hook.cwd));
  }
  if (hook.toolName === "apply_patch" || hook.toolName === "patch") {
    const patch = [input.patch, input.input, input.command, input.patchText].find((text): text is string => typeof text === "string") ?? "";
    args.path = patchedFiles(patch).map((p) => absolute(p, hook.cwd));
  }
  if (known.tool === "fetch") {
    const url = typeof input[known.url ?? "url"] === "string" ? (input[known.url ?? "url"] as string) : firstUrl(typeof input.prompt === "string" ? input.prompt : "");
    if (url !== null) {
      args.url = url;
      const host = hostOf(url);
      if (host !== null) args.host = host;
    }
  }
  // What the person is shown with the question, and the audit keeps: the tool's own input too, but
  // never in a key the rules read (a `commands` list of the agent's beside an unreadable line).
  for (const [key, value] of Object.entries(input)) if (!DERIVED.has(key)) args[key] = value;
  args.tool = hook.toolName;
  return { name: known.tool, arguments: args, annotations: ANNOTATIONS[known.tool] };
}

function absolute(path: string, cwd: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

/** The files an apply_patch envelope adds, updates, deletes or moves to (`*** Update File: PATH`). */
function patchedFiles(patch: string): string[] {
  const files: string[] = [];
  for (const match of patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) {
    const file = (match[1] ?? match[2] ?? "").trim();
    if (file !== "") files.push(file);
  }
  return files;
}

function firstUrl(text: string): string | null {
  return /https?:\/\/[^\s"'<>]+/.exec(text)?.[0] ?? null;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname || null;
  } catch {
    return null;
  }
}
