import { realpathSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { ifReadable } from "./config-dirs.ts";
import { AGENT_TYPES, type AgentType } from "./types.ts";

/** Command names (basename, `.exe` dropped, lower case) of each agent's launcher. */
const COMMANDS: Record<string, AgentType> = {
  claude: "claude-code",
  "claude-code": "claude-code",
  "claude-desktop": "claude-desktop",
  cursor: "cursor",
  "cursor-agent": "cursor",
  code: "vscode",
  "code-insiders": "vscode",
  windsurf: "windsurf",
  zed: "zed",
  // Arch, Fedora and Nix package Zed's CLI under these names.
  zeditor: "zed",
  zedit: "zed",
  "zed-editor": "zed",
  codex: "codex",
  copilot: "copilot",
  opencode: "opencode",
  gemini: "gemini",
  qwen: "qwen",
  kiro: "kiro",
  "kiro-cli": "kiro",
  goose: "goose",
  cline: "cline",
  amp: "amp",
  junie: "junie",
};

/** macOS application bundle names (lower case), for `/Applications/X.app/...` and `open -a X`. */
const APPS: Record<string, AgentType> = {
  claude: "claude-desktop",
  zed: "zed",
  "zed preview": "zed",
  cursor: "cursor",
  "visual studio code": "vscode",
  "visual studio code - insiders": "vscode",
  windsurf: "windsurf",
  kiro: "kiro",
};

/**
 * Which agent `command` launches, from its program name, or null when it is none we know
 * (wrap then asks for `--agent-type`). `claude` is Claude Code; Claude Desktop is the `Claude`
 * app (`/Applications/Claude.app/...`, `open -a Claude`, the capitalised binary) or
 * `claude-desktop` on Linux.
 */
export function detectAgent(command: readonly string[]): AgentType | null {
  const app = appName(command);
  if (app !== undefined) return APPS[app.toLowerCase()] ?? null;
  const program = command[0];
  if (!program) return null;
  const name = basename(program).replace(/\.exe$/i, "");
  if (name === "Claude") return "claude-desktop";
  if (name.toLowerCase() === "agent") return isCursorAgent(program) ? "cursor" : null;
  return COMMANDS[name.toLowerCase()] ?? null;
}

/**
 * Cursor's CLI installs itself as `cursor-agent` and as `agent`, both links into
 * `~/.local/share/cursor-agent/versions/<version>/`. `agent` alone is too common a name to be
 * taken for Cursor, so it counts only when it leads into a `cursor-agent` installation.
 */
function isCursorAgent(program: string): boolean {
  const found = program.includes("/") ? program : Bun.which(program);
  const real = found ? ifReadable(() => realpathSync(found)) : undefined;
  return real !== undefined && /(^|\/)cursor-agent(\/|$)/.test(real);
}

/** VS Code Insiders keeps its user settings apart from VS Code's. */
export function isVsCodeInsiders(command: readonly string[]): boolean {
  const app = appName(command);
  if (app !== undefined) return app.toLowerCase().endsWith("insiders");
  return basename(command[0] ?? "").toLowerCase().replace(/\.exe$/, "") === "code-insiders";
}

/** The bundle name when the command is a macOS app: `open -a Zed`, `/Applications/Zed.app/Contents/MacOS/zed`. */
function appName(command: readonly string[]): string | undefined {
  const [program, ...args] = command;
  if (!program) return undefined;
  if (basename(program) === "open") {
    const flag = args.indexOf("-a");
    const target = flag < 0 ? undefined : args[flag + 1];
    return target === undefined ? undefined : basename(target).replace(/\.app\/?$/, "");
  }
  return /([^/]+)\.app(?:\/|$)/.exec(program)?.[1];
}

export function isAgentType(value: string): value is AgentType {
  return (AGENT_TYPES as readonly string[]).includes(value);
}

const EDITORS = new Set<AgentType>(["cursor", "vscode", "windsurf", "zed", "kiro"]);

/** Command-line agents of editor families: they work in the working directory. */
const EDITOR_CLIS = new Set(["cursor-agent", "agent", "kiro-cli"]);

/**
 * The project the agent works in, whose project-scope files count: for an editor opened on a
 * folder (`zed ~/src/app`, `code .`), the first argument that is a directory; for opencode, its
 * optional first argument `opencode [project]`; otherwise (and for a CLI agent) the working
 * directory.
 */
export function projectDir(agent: AgentType, command: readonly string[], cwd: string): string {
  const program = basename(command[0] ?? "");
  const isDir = (arg: string) => statSync(resolve(cwd, arg), { throwIfNoEntry: false })?.isDirectory() === true;
  if (agent === "opencode") {
    const first = command[1];
    return first !== undefined && !first.startsWith("-") && isDir(first) ? resolve(cwd, first) : cwd;
  }
  if (!EDITORS.has(agent) || EDITOR_CLIS.has(program)) return cwd;
  const args = command.slice(1);
  for (const [i, arg] of args.entries()) {
    if (arg.startsWith("-") || (program === "open" && args[i - 1] === "-a")) continue;
    if (isDir(arg)) return resolve(cwd, arg);
  }
  return cwd;
}
