/**
 * Exclusive advisory locks through libc `flock` (one wrap per config; a second one, or an editor saving, must not race it). The lock lives on a
 * separate `<config>.thoughtgate-lock`, never on the config itself: editors save atomically (temp +
 * rename), which swaps the config's inode and would silently drop a lock held on it. The kernel
 * drops a `flock` when its holder dies, so a lock file left behind by `kill -9` is simply taken
 * over; the pid written into it only names the holder in the error a second wrap sees.
 *
 * The lock file sits where a cloned repository decides what exists (next to its `.mcp.json`), so
 * it is opened with O_NOFOLLOW and must be a regular file with one name (safe-open.ts): a symlink
 * or hard link planted there to one of the user's files is refused, never truncated. The holder's
 * pid is read from the locked fd, never by path.
 */
import { dlopen, FFIType, read, type Pointer } from "bun:ffi";
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, readSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { stateDir } from "../core/paths.ts";
import { openOwnFile } from "../core/safe-open.ts";

// Same values in Linux and macOS <sys/file.h>.
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EINTR = 4;
const EWOULDBLOCK = process.platform === "darwin" ? 35 : 11;
const RETRY_MS = 5;

type Libc = { flock(fd: number, operation: number): number; errno(): number };
let libc: Libc | undefined;

/** Loaded on first use: `shim` never locks anything and must not pay for dlopen. */
function loadLibc(): Libc {
  if (libc) return libc;
  if (process.platform === "darwin") {
    const lib = dlopen("libSystem.B.dylib", {
      flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      __error: { args: [], returns: FFIType.ptr },
    });
    libc = { flock: (fd, op) => lib.symbols.flock(fd, op), errno: () => readErrno(lib.symbols.__error()) };
  } else {
    const lib = dlopen("libc.so.6", {
      flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      __errno_location: { args: [], returns: FFIType.ptr },
    });
    libc = { flock: (fd, op) => lib.symbols.flock(fd, op), errno: () => readErrno(lib.symbols.__errno_location()) };
  }
  return libc;
}

function readErrno(location: Pointer | bigint | null): number {
  return location ? read.i32(location, 0) : -1;
}

export function lockPathFor(configPath: string): string {
  return `${configPath}.thoughtgate-lock`;
}

export type FileLock = {
  readonly path: string;
  /** Unlock (and remove the lock file, unless it is a shared one). Idempotent. */
  release(): void;
};

export type LockOptions = {
  /** What the lock protects, for the error message ("~/.config/zed/settings.json"). */
  subject: string;
  /** How the holder is described: `${subject} is ${busy} by pid N`. */
  busy?: string;
  /** Keep trying this long before giving up (0: fail at once). */
  waitMs?: number;
  /**
   * Remove the file on release. Off for a lock file many processes take in turn (the journal's):
   * unlinking it is only safe because `acquire` checks it still locked the file the path names.
   */
  removeOnRelease?: boolean;
};

export type TryLockResult = { ok: true; lock: FileLock } | { ok: false; holderPid: number | null };

/**
 * Take the lock, or say who holds it. Throws for I/O errors (e.g. a directory we cannot write) and
 * for anything but a regular file at `path` (a planted symlink).
 */
export function tryLock(path: string, options: Pick<LockOptions, "waitMs" | "removeOnRelease"> = {}): TryLockResult {
  const { flock, errno } = loadLibc();
  const deadline = performance.now() + (options.waitMs ?? 0);
  for (;;) {
    // Node and Bun open with O_CLOEXEC, so the agent wrap launches never inherits (and keeps) the lock.
    const fd = openOwnFile(path, "the lock file", constants.O_RDWR | constants.O_CREAT);
    if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      const code = errno();
      const holder = holderPid(fd);
      closeSync(fd);
      if (code === EINTR) continue;
      if (code !== EWOULDBLOCK) throw new ThoughtGateError("IO", `cannot lock ${path}: flock failed with errno ${code}`);
      if (performance.now() < deadline) {
        Bun.sleepSync(RETRY_MS);
        continue;
      }
      return { ok: false, holderPid: holder };
    }
    // A holder that was releasing may have unlinked the file between our open and our flock: then we
    // locked an orphaned inode and must start again with the file the path names now.
    if (!namesFile(path, fd)) {
      closeSync(fd);
      continue;
    }
    const previous = holderPid(fd);
    if (previous !== null && previous !== process.pid) log.debug(`took over the lock file ${path} left by pid ${previous}`);
    try {
      ftruncateSync(fd, 0);
      writeSync(fd, `${process.pid}\n`, 0);
    } catch (error) {
      closeSync(fd);
      throw new ThoughtGateError("IO", `cannot write the lock file ${path}: ${messageOf(error)}`, { cause: error });
    }
    return { ok: true, lock: heldLock(path, fd, options.removeOnRelease ?? true) };
  }
}

/** Take the lock or throw `LOCKED` naming the holder's pid. */
export function acquireLock(path: string, options: LockOptions): FileLock {
  const result = tryLock(path, options);
  if (result.ok) return result.lock;
  throw lockedError(path, options.subject, result.holderPid, options.busy ?? "being wrapped");
}

export function lockedError(path: string, subject: string, holderPid: number | null, busy = "being wrapped"): ThoughtGateError {
  const holder = holderPid === null ? "another process" : `pid ${holderPid}`;
  return new ThoughtGateError("LOCKED", `${subject} is ${busy} by ${holder} (lock ${path}); let it finish (it restores the config when it exits) or stop it, then try again`);
}

function heldLock(path: string, fd: number, removeOnRelease: boolean): FileLock {
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      // Unlink while still holding the lock, and only the file we locked (see the inode check above).
      if (removeOnRelease) {
        bestEffort(() => {
          if (namesFile(path, fd)) unlinkSync(path);
        });
      }
      bestEffort(() => loadLibc().flock(fd, LOCK_UN));
      bestEffort(() => closeSync(fd));
    },
  };
}

/** Whether `path` (not following a link) still names the file open as `fd`. */
function namesFile(path: string, fd: number): boolean {
  const onDisk = lstatSync(path, { throwIfNoEntry: false });
  const mine = fstatSync(fd);
  return onDisk !== undefined && onDisk.ino === mine.ino && onDisk.dev === mine.dev;
}

/** The pid a holder wrote, read from the open lock file (a pid is at most a few digits). */
function holderPid(fd: number): number | null {
  try {
    const buffer = Buffer.alloc(32);
    const text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8").trim();
    return /^\d+$/.test(text) ? Number(text) : null;
  } catch {
    return null;
  }
}

/** How long a wrap waits for another's changes to configs (each takes well under a second). */
const CONFIGS_LOCK_WAIT_MS = 30_000;
let configsLockDepth = 0;

/**
 * Run `change` holding `<state dir>/configs.lock`: every change ThoughtGate makes to agent configs
 * and to who holds them (a wrap sharing or letting go, enroll, unwrap) happens under it, one at a
 * time, so two wraps started at once rewrite in turn, the second seeing what the first wrote.
 * Re-entrant within this process.
 */
export function withConfigsLock<T>(change: () => T, env: NodeJS.ProcessEnv = process.env): T {
  if (configsLockDepth > 0) return change();
  const dir = stateDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = acquireLock(join(dir, "configs.lock"), { subject: "agent configs", busy: "being changed", waitMs: CONFIGS_LOCK_WAIT_MS, removeOnRelease: false });
  configsLockDepth += 1;
  try {
    return change();
  } finally {
    configsLockDepth -= 1;
    lock.release();
  }
}
