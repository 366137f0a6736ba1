import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { getNodeValue, type JSONPath, type Node } from "jsonc-parser";
import { expandCommandLine, type ExpansionSyntax } from "./expand.ts";
import { isPlainObject, jsoncProblem, locateValues, parseSpan, propertiesOf, readConfigText, type Subtree } from "./jsonc.ts";
import { STANDARD_LAYOUT, type AgentContext, type AgentType, type CommandLine, type ConfigFile, type ConfigScope, type DiscoverOptions, type EntryLayout, type EntryStatus, type RemoteTarget, type ServerEntry } from "./types.ts";

/** What every entry of one server map shares. */
export type MapSpec = {
  agent: AgentType;
  scope: ConfigScope;
  file: string;
  /** Where the map (`mcpServers`, `servers`, `context_servers`, `mcp_servers`, `extensions`) is in the file. */
  mapPath: JSONPath;
  syntax: ExpansionSyntax;
  ctx: AgentContext;
};

/**
 * Read a config file and find the values at `paths` in it. Any reason not to touch the file
 * (unreadable, not JSONC, duplicate keys on the way to a server map) lands in `file.problems`
 * and no values are returned.
 */
export function openConfigFile(
  agent: AgentType,
  path: string,
  scope: ConfigScope,
  paths: readonly JSONPath[],
): { file: ConfigFile; values: (Subtree | undefined)[] } {
  const read = readConfigText(path);
  const file: ConfigFile = { agent, path, scope, exists: read.exists, text: read.text, entries: [], problems: [], warnings: [] };
  const none = paths.map(() => undefined);
  if (read.problem) file.problems.push(read.problem);
  if (!read.exists || read.problem) return { file, values: none };
  const problem = jsoncProblem(read.text);
  if (problem) {
    file.problems.push(problem);
    return { file, values: none };
  }
  const { spans, duplicates } = locateValues(read.text, paths);
  for (const key of duplicates) file.problems.push(`has "${key}" twice: the agent reads the last one, so wrap leaves the file alone`);
  if (duplicates.length > 0) return { file, values: none };
  return { file, values: spans.map((span) => (span ? parseSpan(read.text, span) : undefined)) };
}

/**
 * The entries of one server map, or a problem when the map itself is unusable. `entryOf` turns one
 * entry's value into its fields; everything common (expansion, status, double-wrap) happens here.
 */
export function entriesOfMap(file: ConfigFile, map: Subtree | undefined, spec: MapSpec, entryOf: (value: unknown) => EntryFields): ServerEntry[] {
  if (!map) return [];
  const label = spec.mapPath.join(".");
  if (map.node.type !== "object") {
    file.problems.push(`"${label}" is not an object`);
    return [];
  }
  const { props, duplicate } = propertiesOf(map.node);
  if (duplicate !== undefined) {
    file.problems.push(`has the server "${duplicate}" twice in "${label}": the agent reads the last one, so wrap leaves the file alone`);
    return [];
  }
  const entries: ServerEntry[] = [];
  for (const [name, node] of props) {
    const inner = duplicateInside(node);
    if (inner !== undefined) {
      file.problems.push(`has "${inner}" twice in the server "${name}": the agent reads the last one, so wrap leaves the file alone`);
      return [];
    }
    entries.push(buildEntry(name, spec, entryOf(getNodeValue(node) as unknown)));
  }
  return entries;
}

/**
 * The entries of a server map read as plain data (TOML and YAML, whose parsers refuse a key
 * defined twice, so there is no duplicate to look for), or a problem when the map is unusable.
 */
export function entriesOfPlainMap(file: ConfigFile, map: unknown, spec: MapSpec, entryOf: (value: unknown) => EntryFields): ServerEntry[] {
  if (map === undefined || map === null) return [];
  if (!isPlainObject(map)) {
    file.problems.push(`"${spec.mapPath.join(".")}" is not a table of servers`);
    return [];
  }
  return Object.entries(map).map(([name, value]) => buildEntry(name, spec, entryOf(value)));
}

/**
 * A key that appears twice in an entry object or in an object inside it (Zed's nested `command`,
 * Cline's `transport`, an `env`): the agent would read the last one, rewrite the first.
 */
function duplicateInside(node: Node): string | undefined {
  if (node.type !== "object") return undefined;
  const { props, duplicate } = propertiesOf(node);
  if (duplicate !== undefined) return duplicate;
  for (const value of props.values()) {
    const inner = value.type === "object" ? propertiesOf(value).duplicate : undefined;
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** One entry as an adapter reads it; `buildEntry` adds the rest. */
export type EntryFields = {
  transport: "stdio" | "remote";
  /** A remote server wrap can govern (Streamable HTTP). */
  remote?: RemoteTarget;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Set when the entry is not governed for an agent-specific reason. */
  status?: Exclude<EntryStatus, "governed" | "wrapped">;
  reason?: string;
  form?: "flat" | "nested";
  /** Where the command line is in the entry; `STANDARD_LAYOUT` when absent. */
  layout?: EntryLayout;
  /** What in the entry turns the server off (`disabled: true`), when something does. */
  disabled?: string;
};

function buildEntry(name: string, spec: MapSpec, fields: EntryFields): ServerEntry {
  const warnings = new Set<string>();
  const written: CommandLine | undefined =
    fields.transport === "stdio" && fields.command !== undefined ? { command: fields.command, args: fields.args ?? [], env: fields.env ?? {} } : undefined;
  const effective = written && expandCommandLine(written, spec.syntax, spec.ctx, warnings);
  const entry: ServerEntry = {
    name,
    agent: spec.agent,
    scope: spec.scope,
    file: spec.file,
    jsonPath: [...spec.mapPath, name],
    layout: fields.layout ?? STANDARD_LAYOUT,
    transport: fields.transport,
    command: fields.command,
    args: fields.args ?? [],
    env: fields.env ?? {},
    effective,
    status: fields.status ?? "governed",
    governed: false,
    warnings: [...warnings],
  };
  if (fields.form) entry.form = fields.form;
  if (fields.remote) entry.remote = fields.remote;
  if (fields.reason) entry.reason = fields.reason;
  if (fields.disabled) entry.disabled = fields.disabled;
  if (entry.status === "governed" && isWrapped(entry)) {
    entry.status = "wrapped";
    entry.reason = "already runs through `thoughtgate shim` (left over from a wrap that did not restore? `thoughtgate unwrap` repairs it)";
  }
  entry.governed = entry.status === "governed";
  return entry;
}

const REMOTE_TYPES = new Set(["http", "sse", "streamable-http", "streamableHttp", "streamable_http", "ws"]);
/** Types naming the deprecated HTTP+SSE transport of MCP 2024-11-05, which the shim does not speak. */
const SSE_TYPES = new Set(["sse"]);
const URL_KEYS = ["url", "serverUrl", "httpUrl"];

/** How an agent reads a remote entry. */
export type RemoteReading = {
  /** What a `url` without a `type` is: Streamable HTTP (most agents try it first), or SSE (Gemini CLI). */
  bareUrl: "http" | "sse";
  /** Set when wrap does not rewrite this agent's remote entries: why, for the coverage table. */
  ungoverned?: string;
};

const DEFAULT_REMOTE: RemoteReading = { bareUrl: "http" };

/**
 * The shape most agents share (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Copilot,
 * Gemini CLI, Kiro, Cline, Amp, Junie, custom): `{ command, args?, env?, type? }` for stdio,
 * `{ url | serverUrl | httpUrl, headers?, type? }` for remote servers. An entry with a `command` is
 * stdio whether or not it says `type: "stdio"`; `stdioTypes` are other names an agent gives stdio.
 * A remote entry over Streamable HTTP is governed (rewritten into `shim --url`); one over the old
 * HTTP+SSE transport or a websocket is not.
 */
export function standardEntry(value: unknown, stdioTypes: readonly string[] = [], reading: RemoteReading = DEFAULT_REMOTE): EntryFields {
  if (!isPlainObject(value)) return invalid("is not an object");
  const type = typeof value.type === "string" ? value.type : undefined;
  const urlKey = URL_KEYS.find((key) => typeof value[key] === "string");
  if (urlKey !== undefined || (type !== undefined && REMOTE_TYPES.has(type))) return remoteEntry(value, type, urlKey, reading);
  if (type !== undefined && type !== "stdio" && !stdioTypes.includes(type)) return invalid(`has an unknown type "${type}"`);
  return stdioFields(value.command, value.args, value.env);
}

function remoteEntry(value: Record<string, unknown>, type: string | undefined, urlKey: string | undefined, reading: RemoteReading): EntryFields {
  const kind = type ?? urlKey ?? "url";
  if (reading.ungoverned !== undefined) return remote(kind, reading.ungoverned);
  if (type === "ws" || type === "tcp") return remote(kind, "the shim speaks Streamable HTTP, not this transport");
  const sse = type !== undefined ? SSE_TYPES.has(type) : urlKey === "url" && reading.bareUrl === "sse";
  if (sse) return remote(kind, "the deprecated HTTP+SSE transport (MCP 2024-11-05), which the shim does not speak");
  if (urlKey === undefined) return invalid(`is type "${kind}" without a url`);
  const headers = value.headers;
  if (headers !== undefined && !(isPlainObject(headers) && Object.values(headers).every((item) => typeof item === "string"))) {
    return invalid("has headers that are not strings");
  }
  const remoteTarget: RemoteTarget = { url: value[urlKey] as string, urlKey, headers: (headers as Record<string, string> | undefined) ?? {}, typed: type !== undefined };
  return { transport: "remote", remote: remoteTarget };
}

/** `disabled: true` in the entry, as Windsurf, Kiro and Cline write it. */
export function disabledFlag(value: unknown): string | undefined {
  return isPlainObject(value) && value.disabled === true ? "`disabled: true`" : undefined;
}

/** `enabled: false` in the entry, as Zed, Codex, opencode and goose write it. */
export function enabledFalse(value: unknown, written = "`enabled: false`"): string | undefined {
  return isPlainObject(value) && value.enabled === false ? written : undefined;
}

/** `standardEntry`, noting the entry's own off switch (`disabled: true` by default). */
export function entryWithSwitch(off: (value: unknown) => string | undefined = disabledFlag, stdioTypes: readonly string[] = [], reading: RemoteReading = DEFAULT_REMOTE) {
  return (value: unknown): EntryFields => {
    const fields = standardEntry(value, stdioTypes, reading);
    const disabled = off(value);
    return disabled ? { ...fields, disabled } : fields;
  };
}

export function stdioFields(command: unknown, args: unknown, env: unknown): EntryFields {
  if (typeof command !== "string" || command === "") return invalid("has no command");
  if (args !== undefined && !(Array.isArray(args) && args.every((arg) => typeof arg === "string"))) {
    return invalid("has args that are not a list of strings");
  }
  if (env !== undefined && !(isPlainObject(env) && Object.values(env).every((value) => typeof value === "string"))) {
    return invalid("has env values that are not strings");
  }
  return { transport: "stdio", command, args: (args as string[] | undefined) ?? [], env: (env as Record<string, string> | undefined) ?? {} };
}

/** A remote entry that stays ungoverned, and why. */
export function remote(kind: string, why = "wrap does not rewrite this agent's remote entries"): EntryFields {
  return { transport: "remote", status: "remote", reason: `remote (${kind}): left untouched, ${why}` };
}

export function invalid(why: string): EntryFields {
  return { transport: "stdio", status: "invalid", reason: `${why}: the agent cannot start it, left untouched` };
}

/**
 * Note that the config turns the entry off (a list of disabled names outside the entry, such as
 * `disabledMcpjsonServers`). The entry is still rewritten, so turning it on mid-session is governed.
 */
export function disable(entry: ServerEntry, why: string): void {
  entry.disabled ??= why;
}

/**
 * Same-named servers in several scopes: the agent starts only the one from the scope it prefers.
 * `entries` come in order of preference; an entry the agent loads (not disabled or invalid)
 * claims its name, and later ones with that name get `shadowedBy`. They stay governed.
 */
export function applyPrecedence(entries: readonly ServerEntry[]): void {
  const winners = new Map<string, ServerEntry>();
  for (const entry of entries) {
    if (entry.disabled !== undefined || entry.status === "invalid") continue;
    const winner = winners.get(entry.name);
    if (winner) entry.shadowedBy = { scope: winner.scope, file: winner.file };
    else winners.set(entry.name, entry);
  }
}

const THOUGHTGATE_BINARY = /^thoughtgate(\.exe)?$/i;
/** `wrap` puts these in a rewritten entry's env; nothing else sets them. */
const WRAPPED_ENV = ["THOUGHTGATE_GOVERNANCE_ENDPOINT", "THOUGHTGATE_GOVERNANCE_SECRET"];

/**
 * The entry already runs `thoughtgate shim` (a wrap that did not restore, or a
 * hand-written shim entry), so wrapping it again would nest a shim inside a shim. True when the
 * command (or a launcher in front of it, e.g. `bun cli.ts shim`) is a thoughtgate binary or
 * `binary`, with `shim` before any `--`; or when the env carries the governance variables wrap
 * injects.
 */
export function isWrapped(entry: Pick<ServerEntry, "command" | "args" | "env" | "effective">, binary?: string): boolean {
  const lines = [entry.effective, entry.command === undefined ? undefined : { command: entry.command, args: entry.args, env: entry.env }];
  return lines.some((line) => {
    if (!line) return false;
    if (WRAPPED_ENV.some((key) => key in line.env)) return true;
    const end = line.args.indexOf("--");
    const shimAt = line.args.slice(0, end < 0 ? undefined : end).indexOf("shim");
    if (shimAt < 0) return false;
    return [line.command, ...line.args.slice(0, shimAt)].some((part) => part === binary || THOUGHTGATE_BINARY.test(basename(part)));
  });
}

/** A JSON value as a plain list of strings, or undefined when it is anything else. */
export function stringList(node: Subtree | undefined): string[] | undefined {
  const value: unknown = node ? getNodeValue(node.node) : undefined;
  return Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined;
}

/** One agent's way of finding and reading its MCP config files. */
export type Adapter = {
  agent: AgentType;
  /** As the user knows it, for messages: "Claude Code". */
  label: string;
  /** Every file the agent may read its servers from, existing or not, most preferred scope first. */
  discover(ctx: AgentContext, options: DiscoverOptions): ConfigFile[];
};

/** A file whose servers are all in one map at the top (`mcpServers`, `servers`, `context_servers`). */
export function readMapFile(
  agent: AgentType,
  path: string,
  scope: ConfigScope,
  mapKey: string,
  syntax: ExpansionSyntax,
  ctx: AgentContext,
  entryOf: (value: unknown) => EntryFields = standardEntry,
): ConfigFile {
  const { file, values } = openConfigFile(agent, path, scope, [[mapKey]]);
  file.entries = entriesOfMap(file, values[0], { agent, scope, file: path, mapPath: [mapKey], syntax, ctx }, entryOf);
  return file;
}

/** `--config-path`, relative to the working directory. */
export function customPath(ctx: AgentContext, options: DiscoverOptions): string | undefined {
  return options.configPath === undefined ? undefined : resolve(ctx.cwd, options.configPath);
}

/** `$XDG_CONFIG_HOME` or `~/.config`. */
export function xdgConfigHome(ctx: AgentContext): string {
  return ctx.env.XDG_CONFIG_HOME || join(ctx.home, ".config");
}

/** Where desktop (Electron) apps keep their files: Application Support on macOS, XDG on Linux. */
export function appDataDir(ctx: AgentContext): string {
  return ctx.platform === "darwin" ? join(ctx.home, "Library", "Application Support") : xdgConfigHome(ctx);
}

/**
 * What `read` returns, or undefined when it throws: for looking at something the agent may not
 * have (a directory, a link, a JSON file it ignores when it cannot read it).
 */
export function ifReadable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** `dir` and each of its parents up to the root, nearest first. */
export function selfAndParents(dir: string): string[] {
  const dirs = [dir];
  for (let parent = dirname(dir); parent !== dirs.at(-1); parent = dirname(parent)) dirs.push(parent);
  return dirs;
}

/**
 * The directories whose project config an agent reads: the working directory and its parents up
 * to the repository root (the nearest one holding `.git`), nearest first. Outside a repository,
 * `outside` says what the agent does: only the working directory (Codex, Copilot, Amp) or every
 * parent up to the root (opencode).
 */
export function projectDirs(cwd: string, outside: "cwd" | "all"): string[] {
  const dirs = selfAndParents(resolve(cwd));
  const root = dirs.findIndex((dir) => existsSync(join(dir, ".git")));
  if (root >= 0) return dirs.slice(0, root + 1);
  return outside === "cwd" ? dirs.slice(0, 1) : dirs;
}
