/**
 * The backup wrap takes before it changes a config (before the rewrite, verified): `<config>.thoughtgate-backup`,
 * same mode as the config, fsynced, then read back and compared byte for byte before anything else
 * happens. It is created exclusively: one that already exists belongs to an earlier session that
 * never finished, and is reported to the caller rather than overwritten (the journal decides).
 */
import { closeSync, constants, fchmodSync, fsyncSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { fsyncDirectory, keepOwner, writeAll } from "./atomic-write.ts";

export function backupPathFor(configPath: string): string {
  return `${configPath}.thoughtgate-backup`;
}

export type BackupResult =
  /** `original` is the config's bytes, identical to what the backup holds. */
  | { ok: true; backupPath: string; original: Buffer }
  /** A backup from an earlier session is in the way; nothing was written. */
  | { ok: false; reason: "stale-backup"; backupPath: string };

export function createBackup(configPath: string): BackupResult {
  const backupPath = backupPathFor(configPath);
  let original: Buffer;
  let stat: ReturnType<typeof statSync>;
  try {
    original = readFileSync(configPath);
    stat = statSync(configPath);
  } catch (error) {
    throw new ThoughtGateError("IO", `cannot read ${configPath}: ${messageOf(error)}`, { cause: error });
  }
  let fd: number;
  try {
    fd = openSync(backupPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return { ok: false, reason: "stale-backup", backupPath };
    throw new ThoughtGateError("IO", `cannot create the backup ${backupPath}: ${messageOf(error)}`, { cause: error });
  }
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
    if (!readFileSync(backupPath).equals(original)) throw new Error("it did not read back the same bytes");
  } catch (error) {
    bestEffort(() => unlinkSync(backupPath));
    throw new ThoughtGateError("IO", `cannot back up ${configPath} to ${backupPath}: ${messageOf(error)}; the config was not changed`, { cause: error });
  }
  return { ok: true, backupPath, original };
}

export function readBackup(backupPath: string): Buffer {
  try {
    return readFileSync(backupPath);
  } catch (error) {
    throw new ThoughtGateError("IO", `cannot read the backup ${backupPath}: ${messageOf(error)}`, { cause: error });
  }
}

/** Remove a backup once the config is back (a missing one is fine: restore is idempotent). */
export function removeBackup(backupPath: string): void {
  try {
    unlinkSync(backupPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new ThoughtGateError("IO", `cannot remove the backup ${backupPath}: ${messageOf(error)}`, { cause: error });
  }
  fsyncDirectory(dirname(backupPath));
}
