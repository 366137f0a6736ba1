import type { JSONPath } from "jsonc-parser";
import { expandCommandLine, type ExpansionSyntax } from "./expand.ts";
import { isPlainObject } from "./jsonc.ts";
import { STANDARD_LAYOUT, type AgentContext, type AgentType, type CommandLine, type ConfigScope, type EntryLayout, type EntryStatus, type RemoteTarget, type ServerEntry } from "./types.ts";

/**
 * One server entry as wrap reads it: the fields an adapter takes from the agent's own shape (stdio,
 * remote, switched off, invalid), and the `ServerEntry` every adapter's entries become, whether
 * wrap governs it or says why not.
 */

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

export function buildEntry(name: string, spec: MapSpec, fields: EntryFields): ServerEntry {
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
