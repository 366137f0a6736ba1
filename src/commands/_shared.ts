import type { ArgsDef } from "citty";
import { join } from "node:path";
import { parseDuration } from "../core/duration.ts";
import { stateDir } from "../core/paths.ts";
import { isProfile, PROFILES, type Profile } from "../core/profile.ts";
import { usageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { showInvisible } from "../core/visible-text.ts";

/** Flags several commands share. */
export const commonArgs = {
  verbose: { type: "boolean", description: "Debug logging and stack traces on errors" },
} as const satisfies ArgsDef;

export const profileArg = {
  profile: {
    type: "string",
    description: "production (enforce) or development (log WOULD_BLOCK and forward); default $THOUGHTGATE_PROFILE or production",
    valueHint: "production|development",
  },
} as const satisfies ArgsDef;

export function resolveProfile(flag: string | undefined): Profile {
  const value = givenOrAbsent(flag, "--profile") ?? givenOrAbsent(process.env.THOUGHTGATE_PROFILE, "$THOUGHTGATE_PROFILE") ?? "production";
  if (!isProfile(value)) throw usageError(`--profile: expected one of ${PROFILES.join("|")}, got ${JSON.stringify(value)}${didYouMean(value, PROFILES, { prod: "production", dev: "development" })}`);
  return value;
}

/** `--events PATH|none` for the commands that write the event stream (shim, arbiter). */
export const eventsArg = {
  events: {
    type: "string",
    description: "Append the JSONL audit event stream to PATH, or none to turn it off (default $THOUGHTGATE_EVENTS, else one file per run under ~/.local/state/thoughtgate/runs/)",
    valueHint: "PATH|none",
  },
} as const satisfies ArgsDef;

/**
 * The event stream's path: the flag, else `$THOUGHTGATE_EVENTS`, else a new file for this run in
 * the state directory, so the audit is on unless turned off with `none`. Given but empty is an
 * error (an unset `${VAR}` in an agent's config produces exactly that), never "off".
 */
export function eventsPath(flag: string | undefined, run: { runId: string; serverId: string }): string | null {
  const given = flag !== undefined ? { value: flag, from: "--events" } : process.env.THOUGHTGATE_EVENTS !== undefined ? { value: process.env.THOUGHTGATE_EVENTS, from: "$THOUGHTGATE_EVENTS" } : null;
  if (given === null) return defaultEventsPath(run);
  if (given.value.trim() === "") throw usageError(`${given.from} is empty: give a file path, or none to turn the audit off`);
  return given.value === "none" ? null : given.value;
}

/**
 * `~/.local/state/thoughtgate/runs/<date>/<server id>-<run id>.jsonl`, both ids made file-safe: they
 * come from flags and `$THOUGHTGATE_RUN_ID`, which an agent's config sets, and a `/` in either must
 * not put the audit anywhere else.
 */
function defaultEventsPath(run: { runId: string; serverId: string }, env: NodeJS.ProcessEnv = process.env): string {
  const day = new Date().toISOString().slice(0, 10);
  const safe = (id: string) => id.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 64);
  return join(stateDir(env), "runs", day, `${safe(run.serverId) || "server"}-${safe(run.runId)}.jsonl`);
}

/** The run id a wrap session hands its shims, else a new one. Set but empty is an error: it names the audit file. */
export function runIdFromEnv(): string {
  return givenOrAbsent(process.env.THOUGHTGATE_RUN_ID, "$THOUGHTGATE_RUN_ID") ?? Bun.randomUUIDv7();
}

/**
 * A string flag (or variable) that may be absent but, when given, must say something: an unset
 * `${VAR}` in an agent's config turns `--governance-endpoint ${VAR}` into an empty value, which
 * must stop the command rather than quietly mean "not given".
 */
export function givenOrAbsent(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw usageError(`${name} is empty: give a value or leave it out`);
  return value;
}

/** A duration flag that may be absent. */
export function optionalDuration(value: string | undefined, flag: string): number | undefined {
  const given = givenOrAbsent(value, flag);
  return given === undefined ? undefined : parseDuration(given, flag);
}

/**
 * The commands that run another program after `--`: what that program is, its usage form, and an
 * example for the usage error.
 */
export const CHILD_COMMANDS: Record<string, { what: string; usage: string; example: string }> = {
  wrap: { what: "the agent's command", usage: "-- CMD [ARGS...]", example: "claude" },
  shim: { what: "the MCP server's command", usage: "-- CMD [ARGS...] | --url URL", example: "npx -y @modelcontextprotocol/server-everything" },
  inspect: { what: "the MCP server's command", usage: "-- CMD [ARGS...]", example: "npx -y @modelcontextprotocol/server-everything" },
  arbiter: { what: "the agent's command", usage: "-- CMD [ARGS...]", example: "codecli run" },
};

/**
 * Split `[flags…] -- CMD [ARGS…]` (shim, inspect, wrap, arbiter). Everything after the first `--`
 * belongs to the child, so its own flags are never read as ours; before it, only flags we define
 * are accepted. A command typed without `--` (`wrap claude -p hi`) is answered with the line that
 * was meant, not with "unknown flag -p".
 */
export function splitChildCommand(rawArgs: string[], args: ArgsDef, commandName: string): { ours: string[]; child: string[] } {
  const separator = rawArgs.indexOf("--");
  const ours = separator === -1 ? rawArgs : rawArgs.slice(0, separator);
  const child = separator === -1 ? [] : rawArgs.slice(separator + 1);
  if (separator === -1) rejectChildWithoutSeparator(rawArgs, args, commandName);
  rejectUnknownFlags(ours, args);
  if (child.length === 0) throw usageError(`${commandName} needs ${CHILD_COMMANDS[commandName]?.what ?? "a command"} after --, e.g. thoughtgate ${commandName} -- ${CHILD_COMMANDS[commandName]?.example ?? "CMD [ARGS...]"}`);
  return { ours, child };
}

/**
 * `thoughtgate wrap claude -p hi`: the first word that is neither one of our flags nor a flag's
 * value starts the child's command, and the error says the line with `--` in its place.
 */
export function rejectChildWithoutSeparator(rawArgs: string[], args: ArgsDef, commandName: string): void {
  const start = rawArgs.findIndex((arg, i) => !arg.startsWith("-") && !isFlagValue(rawArgs, i, args));
  if (start === -1) return;
  // An unknown flag before the command word is the first mistake to report.
  rejectUnknownFlags(rawArgs.slice(0, start), args);
  const meant = ["thoughtgate", commandName, ...rawArgs.slice(0, start), "--", ...rawArgs.slice(start)].map(shellWord).join(" ");
  throw usageError(`${commandName} runs ${CHILD_COMMANDS[commandName]?.what ?? "its command"} after --: did you mean \`${meant}\`?`);
}

export function rejectUnknownFlags(rawArgs: string[], args: ArgsDef): void {
  const known = new Set<string>();
  const suggestible: string[] = [];
  for (const [name, def] of Object.entries(args)) {
    known.add(name);
    known.add(kebab(name));
    if (def.type !== "positional") suggestible.push(`--${kebab(name)}`);
    const aliases = "alias" in def && def.alias !== undefined ? def.alias : [];
    for (const alias of Array.isArray(aliases) ? aliases : [aliases]) known.add(alias);
    if (def.type === "boolean") known.add(`no-${kebab(name)}`);
  }
  for (const arg of rawArgs) {
    if (!arg.startsWith("-") || arg === "-") continue;
    const name = arg.replace(/^--?/, "").split("=")[0] ?? "";
    const flag = arg.split("=")[0] ?? arg;
    if (!known.has(name)) throw usageError(`unknown flag ${showInvisible(flag)}${didYouMean(flag.startsWith("--") ? flag : `--${name}`, suggestible)}`);
  }
  const positional = rawArgs.filter((arg, i) => !arg.startsWith("-") && !isFlagValue(rawArgs, i, args));
  const positionalAllowed = Object.values(args).some((def) => def.type === "positional");
  if (positional.length > 0 && !positionalAllowed) throw usageError(`unexpected argument ${JSON.stringify(positional[0])}`);
}

/**
 * A word as a POSIX shell reads it back, quoted only when it has to be; control and invisible
 * characters shown as escapes (src/core/visible-text.ts), so an echoed argument cannot drive the
 * terminal.
 */
export function shellWord(word: string): string {
  return showInvisible(/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);
}

function isFlagValue(rawArgs: string[], index: number, args: ArgsDef): boolean {
  const previous = rawArgs[index - 1];
  if (previous === undefined || !previous.startsWith("-") || previous.includes("=")) return false;
  const name = previous.replace(/^--?/, "");
  const def = Object.entries(args).find(([key, d]) => key === name || kebab(key) === name || ("alias" in d && d.alias === name))?.[1];
  return def !== undefined && def.type !== "boolean";
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `--governance-port`: 0 (any free port) when absent. */
export function parsePort(flag: string | undefined): number {
  const value = givenOrAbsent(flag, "--governance-port");
  if (value === undefined) return 0;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw usageError(`--governance-port: expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return port;
}
