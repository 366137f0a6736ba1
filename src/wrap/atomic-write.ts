/**
 * Replace a file so that a crash at any moment leaves either the old bytes or the new ones, never a
 * torn mix (docs/architecture.md, decision 8): temp file in the same directory (rename is only atomic within one
 * file system) → fsync → rename over the target → fsync the directory so the rename itself is durable.
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fchmodSync, fchownSync, fsyncSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";

export type AtomicWriteOptions = {
  /** Mode for a file that does not exist yet (an existing file keeps its own). */
  mode?: number;
};

/**
 * Write `data` to `path` atomically, keeping the existing file's mode and (when we may) its owner.
 * A symlinked config (dotfile managers) is written through: the link stays, its target is replaced.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string, options: AtomicWriteOptions = {}): void {
  const target = resolveSymlink(path);
  const existing = statSync(target, { throwIfNoEntry: false });
  const mode = existing ? existing.mode & 0o7777 : (options.mode ?? 0o600);
  const dir = dirname(target);
  const temp = join(dir, `.${basename(target)}.thoughtgate-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeAll(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      // After the write and explicitly: the open mode was filtered through the umask.
      fchmodSync(fd, mode);
      if (existing) keepOwner(fd, existing.uid, existing.gid, path);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
  } catch (error) {
    bestEffort(() => unlinkSync(temp));
    throw new ThoughtGateError("IO", `cannot write ${path}: ${messageOf(error)}`, { cause: error });
  }
  fsyncDirectory(dir);
}

/** Make a directory entry change (create, rename, unlink) durable. Some file systems refuse: then best effort. */
export function fsyncDirectory(dir: string): void {
  bestEffort(() => {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  });
}

export function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Keep the owner when wrap writes a file it does not own (run as root, or with group write). */
export function keepOwner(fd: number, uid: number, gid: number, path: string): void {
  if (uid === process.getuid?.() && gid === process.getgid?.()) return;
  if (!bestEffort(() => fchownSync(fd, uid, gid))) log.debug(`${path}: could not keep owner ${uid}:${gid}; the file is now owned by this user`);
}

function resolveSymlink(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
