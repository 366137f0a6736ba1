import { getNodeValue, type JSONPath, type Node } from "jsonc-parser";
import { buildEntry, standardEntry, type EntryFields, type MapSpec } from "./entry-fields.ts";
import type { ExpansionSyntax } from "./expand.ts";
import { isPlainObject, jsoncProblem, locateValues, parseSpan, propertiesOf, readConfigText, type Subtree } from "./jsonc.ts";
import type { AgentContext, AgentType, ConfigFile, ConfigScope, DiscoverOptions, ServerEntry } from "./types.ts";

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
