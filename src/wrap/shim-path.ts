/**
 * Which thoughtgate the agent configs name, and which one a session's shims run.
 *
 * Not the path this binary was started from: that may be an npx cache (`~/.npm/_npx/<hash>/…`,
 * emptied by `npm cache clean` or the next `npx thoughtgate@latest`), a Homebrew keg that `brew
 * upgrade` deletes, or a file that `npm install -g` or install.sh replaces with another version.
 * Two files in ThoughtGate's state directory instead (README, "Which thoughtgate the agent configs
 * name"):
 *
 * - The shim path, `~/.local/state/thoughtgate/bin/thoughtgate`: what every rewritten entry names,
 *   for every session and for `enroll`, since entries outlive sessions. Each wrap and each enroll
 *   makes it this binary (a hard link, else a copy, renamed into place), so it never names nothing,
 *   and a shim running it keeps its file (its inode) when the next one replaces it.
 * - The session's pin, `bin/<version>-<target>-<id>/thoughtgate`, a hard link to wrap's own binary,
 *   named in the session's descriptor: a shim that finds its session on another version than its own
 *   (another wrap, of another version, made the shim path its binary meanwhile) becomes the pin
 *   (commands/shim.ts), so every shim of a session speaks its service's version. A pin no running
 *   wrap names is removed by the next wrap.
 *
 * A link costs no space while the install keeps the file. Where a link is impossible (another file
 * system; a file another user owns, under Linux's fs.protected_hardlinks), the shim path is a copy,
 * and a pin is a copy only of an ephemeral install (npx and the like): any other keeps its own path.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { stateDir } from "../core/paths.ts";
import { writeUserEnvironment } from "../core/user-environment.ts";
import { log } from "../core/log.ts";
import { messageOf } from "../core/errors.ts";
import { TARGET, VERSION } from "../version.ts";

/** A pin younger than this is kept even if no session names it yet: its wrap may be starting. */
const PIN_GRACE_MS = 10 * 60_000;

export type ShimBinary = {
  /** What the agent configs name. */
  path: string;
  /** The binary wrap runs as (realpath). */
  source: string;
  how: "linked" | "copied" | "as-is";
};

export function pinsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "bin");
}

/** The file every rewritten entry names. */
export function shimPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(pinsDir(env), SHIM_NAME);
}

const SHIM_NAME = "thoughtgate";

/**
 * Make the shim path this binary (create: false only computes it). Never throws: where it cannot be
 * made, the entries name this binary as it is, with a warning when that is in a cache.
 */
export function stableShim({
  execPath = process.execPath,
  env = process.env,
  create = true,
  compiled = Bun.main.startsWith("/$bunfs/"),
}: { execPath?: string; env?: NodeJS.ProcessEnv; create?: boolean; compiled?: boolean } = {}): ShimBinary {
  const source = realpathSync(execPath);
  if (!compiled) return { path: source, source, how: "as-is" };
  const path = shimPath(env);
  if (!create) return { path, source, how: "linked" };
  try {
    const stats = statSync(source);
    const existing = statSync(path, { throwIfNoEntry: false });
    if (existing && existing.ino === stats.ino && existing.dev === stats.dev) return recordUserEnvironment({ path, source, how: "linked" }, env);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const staged = `${path}.${process.pid}.tmp`;
    rmSync(staged, { force: true });
    let how: ShimBinary["how"] = "linked";
    try {
      linkSync(source, staged);
    } catch {
      copyFileSync(source, staged);
      how = "copied";
    }
    // Renamed into place: a config never names a half-written file, and a shim running the old one keeps it.
    renameSync(staged, path);
    return recordUserEnvironment({ path, source, how }, env);
  } catch (error) {
    return fallback(source, error);
  }
}

/**
 * Beside the shim path, the user's own placing variables (core/user-environment.ts): a shim run from
 * the shim path takes its home, config and state locations from there, never from its entry.
 */
function recordUserEnvironment(shim: ShimBinary, env: NodeJS.ProcessEnv): ShimBinary {
  try {
    writeUserEnvironment(stateDir(env), env, process.cwd());
  } catch (error) {
    log.warn(`could not record where your thoughtgate files are for the shims (${messageOf(error)}); a shim started without your environment may not find its session or your policy`);
  }
  return shim;
}

/**
 * The files that are this thoughtgate for the purpose of "does this entry run our shim": this
 * binary and the shim path, by device and inode (what a path names after links are resolved).
 */
export function shimFiles(execPath: string = process.execPath, env: NodeJS.ProcessEnv = process.env): Set<string> {
  const files = new Set<string>();
  for (const path of [execPath, shimPath(env)]) {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats?.isFile()) files.add(fileIdentity(stats));
  }
  return files;
}

export function fileIdentity(stats: Pick<Stats, "dev" | "ino">): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * Whether `path` lies in a package runner's cache rather than an install: npx's `_npx`, pnpm's
 * `dlx`, or the temporary directory (bunx, yarn dlx).
 */
export function isEphemeral(path: string): boolean {
  return path.includes(`${sep}_npx${sep}`) || path.includes(`${sep}dlx${sep}`) || path.startsWith(realTmpdir() + sep);
}

function realTmpdir(): string {
  try {
    return realpathSync(tmpdir());
  } catch {
    return tmpdir();
  }
}

/** Where the pin for `source` goes (computed only: `--dry-run` shows it without creating it). */
function pinPath(source: string, stats: Stats = statSync(source), env: NodeJS.ProcessEnv = process.env): string {
  const identity = new Bun.CryptoHasher("sha256").update(`${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${source}`).digest("hex").slice(0, 12);
  const target = TARGET.replace(/^bun-/, "").replace(/[^\w.-]+/g, "_");
  return join(pinsDir(env), `${VERSION}-${target}-${identity}`, "thoughtgate");
}

/**
 * The shim binary for a session: the pin, created if missing (`create: false` only computes it).
 * Never throws: a pin that cannot be made falls back to the binary's own path, with a warning when
 * that path is in a cache that may vanish.
 */
export function shimBinary({
  execPath = process.execPath,
  env = process.env,
  create = true,
  // Run from source (`bun src/cli.ts`), execPath is Bun itself: nothing of ours to pin.
  compiled = Bun.main.startsWith("/$bunfs/"),
}: { execPath?: string; env?: NodeJS.ProcessEnv; create?: boolean; compiled?: boolean } = {}): ShimBinary {
  const source = realpathSync(execPath);
  if (!compiled) return { path: source, source, how: "as-is" };
  let stats: Stats;
  let path: string;
  try {
    stats = statSync(source);
    path = pinPath(source, stats, env);
  } catch (error) {
    return fallback(source, error);
  }
  if (!create) return { path, source, how: "linked" };
  try {
    const existing = statSync(path, { throwIfNoEntry: false });
    if (existing && existing.size === stats.size) return { path, source, how: existing.ino === stats.ino && existing.dev === stats.dev ? "linked" : "copied" };
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Made under a temporary name and renamed: a config never names a half-written file.
    const staged = `${path}.${process.pid}.tmp`;
    rmSync(staged, { force: true });
    let how: ShimBinary["how"] = "linked";
    try {
      linkSync(source, staged);
    } catch (error) {
      if (!isEphemeral(source)) return fallback(source, error, false);
      copyFileSync(source, staged);
      how = "copied";
    }
    renameSync(staged, path);
    return { path, source, how };
  } catch (error) {
    return fallback(source, error);
  }
}

function fallback(source: string, error: unknown, warn = true): ShimBinary {
  if (warn || isEphemeral(source)) {
    log.warn(`could not pin ${source} for this session's shims (${messageOf(error)}); the agent configs name it as it is${isEphemeral(source) ? ", in a cache that may be emptied while they point at it" : ""}`);
  }
  return { path: source, source, how: "as-is" };
}

/**
 * Remove every pin except those `keep()` names and those younger than the grace period. `keep` is
 * asked only when some pin is old enough to go (it reads every session's record). Never throws.
 */
export function prunePins(keep: () => ReadonlySet<string>, env: NodeJS.ProcessEnv = process.env, nowMs = Date.now()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(pinsDir(env));
  } catch {
    return removed;
  }
  let kept: ReadonlySet<string> | undefined;
  for (const name of names) {
    // The shim path is no pin: entries that outlive every session name it.
    if (name === SHIM_NAME || name.startsWith(`${SHIM_NAME}.`)) continue;
    const dir = join(pinsDir(env), name);
    try {
      if (nowMs - statSync(dir).mtimeMs < PIN_GRACE_MS) continue;
      kept ??= keep();
      if (kept.has(join(dir, "thoughtgate"))) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Removed by another wrap meanwhile.
    }
  }
  return removed;
}

/**
 * When this binary came from npm, the package that launches it: `<…>/node_modules/thoughtgate`
 * whose `node_modules/@thoughtgate/<platform>` (npm -g) or sibling `@thoughtgate/<platform>` (npx,
 * local installs) is this binary's package. Null otherwise.
 */
export function npmPackageOf(binaryPath: string): { platformPackage: string; launcherPackage: string | null } | null {
  const match = /^(.*)\/node_modules\/(@thoughtgate\/[a-z0-9-]+)\/bin\/thoughtgate$/.exec(binaryPath);
  if (!match?.[1] || !match[2]) return null;
  const root = match[1];
  // Nested: <root> is the launcher package itself; hoisted: the launcher is <root>/node_modules/thoughtgate.
  const candidates = [root, join(root, "node_modules", "thoughtgate")];
  const launcherPackage = candidates.find((dir) => statSync(join(dir, "bin", "thoughtgate"), { throwIfNoEntry: false })?.isFile() && dir.endsWith(`${sep}thoughtgate`)) ?? null;
  return { platformPackage: match[2], launcherPackage };
}
