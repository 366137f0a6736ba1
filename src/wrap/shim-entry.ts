/**
 * What `wrap` and `enroll` write into a governed entry, and how an entry already written so is
 * known: `<shim path> shim --server-id ID -- <the original command>` (or, for a remote server,
 * `… shim --server-id ID --url URL --header-env VAR…`). The entry names the server and nothing of a
 * session (no endpoint, secret or record): every run of the agent reads the same file, and a shim
 * finds its session from the agent that started it (governance/deciders/find-session.ts).
 *
 * An entry counts as running through ThoughtGate only when it is exactly that: its command is, by
 * device and inode once links are resolved, this thoughtgate or the shim path, and its arguments are
 * the form above with the server id wrap gives that entry. Anything else that merely looks like it
 * (a `thoughtgate` on PATH that is another file, `sh -c '…' thoughtgate shim`, a governance variable
 * in its env, another server id) is rewritten like any other server: it then runs inside a shim.
 * So is an entry of that form whose `env` sets a variable that would place a shim (`HOME`, the XDG
 * state or config directory, `THOUGHTGATE_*`: core/user-environment.ts): the shim wrap writes in
 * front of it takes where it belongs from the user's own files, whatever that `env` says.
 */
import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { isPlacingVariable } from "../core/user-environment.ts";
import { remoteShimArgs } from "./remote-entry.ts";
import { fileIdentity } from "./shim-path.ts";
import type { AgentContext, ConfigFile, ServerEntry, ShimCommand } from "./adapters/index.ts";

/**
 * The server id each runnable entry gets: its name, or `name@scope` for a name an entry earlier in
 * the list (a scope the agent reads first) already has, so ids are unique in a session. Decided
 * from the files alone, so every wrap and enroll gives an entry the same id.
 */
export function serverIds(files: readonly ConfigFile[]): Map<ServerEntry, string> {
  const ids = new Map<ServerEntry, string>();
  const seen = new Set<string>();
  for (const entry of files.flatMap((file) => file.entries)) {
    if (entry.status !== "governed") continue;
    const id = seen.has(entry.name) ? `${entry.name}@${entry.scope}` : entry.name;
    seen.add(entry.name);
    ids.set(entry, id);
  }
  return ids;
}

/** The shim command for `entry`, run from `binary` (the shim path). */
export function shimCommandFor(binary: string, serverId: string, entry: ServerEntry): ShimCommand {
  const common = ["shim", "--server-id", serverId];
  if (entry.remote) {
    const remote = remoteShimArgs(entry.remote);
    return { command: binary, args: [...common, ...remote.args], env: remote.env };
  }
  // The original command and args exactly as written (unexpanded `${VAR}`s stay references).
  return { command: binary, args: [...common, "--", entry.command ?? "", ...entry.args], env: {} };
}

/**
 * Mark the entries that already run this thoughtgate's shim in wrap's form (`status: "wrapped"`:
 * governed, nothing to rewrite). `files` are this binary and the shim path (shim-path.ts,
 * `shimFiles`); `ids` the server ids wrap gives the entries (`serverIds`).
 */
export function markOwnShims(files: readonly ConfigFile[], ours: ReadonlySet<string>, ids: ReadonlyMap<ServerEntry, string>, ctx: AgentContext): void {
  for (const entry of files.flatMap((file) => file.entries)) {
    const id = ids.get(entry);
    if (id === undefined || entry.transport !== "stdio" || !entry.effective) continue;
    if (Object.keys(entry.env).some(isPlacingVariable)) continue;
    if (!isOwnShim(entry.effective, id, ours, ctx)) continue;
    entry.status = "wrapped";
    entry.governed = false;
    entry.reason = "runs through thoughtgate already";
  }
}

function isOwnShim(line: NonNullable<ServerEntry["effective"]>, id: string, ours: ReadonlySet<string>, ctx: AgentContext): boolean {
  const file = resolveCommand(line.command, ctx);
  if (file === null || !ours.has(file)) return false;
  const [shim, flag, given, ...rest] = line.args;
  if (shim !== "shim" || flag !== "--server-id" || given !== id) return false;
  if (rest[0] === "--") return rest.length > 1;
  return isRemoteForm(rest);
}

/** `--url URL` or `--url-env VAR`, then only `--header-env VAR` pairs: what `remoteShimArgs` writes. */
function isRemoteForm(rest: readonly string[]): boolean {
  const [flag, value, ...headers] = rest;
  if ((flag !== "--url" && flag !== "--url-env") || value === undefined) return false;
  if (headers.length % 2 !== 0) return false;
  return headers.every((part, i) => (i % 2 === 0 ? part === "--header-env" : part !== "" && !part.startsWith("-")));
}

/** The file (device and inode) the agent would run for `command`: a path, or a name looked up on its PATH. */
function resolveCommand(command: string, ctx: AgentContext): string | null {
  const path = command.includes("/") ? (isAbsolute(command) ? command : resolve(ctx.cwd, command)) : Bun.which(command, { PATH: ctx.env.PATH ?? "" });
  if (!path) return null;
  const stats = statSync(path, { throwIfNoEntry: false });
  return stats?.isFile() ? fileIdentity(stats) : null;
}

