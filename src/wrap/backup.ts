/**
 * The backup wrap takes before it changes a config (before the rewrite, verified): `<config>.thoughtgate-backup`,
 * beside the config's real file (config-path.ts), same mode as the config, fsynced, then read back
 * and compared byte for byte before anything else happens. It is created exclusively and never
 * through a symlink (safe-open.ts): a regular file already there belongs to an earlier session that
 * never finished, and is reported to the caller rather than overwritten (the journal decides); a
 * symlink or anything else there is refused.
 */
import { closeSync, fchmodSync, fsyncSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { fsyncDirectory, keepOwner, writeAll, writeFileAtomic } from "../core/atomic-write.ts";
import { createExclusive, readOwnFile, readRegularFile } from "../core/safe-open.ts";

export function backupPathFor(configPath: string): string {
  return `${configPath}.thoughtgate-backup`;
}

export type BackupResult =
  /** `original` is the config's bytes, identical to what the backup holds. */
  | { ok: true; backupPath: string; original: Buffer }
  /** A backup from an earlier session is in the way; nothing was written. */
  | { ok: false; reason: "stale-backup"; backupPath: string };

/** Back up `configPath`, a config's real path: a symlink there now is refused, not followed. */
export function createBackup(configPath: string): BackupResult {
  const backupPath = backupPathFor(configPath);
  const config = readRegularFile(configPath, { follow: false });
  if (!config.ok) throw new ThoughtGateError("IO", `cannot back up ${configPath}: it ${config.missing ? "does not exist" : config.problem}; the config was not changed`);
  const { bytes: original, stat } = config;
  const fd = createExclusive(backupPath, "the backup", Number(stat.mode) & 0o777);
  if (fd === null) return { ok: false, reason: "stale-backup", backupPath };
  try {
    try {
      writeAll(fd, original);
      fchmodSync(fd, Number(stat.mode) & 0o7777);
      keepOwner(fd, Number(stat.uid), Number(stat.gid), backupPath);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    fsyncDirectory(dirname(backupPath));
    if (!readOwnFile(backupPath, "the backup")?.equals(original)) throw new Error("it did not read back the same bytes");
  } catch (error) {
    bestEffort(() => unlinkSync(backupPath));
    throw new ThoughtGateError("IO", `cannot back up ${configPath} to ${backupPath}: ${messageOf(error)}; the config was not changed`, { cause: error });
  }
  return { ok: true, backupPath, original };
}

/**
 * Replace an existing backup with `bytes` (a shared config rebased: config-guard.ts), atomically,
 * keeping its mode; the caller holds the config's lock. Read back before it counts.
 */
export function replaceBackup(backupPath: string, bytes: Buffer): void {
  writeFileAtomic(backupPath, bytes);
  if (!readOwnFile(backupPath, "the backup")?.equals(bytes)) throw new ThoughtGateError("IO", `cannot replace the backup ${backupPath}: it did not read back the same bytes`);
}

/** The backup's bytes; a backup that is missing, a symlink or not a regular file is an IO error naming it. */
export function readBackup(backupPath: string): Buffer {
  const bytes = readOwnFile(backupPath, "the backup");
  if (!bytes) throw new ThoughtGateError("IO", `cannot read the backup ${backupPath}: it does not exist`);
  return bytes;
}

/** Remove a backup once the config is back (a missing one is fine: restore is idempotent). Unlink never follows a link. */
export function removeBackup(backupPath: string): void {
  try {
    unlinkSync(backupPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new ThoughtGateError("IO", `cannot remove the backup ${backupPath}: ${messageOf(error)}`, { cause: error });
  }
  fsyncDirectory(dirname(backupPath));
}
