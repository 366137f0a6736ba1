/**
 * Replace a file so that a crash at any moment leaves either the old bytes or the new ones, never a
 * torn mix (docs/architecture.md, decision 8): temp file in the same directory (rename is only atomic within one
 * file system) → fsync → rename over the target → fsync the directory so the rename itself is durable.
 *
 * The path is written as given, never resolved here: a symlinked config is resolved once, by its
 * `ConfigGuard` (config-path.ts), and everything after works on the real file. So the target must
 * be a regular file or absent; a symlink there is refused, not written through (rename would not
 * follow it anyway: it would replace the link by a regular file). The temp file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (safe-open.ts).
 */
import { closeSync, constants, fchmodSync, fchownSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "./errors.ts";
import { log } from "./log.ts";
import { createExclusive, kindOf, lstatOrThrow, refusal } from "./safe-open.ts";

export type AtomicWriteOptions = {
  /** Mode for a file that does not exist yet (an existing file keeps its own). */
  mode?: number;
};

/** Write `data` to `path` (a regular file or nothing) atomically, keeping the existing file's mode and (when we may) its owner. */
export function writeFileAtomic(path: string, data: Uint8Array | string, options: AtomicWriteOptions = {}): void {
  const existing = lstatOrThrow(path, "to write");
  if (existing && !existing.isFile()) throw refusal(path, "to write", `is ${kindOf(existing)}, not a regular file`, "");
  const mode = existing ? existing.mode & 0o7777 : (options.mode ?? 0o600);
  const dir = dirname(path);
  // Web Crypto, not node:crypto: this module is loaded by every shim and hook (the session lookup),
  // and node:crypto would cost each a few ms and MB to load (docs/benchmarks.md, "Where the memory goes").
  const temp = join(dir, `.${basename(path)}.thoughtgate-${process.pid}-${Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString("hex")}.tmp`);
  let created = false;
  try {
    const fd = createExclusive(temp, "a temporary file");
    if (fd === null) throw new Error(`${temp} already exists`);
    created = true;
    try {
      writeAll(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      // After the write and explicitly: the open mode was filtered through the umask.
      fchmodSync(fd, mode);
      if (existing) keepOwner(fd, existing.uid, existing.gid, path);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    if (created) bestEffort(() => unlinkSync(temp));
    if (error instanceof ThoughtGateError) throw error;
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

