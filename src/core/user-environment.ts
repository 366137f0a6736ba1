/**
 * Where a shim belongs is the user's and wrap's to say, never the entry's (docs/architecture.md,
 * decision 14; docs/security.md, "What an entry's environment can and cannot change").
 *
 * A shim inherits whatever environment its agent gives it, and an agent adds the entry's `env` to
 * it: a repository's `.mcp.json` can set `HOME`, `XDG_STATE_HOME` or `THOUGHTGATE_CONFIG` for its
 * server, and Codex passes its servers only a short list of the user's variables. Neither says
 * where the user's files are. So the variables that place a shim (`PLACEMENT`) are taken from the
 * user's own files instead, whenever the shim runs as the binary wrap and enroll write into entries:
 *
 * - That binary is `<state dir>/bin/thoughtgate` (or a session's pin `<state dir>/bin/<pin>/thoughtgate`,
 *   wrap/shim-path.ts), and its path is not the environment's but what the agent ran, so it names
 *   the user's state directory. That directory must be the user's: a real directory (no link)
 *   owned by this uid and writable by no one else.
 * - There, `user-environment.json` holds the placing variables of the user's own environment as
 *   wrap or enroll last saw them (written when they make the shim path). The shim replaces its
 *   placing variables with those, whatever the entry set, and says which it ignored.
 *
 * A shim run any other way (a person's own entry naming `thoughtgate shim`, a test) keeps its
 * environment: no wrap or enroll wrote that entry, and no entry wrap governs runs it so (an entry
 * that sets a placing variable never counts as already running through thoughtgate: shim-entry.ts).
 * The server itself still gets the entry's environment as written (commands/shim.ts keeps a copy).
 */
import { lstatSync, type Stats } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { writeFileAtomic } from "./atomic-write.ts";
import { messageOf } from "./errors.ts";
import { readRegularFile } from "./safe-open.ts";

const USER_ENVIRONMENT_FILE = "user-environment.json";

/**
 * `THOUGHTGATE_*` variables that place nothing: the session a shim was started in (checked against
 * the user's own state directory: governance/deciders/find-session.ts), the marker of a shim that became
 * its session's binary, the remote server's URL and headers wrap itself writes into the entry, the
 * service secret a person's own `--governance-endpoint` entry passes, the run id and the log level.
 */
const NOT_PLACING = new Set(["THOUGHTGATE_SESSION", "THOUGHTGATE_SESSION_BINARY", "THOUGHTGATE_URL", "THOUGHTGATE_GOVERNANCE_SECRET", "THOUGHTGATE_RUN_ID", "THOUGHTGATE_LOG_LEVEL", "THOUGHTGATE_ACTIVE"]);

/** Whether `key` decides where a shim's files are or whose policy it follows. */
export function isPlacingVariable(key: string): boolean {
  if (key === "HOME" || key === "XDG_STATE_HOME" || key === "XDG_CONFIG_HOME") return true;
  return key.startsWith("THOUGHTGATE_") && !NOT_PLACING.has(key) && !/^THOUGHTGATE_HEADER_\d+$/.test(key);
}

/** The placing variables of `env`, as the user's own (a relative `THOUGHTGATE_CONFIG` made absolute against `cwd`). */
function placingVariables(env: NodeJS.ProcessEnv, cwd: string): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || !isPlacingVariable(key)) continue;
    kept[key] = key.endsWith("_FILE") || key === "THOUGHTGATE_CONFIG" ? (value.trim() === "" || isAbsolute(value) ? value : resolve(cwd, value)) : value;
  }
  return kept;
}

/** Record the user's placing variables in their state directory (wrap and enroll, beside the shim path). */
export function writeUserEnvironment(stateDir: string, env: NodeJS.ProcessEnv, cwd: string): void {
  writeFileAtomic(join(stateDir, USER_ENVIRONMENT_FILE), `${JSON.stringify(placingVariables(env, cwd), null, 2)}\n`, { mode: 0o600 });
}

export type Placement = {
  /** The user's state directory, found from the shim's own path. */
  stateDir: string;
  /** The environment the shim governs with: the given one with its placing variables the user's. */
  env: Record<string, string>;
  /** Placing variables the given environment set otherwise (or set when the user's has none), by name. */
  ignored: string[];
};

/**
 * Where a shim run as `execPath` belongs: null when `execPath` is not a binary in a state directory
 * (the environment then stands as given); a refusal when it is, but that directory is not the user's
 * own or its record cannot be read (never a fallback to the environment: fail closed).
 */
export function placeShim(execPath: string, env: NodeJS.ProcessEnv, uid = process.getuid?.() ?? -1): Placement | { refused: string } | null {
  const stateDir = stateDirOf(execPath);
  if (stateDir === null) return null;
  for (const dir of [stateDir, join(stateDir, "bin")]) {
    const problem = notOwnDirectory(dir, uid);
    if (problem) return { refused: `${dir} ${problem}, so it is not taken for the user's state directory` };
  }
  const path = join(stateDir, USER_ENVIRONMENT_FILE);
  const read = readRegularFile(path, { follow: false, maxBytes: 64 * 1024 });
  let recorded: Record<string, string> = {};
  if (read.ok) {
    const problem = notOwnFile(read.stat, uid);
    if (problem) return { refused: `${path} ${problem}` };
    try {
      recorded = recordedVariables(JSON.parse(read.bytes.toString("utf8")));
    } catch (error) {
      return { refused: `${path} cannot be read (${messageOf(error)}); run thoughtgate wrap or enroll again to rewrite it` };
    }
  } else if (!read.missing) {
    return { refused: `${path} ${read.problem}` };
  }
  const placed: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && !isPlacingVariable(key)) placed[key] = value;
  Object.assign(placed, recorded);
  // The state directory is the one the shim runs from, whatever the record says.
  placed.XDG_STATE_HOME = dirname(stateDir);
  const home = placed.HOME ?? defaultHome(stateDir);
  if (home === undefined) return { refused: `${path} is missing and ${stateDir} is not under a home directory; run thoughtgate wrap or enroll again to write it` };
  placed.HOME = home;
  const ignored = Object.keys({ ...env, ...placed })
    .filter((key) => isPlacingVariable(key) && env[key] !== placed[key] && env[key] !== undefined && env[key] !== "")
    .sort();
  return { stateDir, env: placed, ignored };
}

/** `<state dir>` for `<state dir>/bin/thoughtgate` and `<state dir>/bin/<pin>/thoughtgate`, where the state dir is `…/thoughtgate`; else null. */
export function stateDirOf(execPath: string): string | null {
  if (basename(execPath) !== "thoughtgate") return null;
  let bin = dirname(execPath);
  if (basename(bin) !== "bin") bin = dirname(bin);
  if (basename(bin) !== "bin") return null;
  const stateDir = dirname(bin);
  return basename(stateDir) === "thoughtgate" && isAbsolute(stateDir) ? stateDir : null;
}

/** Why `dir` is not a directory of the user's own (a link, another owner, writable by others), or null. */
export function notOwnDirectory(dir: string, uid = process.getuid?.() ?? -1): string | null {
  let stat: Stats | undefined;
  try {
    stat = lstatSync(dir, { throwIfNoEntry: false });
  } catch (error) {
    return `cannot be looked at (${messageOf(error)})`;
  }
  if (!stat) return "does not exist";
  if (stat.isSymbolicLink()) return "is a symbolic link";
  if (!stat.isDirectory()) return "is not a directory";
  return ownership(stat, uid);
}

/** Why an opened file (its fstat) is not the user's own, or null. */
export function notOwnFile(stat: Stats, uid = process.getuid?.() ?? -1): string | null {
  if (!stat.isFile()) return "is not a regular file";
  return ownership(stat, uid);
}

function ownership(stat: Stats, uid: number): string | null {
  if (uid >= 0 && stat.uid !== uid) return `belongs to uid ${stat.uid}, not to this user (uid ${uid})`;
  if ((stat.mode & 0o022) !== 0) return `can be written by ${(stat.mode & 0o002) !== 0 ? "anyone" : "its group"} (mode ${(stat.mode & 0o777).toString(8)})`;
  return null;
}

function recordedVariables(json: unknown): Record<string, string> {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error("expected an object of variables");
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(json)) {
    if (typeof value !== "string") throw new Error(`${key}: expected a string`);
    if (isPlacingVariable(key)) kept[key] = value;
  }
  return kept;
}

/** The home of the usual state directory, `<home>/.local/state/thoughtgate`. */
function defaultHome(stateDir: string): string | undefined {
  const suffix = join(".local", "state", "thoughtgate");
  return stateDir.endsWith(`/${suffix}`) ? stateDir.slice(0, -suffix.length - 1) : undefined;
}
