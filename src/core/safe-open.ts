/**
 * Opening the files wrap touches so that a file put in its way cannot turn a read or a write
 * against the user. A cloned repository decides what sits next to its own `.mcp.json`: it can ship
 * `.mcp.json.thoughtgate-lock` as a symlink to any file of the user's, or `.mcp.json` itself as a
 * FIFO or a link to `/dev/zero`. So:
 *
 * - Files wrap owns (lock, backup, journal, temp files) are opened with O_NOFOLLOW, created with
 *   O_CREAT|O_EXCL where they must be new, and must be regular files with one name (a hard link
 *   would let a write land in another file). Anything else is refused with one line naming it.
 * - Every read is one open (O_NONBLOCK, so a FIFO never blocks it), then fstat of that very fd (a
 *   regular file, at most `MAX_READ_BYTES`), then a read that stops past the cap. A stat before the
 *   open only spares opening what would be refused anyway (a device); it never decides alone, so a
 *   swap between the two cannot win.
 *
 * Node's and Bun's `fs` open with O_CLOEXEC, so no fd here leaks into the agent wrap launches.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { messageOf, ThoughtGateError } from "./errors.ts";

/** The most wrap reads of a config, a backup or the journal: a `~/.claude.json` with years of history is a few MiB. */
const MAX_READ_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const GUARDED = constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export type ReadOutcome =
  | { ok: true; bytes: Buffer; stat: Stats }
  | { ok: false; missing: true }
  /** `problem` follows the path in a sentence: "is a FIFO (named pipe), not a regular file". */
  | { ok: false; missing: false; problem: string };

export type ReadOptions = {
  /**
   * Follow a symlink at `path` (a config read at discovery: a user's config may be a link into a
   * dotfiles repository). Off for every file wrap owns and for a config's real path once resolved.
   */
  follow: boolean;
  maxBytes?: number;
};

/** Read a regular file whole, or say why not. Never blocks on a FIFO, never reads past the cap. */
export function readRegularFile(path: string, options: ReadOptions): ReadOutcome {
  const maxBytes = options.maxBytes ?? MAX_READ_BYTES;
  let before: Stats | undefined;
  try {
    before = options.follow ? statSync(path, { throwIfNoEntry: false }) : lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    return { ok: false, missing: false, problem: `cannot be read: ${messageOf(error)}` };
  }
  if (!before) return { ok: false, missing: true };
  const early = sizeOrKindProblem(before, maxBytes);
  if (early) return { ok: false, missing: false, problem: early };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (options.follow ? 0 : constants.O_NOFOLLOW));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return { ok: false, missing: true };
    return { ok: false, missing: false, problem: kindFromOpenError(path, error, options.follow) ?? `cannot be read: ${messageOf(error)}` };
  }
  try {
    const stat = fstatSync(fd);
    const problem = sizeOrKindProblem(stat, maxBytes);
    if (problem) return { ok: false, missing: false, problem };
    const bytes = readAtMost(fd, stat.size, maxBytes);
    if (!bytes) return { ok: false, missing: false, problem: tooLarge(maxBytes) };
    return { ok: true, bytes, stat };
  } catch (error) {
    return { ok: false, missing: false, problem: `cannot be read: ${messageOf(error)}` };
  } finally {
    closeSync(fd);
  }
}

/**
 * `readRegularFile` without following a link, for a file wrap owns or a config's resolved real
 * path: missing is null, anything unusable throws one line naming the path (`hint`: what to do).
 */
export function readOwnFile(path: string, role: string, hint?: string): Buffer | null {
  const read = readRegularFile(path, { follow: false });
  if (read.ok) return read.bytes;
  if (read.missing) return null;
  throw refusal(path, role, read.problem, hint);
}

/**
 * Open (creating if absent) a file wrap owns and may find left over, such as a lock file: never
 * through a symlink, only a regular file with one name. `role` names it in errors ("the lock file").
 */
export function openOwnFile(path: string, role: string, flags: number, mode = 0o600): number {
  const before = lstatOrThrow(path, role);
  if (before && !before.isFile()) throw refusal(path, role, `is ${kindOf(before)}, not a regular file`);
  let fd: number;
  try {
    fd = openSync(path, flags | GUARDED, mode);
  } catch (error) {
    throw refusalFromOpen(path, role, error);
  }
  try {
    checkOwnFile(fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    throw refusal(path, role, messageOf(error));
  }
  return fd;
}

/**
 * Create a file that must be new (a backup, a temp file), exclusively: O_CREAT|O_EXCL never
 * follows a symlink, and O_NOFOLLOW says so twice. Returns null when a regular file is already
 * there (the caller decides what that means); a symlink or anything else there is refused.
 */
export function createExclusive(path: string, role: string, mode = 0o600): number | null {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | GUARDED, mode);
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw refusalFromOpen(path, role, error);
  }
  const there = lstatOrThrow(path, role);
  if (there && !there.isFile()) throw refusal(path, role, `is ${kindOf(there)}, not a regular file`);
  return null;
}

/**
 * What is at `path` without following a symlink; undefined when nothing is. A file wrap is about to
 * replace by rename must be absent or a regular file (`writeFileAtomic` checks it with this).
 */
export function lstatOrThrow(path: string, role: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    throw new ThoughtGateError("IO", `cannot look at ${role} ${path}: ${messageOf(error)}`, { cause: error });
  }
}

/** The one-line refusal: what wrap wanted `path` for, what is there instead, that nothing went through it, and what to do. */
export function refusal(path: string, role: string, problem: string, hint = "remove it, then run wrap again"): ThoughtGateError {
  return new ThoughtGateError("IO", `refusing ${role} ${path}: it ${problem}; wrap neither reads nor writes through it${hint ? ` (${hint})` : ""}`);
}

/** "a symbolic link", "a FIFO (named pipe)", ... for a stat that is not a regular file. */
export function kindOf(stat: Stats): string {
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return stat.isFile() ? "a regular file" : "not a regular file";
}

function checkOwnFile(stat: Stats): void {
  if (!stat.isFile()) throw new Error(`is ${kindOf(stat)}, not a regular file`);
  // A second name would let what wrap writes here land in some other file too.
  if (stat.nlink > 1) throw new Error(`has ${stat.nlink} hard links (another name for the same file)`);
}

function sizeOrKindProblem(stat: Stats, maxBytes: number): string | undefined {
  if (!stat.isFile()) return `is ${kindOf(stat)}, not a regular file`;
  return stat.size > maxBytes ? tooLarge(maxBytes) : undefined;
}

/** Up to `maxBytes`; null when there is more (a file that grew past what fstat said, or a /proc file that reports 0). */
function readAtMost(fd: number, sizeHint: number, maxBytes: number): Buffer | null {
  const chunks: Buffer[] = [];
  let total = 0;
  let buffer = Buffer.allocUnsafe(Math.min(sizeHint, maxBytes) + 1);
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, null);
    if (read === 0) break;
    total += read;
    if (total > maxBytes) return null;
    chunks.push(buffer.subarray(0, read));
    buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

function tooLarge(maxBytes: number): string {
  return `is larger than ${maxBytes / (1024 * 1024)} MiB, the most wrap reads of one file`;
}

function refusalFromOpen(path: string, role: string, error: unknown): ThoughtGateError {
  const problem = kindFromOpenError(path, error, false);
  return problem ? refusal(path, role, problem) : new ThoughtGateError("IO", `cannot open ${role} ${path}: ${messageOf(error)}`, { cause: error });
}

/**
 * When an open failed because of what is at `path`, say what it is: ELOOP under O_NOFOLLOW is a
 * link as the last component (EMLINK on FreeBSD), ENXIO a socket, EISDIR a directory. Checked
 * with lstat only for the message; the open already refused.
 */
function kindFromOpenError(path: string, error: unknown, followed: boolean): string | undefined {
  const code = errnoOf(error);
  if (code !== "ENXIO" && code !== "EISDIR" && (followed || (code !== "ELOOP" && code !== "EMLINK"))) return undefined;
  let there: Stats | undefined;
  try {
    there = followed ? statSync(path, { throwIfNoEntry: false }) : lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  return there && !there.isFile() ? `is ${kindOf(there)}, not a regular file` : undefined;
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
