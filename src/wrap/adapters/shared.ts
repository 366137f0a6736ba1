import { basename, dirname, join, resolve } from "node:path";
import { getNodeValue, type JSONPath, type Node } from "jsonc-parser";
import { expandCommandLine, type ExpansionSyntax } from "./expand.ts";
import { isPlainObject, jsoncProblem, locateValues, parseSpan, propertiesOf, readConfigText, type Subtree } from "./jsonc.ts";
import type { AgentContext, AgentType, CommandLine, ConfigFile, ConfigScope, DiscoverOptions, EntryStatus, ServerEntry } from "./types.ts";

/** What every entry of one server map shares. */
export type MapSpec = {
  agent: AgentType;
  scope: ConfigScope;
  file: string;
  /** Where the map (`mcpServers`, `servers`, `context_servers`) is in the file. */
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

/** A key that appears twice in an entry object or in its nested Zed `command` object. */
function duplicateInside(node: Node): string | undefined {
  if (node.type !== "object") return undefined;
  const { props, duplicate } = propertiesOf(node);
  const command = props.get("command");
  return duplicate ?? (command?.type === "object" ? propertiesOf(command).duplicate : undefined);
}

/** One entry as an adapter reads it; `buildEntry` adds the rest. */
export type EntryFields = {
  transport: "stdio" | "remote";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Set when the entry is not governed for an agent-specific reason. */
  status?: Exclude<EntryStatus, "governed" | "wrapped">;
  reason?: string;
  form?: "flat" | "nested";
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
  if (fields.reason) entry.reason = fields.reason;
  if (entry.status === "governed" && isWrapped(entry)) {
    entry.status = "wrapped";
    entry.reason = "already runs through `thoughtgate shim` (left over from a wrap that did not restore? `thoughtgate unwrap` repairs it)";
  }
  entry.governed = entry.status === "governed";
  return entry;
}

const REMOTE_TYPES = new Set(["http", "sse", "streamable-http", "streamableHttp", "ws"]);

/**
 * The shape Claude Desktop, Claude Code, Cursor, VS Code, Windsurf and custom configs share:
 * `{ command, args?, env?, type? }` for stdio, `{ url | serverUrl, type? }` for remote servers.
 * An entry with a `command` is stdio whether or not it says `type: "stdio"`.
 */
export function standardEntry(value: unknown): EntryFields {
  if (!isPlainObject(value)) return invalid("is not an object");
  const type = typeof value.type === "string" ? value.type : undefined;
  if (typeof value.url === "string" || typeof value.serverUrl === "string" || (type !== undefined && REMOTE_TYPES.has(type))) {
    return remote(type ?? "url");
  }
  if (type !== undefined && type !== "stdio") return invalid(`has an unknown type "${type}"`);
  return stdioFields(value.command, value.args, value.env);
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

export function remote(kind: string): EntryFields {
  return { transport: "remote", status: "remote", reason: `remote (${kind}): left untouched, only stdio servers run through the shim` };
}

export function invalid(why: string): EntryFields {
  return { transport: "stdio", status: "invalid", reason: `${why}: the agent cannot start it, left untouched` };
}

/** Mark an entry as turned off in the config. Only a governed or invalid entry changes. */
export function disable(entry: ServerEntry, reason: string): void {
  if (entry.status !== "governed" && entry.status !== "invalid" && entry.status !== "wrapped") return;
  entry.status = "disabled";
  entry.reason = `${reason}: the agent does not start it, left untouched`;
  entry.governed = false;
}

/**
 * Same-named servers in several scopes: the agent starts only the one from the scope it prefers.
 * `entries` come in order of preference; an entry the agent loads (not disabled or invalid)
 * claims its name, and later ones with that name get `shadowedBy`. They stay governed.
 */
export function applyPrecedence(entries: readonly ServerEntry[]): void {
  const winners = new Map<string, ServerEntry>();
  for (const entry of entries) {
    if (entry.status === "disabled" || entry.status === "invalid") continue;
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

/** `dir` and each of its parents up to the root, nearest first. */
export function selfAndParents(dir: string): string[] {
  const dirs = [dir];
  for (let parent = dirname(dir); parent !== dirs.at(-1); parent = dirname(parent)) dirs.push(parent);
  return dirs;
}
