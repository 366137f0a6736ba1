import type { JSONPath } from "jsonc-parser";

/** The agents `wrap` knows (`--agent-type`). */
export const AGENT_TYPES = [
  "claude-desktop",
  "claude-code",
  "cursor",
  "vscode",
  "windsurf",
  "zed",
  "codex",
  "copilot",
  "opencode",
  "gemini",
  "qwen",
  "kiro",
  "goose",
  "cline",
  "amp",
  "junie",
  "custom",
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/**
 * Everything discovery needs from the outside world, injected so tests never see the real HOME:
 * `env` is the agent's environment (for `${VAR}` expansion and XDG / CLAUDE_CONFIG_DIR).
 */
export type AgentContext = {
  home: string;
  cwd: string;
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
};

export type DiscoverOptions = {
  /** `--config-path`: read only this file, in the agent's own format (for `custom`, `mcpServers`). */
  configPath?: string;
  /** VS Code Insiders keeps its user profile in `Code - Insiders` instead of `Code`. */
  insiders?: boolean;
  /**
   * Claude Code: the local entries of every project in `~/.claude.json`, not only those of the
   * working directory and its parents (`enroll`: every later run, wherever it starts, reads them).
   */
  everyProject?: boolean;
};

/**
 * `user`: the agent's global config; `project`: a file in the working directory shared with the
 * team; `local`: Claude Code's per-project entries in `~/.claude.json`; `custom`: `--config-path`;
 * `flag`: given to the agent on its command line (Claude Code's `--mcp-config`).
 */
export type ConfigScope = "user" | "project" | "local" | "custom" | "flag";

/**
 * Why an entry is or is not rewritten. Only `governed` entries are touched; every other status is
 * left byte-identical and shown in the coverage table with `reason`. A server turned off in the
 * config is still `governed` (see `ServerEntry.disabled`).
 */
export type EntryStatus =
  | "governed"
  /**
   * A remote server the shim cannot govern (the deprecated HTTP+SSE transport, a websocket, an
   * agent whose config wrap does not rewrite remote entries in). Remote servers over Streamable
   * HTTP are `governed`: rewritten into `thoughtgate shim --url` (see `ServerEntry.remote`).
   */
  | "remote"
  /**
   * Already runs this thoughtgate's shim in the form wrap writes (enrolled, or rewritten by another
   * wrap of the agent): governed, nothing to rewrite (src/wrap/shim-entry.ts).
   */
  | "wrapped"
  /** An extension decides the command (a Zed or Gemini CLI extension), or it runs inside the agent (a goose builtin). */
  | "extension"
  /** Not a server the agent could start (no command, args not strings, ...). */
  | "invalid"
  /**
   * Started by the agent from somewhere wrap does not rewrite (a Claude Code plugin): wrap stops
   * before the agent starts unless `--allow-ungoverned`.
   */
  | "refused"
  /** The file it is in cannot be edited safely (see the file's `problems`), so nothing in it is. */
  | "file-problem";

/**
 * A remote (Streamable HTTP) server as its entry names it: the URL, its key (`url`, `serverUrl`,
 * `httpUrl`), the headers, and whether the entry said `type`. The rewrite replaces the whole entry
 * with a stdio shim entry that reaches the same URL with the same headers.
 */
export type RemoteTarget = { url: string; urlKey: string; headers: Record<string, string>; typed: boolean };

/** The command line as the agent will run it: `${VAR}` references expanded. */
export type CommandLine = { command: string; args: string[]; env: Record<string, string> };

/**
 * Where an entry keeps its command line: the keys `rewrite` owns. Most agents write
 * `{command, args, env}` in the entry itself; Zed's older form and Cline's CLI nest them
 * (`command: {path, args, env}`, `transport: {command, args, env}`); opencode has one list
 * `command: [cmd, ...args]` and `environment`; goose says `cmd` and `envs`.
 */
export type EntryLayout = {
  /** Keys from the entry to the object holding the command line: [] for the entry itself. */
  at: string[];
  /** The command's key: a string, or (without `args`) a list holding the command and its args. */
  command: string;
  /** The args list's key; absent when `command` is a `[command, ...args]` list or a whole command line. */
  args?: string;
  env: string;
  /** `command` holds the whole command line as one string (Gemini CLI's `mcp.serverCommand`: command-line.ts). */
  line?: true;
};

export const STANDARD_LAYOUT: EntryLayout = { at: [], command: "command", args: "args", env: "env" };

export type ServerEntry = {
  name: string;
  agent: AgentType;
  scope: ConfigScope;
  /** Absolute path of the file the entry is in. */
  file: string;
  /** Where the entry object sits in the file (keys, in JSON, TOML or YAML alike), for `rewrite` and `restoreOwnedKeys`. */
  jsonPath: JSONPath;
  layout: EntryLayout;
  transport: "stdio" | "remote";
  /** A remote server's endpoint as written (`${VAR}` references unexpanded), when it is one. */
  remote?: RemoteTarget;
  /** As written in the file (`${VAR}` references unexpanded); undefined when there is none. */
  command: string | undefined;
  args: string[];
  env: Record<string, string>;
  /** What the agent will actually run, `${VAR}` references expanded; only for stdio entries with a command. */
  effective: CommandLine | undefined;
  status: EntryStatus;
  governed: boolean;
  /** Why the entry is not governed (absent when it is). */
  reason?: string;
  /**
   * Set when a scope the agent prefers defines the same name (Claude Code local > project > user,
   * Cursor project > user), so the agent should not start this one. Such an entry is still
   * governed: if the agent's precedence is not what we think, nothing runs around the shim.
   */
  shadowedBy?: { scope: ConfigScope; file: string };
  /** The command line as written, when the entry is one string (`layout.line`). */
  line?: string;
  /** Zed only: `command` as a string with sibling `args`/`env` (flat), or `command: {path, args, env}` (nested). */
  form?: "flat" | "nested";
  /**
   * Set when the config turns the server off (`disabled: true`, `enabled: false`,
   * `disabledMcpjsonServers`, ...): what turns it off. Such an entry is still rewritten, flag
   * kept, so a server switched on during the session runs through the shim too.
   */
  disabled?: string;
  /** Things the user should know that do not stop the rewrite (an unset variable, a VS Code `${input:…}`). */
  warnings: string[];
};

export type ConfigFile = {
  agent: AgentType;
  path: string;
  /** The file's main scope; Claude Code's `~/.claude.json` also holds `local` entries (see each entry's scope). */
  scope: ConfigScope;
  exists: boolean;
  /** The file's exact text ("" when it does not exist); what `rewrite` edits and the backup must equal. */
  text: string;
  entries: ServerEntry[];
  /** Reasons this file must not be touched (does not parse, duplicate keys, ...). Empty when it is usable. */
  problems: string[];
  /** Things worth saying that do not stop the rewrite. */
  warnings: string[];
};

/** What `rewrite` puts in place of a governed entry's command: the shim binary, its args, extra env. */
export type ShimCommand = { command: string; args: string[]; env: Record<string, string> };
