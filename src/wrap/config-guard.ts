/**
 * `ConfigGuard`: everything wrap does to one agent config, made safe: lock, backup, journal, atomic rewrite, restore on every exit path.
 *
 *   acquire()  lock `<config>.thoughtgate-lock` → repair what a dead wrap left → journal record →
 *              backup, verified
 *   write()    journal the SHA-256 and owned paths first, then replace the file atomically
 *   restore()  the backup's bytes if the file is still what wrap wrote, else only the owned entries;
 *              then forget the record and the backup and unlock. Idempotent, never throws.
 *
 * The config path is resolved once, here (config-path.ts): a user's config that is a symlink into a
 * dotfiles repository is worked on through its real file, with the lock and the backup beside that
 * file, and stays a link. Every file the guard opens after that is opened without following a link.
 *
 * Everything here is synchronous on purpose: `restoreAllGuards()` must work inside
 * `process.on("exit")`, where no promise ever settles.
 */
import type { JSONPath } from "jsonc-parser";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { journalPath } from "../core/paths.ts";
import { writeFileAtomic } from "../core/atomic-write.ts";
import { backupPathFor, createBackup, readBackup, removeBackup } from "./backup.ts";
import { realConfigPath } from "./config-path.ts";
import { findRecord, patchRecord, putRecord, removeRecord } from "./journal.ts";
import { acquireLock, lockPathFor, type FileLock } from "./lock.ts";
import { ownProcessStartId, isSameProcessRunning } from "../core/process-identity.ts";
import { manualRestoreHint, putBack, sha256OfBytes, type PutBackKind } from "./put-back.ts";
import { kindOf, lstatOrThrow, readOwnFile, refusal } from "../core/safe-open.ts";

export type ConfigGuardOptions = {
  /** The config as discovered; a symlink is resolved to its real file (`configPath` is that). */
  configPath: string;
  /** Which adapter rewrote it ("zed", "claude-code", …), recorded for `unwrap`'s report. */
  agentType: string;
  /** The journal file (default `journalPath()`); tests point it elsewhere. */
  journal?: string;
};

export type RestoreResult =
  | { status: "restored"; configPath: string; kind: PutBackKind }
  /** Never acquired, or already restored or released. */
  | { status: "nothing"; configPath: string }
  /** Logged already, with the backup path and how to restore by hand; the journal record stays for `unwrap`. */
  | { status: "failed"; configPath: string; backupPath: string; error: string };

type State = "idle" | "acquired" | "written" | "done";

/** Guards holding a lock in this process, for `restoreAllGuards()`. */
const active = new Set<ConfigGuard>();

export class ConfigGuard {
  readonly configPath: string;
  readonly backupPath: string;
  readonly lockPath: string;
  readonly agentType: string;
  readonly #journal: string;
  #state: State = "idle";
  #lock: FileLock | undefined;
  #original: Buffer | undefined;
  #rewrittenSha256: string | null = null;
  #owned: JSONPath[] = [];

  constructor(options: ConfigGuardOptions) {
    this.configPath = realConfigPath(options.configPath);
    this.backupPath = backupPathFor(this.configPath);
    this.lockPath = lockPathFor(this.configPath);
    this.agentType = options.agentType;
    this.#journal = options.journal ?? journalPath();
  }

  /** The config's bytes as backed up: a rewrite must start from exactly these. */
  get original(): Buffer {
    if (!this.#original) throw new Error(`ConfigGuard(${this.configPath}): acquire() first`);
    return this.#original;
  }

  get originalText(): string {
    return this.original.toString("utf8");
  }

  /**
   * Lock, repair a rewrite a dead wrap left behind, record, back up. Throws `LOCKED` when another
   * live wrap has the file, `CONFIG` for a left-over backup nothing explains, `IO` otherwise; on any
   * failure nothing is left locked, recorded or backed up.
   */
  acquire(): void {
    if (this.#state !== "idle") throw new Error(`ConfigGuard(${this.configPath}): acquire() called twice`);
    const lock = acquireLock(this.lockPath, { subject: this.configPath });
    let recorded = false;
    try {
      this.#repairLeftOver();
      putRecord(
        {
          configPath: this.configPath,
          backupPath: this.backupPath,
          agentType: this.agentType,
          owned: [],
          rewrittenSha256: null,
          pid: process.pid,
          pidStart: ownProcessStartId(),
          startedAt: new Date().toISOString(),
        },
        this.#journal,
      );
      recorded = true;
      const backup = createBackup(this.configPath);
      // #repairLeftOver cleared the way under our lock; only something outside wrap could have raced us.
      if (!backup.ok) throw new ThoughtGateError("CONFIG", `${backup.backupPath} appeared while wrap was backing up ${this.configPath}; remove it and try again`);
      this.#original = backup.original;
    } catch (error) {
      if (recorded) bestEffort(() => removeRecord(this.configPath, this.#journal));
      lock.release();
      throw error;
    }
    this.#lock = lock;
    this.#state = "acquired";
    active.add(this);
  }

  /**
   * Replace the config with `rewrittenText`. `owned` are the JSON paths of the entries the rewrite
   * changed or added (what `restoreOwnedKeys` puts back). The journal learns both before the file
   * changes, so a crash right after the rename is still repairable.
   */
  write(rewrittenText: string, owned: JSONPath[]): void {
    if (this.#state !== "acquired" && this.#state !== "written") throw new Error(`ConfigGuard(${this.configPath}): write() needs acquire() first`);
    const bytes = Buffer.from(rewrittenText, "utf8");
    const sha = sha256OfBytes(bytes);
    patchRecord(this.configPath, { rewrittenSha256: sha, owned }, this.#journal);
    this.#rewrittenSha256 = sha;
    this.#owned = owned;
    this.#state = "written";
    writeFileAtomic(this.configPath, bytes);
  }

  /** Put the config back and let go of it. Idempotent and never throws. */
  restore(): RestoreResult {
    if (this.#state === "idle" || this.#state === "done") return { status: "nothing", configPath: this.configPath };
    try {
      // The original bytes come from memory: the backup on disk is only for a wrap that died.
      const kind = putBack(
        { configPath: this.configPath, backupPath: this.backupPath, rewrittenSha256: this.#rewrittenSha256, agentType: this.agentType, owned: this.#owned, original: this.#original },
        this.#journal,
      );
      log.debug(`restored ${this.configPath} (${kind})`);
      return { status: "restored", configPath: this.configPath, kind };
    } catch (error) {
      log.error(`could not restore ${this.configPath}: ${messageOf(error)}; ${manualRestoreHint(this.configPath, this.backupPath)}`);
      return { status: "failed", configPath: this.configPath, backupPath: this.backupPath, error: messageOf(error) };
    } finally {
      this.#finish();
    }
  }

  /**
   * Unlock without restoring (`wrap --no-restore`): the rewritten config, its backup and its journal
   * record stay, so `thoughtgate unwrap` (or the next wrap) can still put it back once this process ends.
   */
  release(): void {
    if (this.#state === "idle" || this.#state === "done") return;
    this.#finish();
  }

  [Symbol.dispose](): void {
    this.restore();
  }

  /** Whether this guard holds its lock now. */
  get held(): boolean {
    return this.#state === "acquired" || this.#state === "written";
  }

  #finish(): void {
    this.#state = "done";
    active.delete(this);
    this.#lock?.release();
    this.#lock = undefined;
  }

  /** With the lock held: put back what a dead wrap left rewritten, and clear a harmless left-over backup. */
  #repairLeftOver(): void {
    const record = findRecord(this.configPath, this.#journal);
    if (record) {
      if (record.pid !== process.pid && isSameProcessRunning(record.pid, record.pidStart)) {
        throw new ThoughtGateError(
          "LOCKED",
          `${this.configPath} is being wrapped by pid ${record.pid} (${record.agentType}, since ${record.startedAt}, per the wrap journal ${this.#journal}), which is still running; let it finish or stop it`,
        );
      }
      log.warn(`${this.configPath} was left by a wrap (pid ${record.pid}, ${record.agentType}, started ${record.startedAt}) that ended without restoring it; restoring it first`);
      const kind = putBack(record, this.#journal);
      log.info(`restored ${this.configPath} (${kind})`);
    }
    const there = lstatOrThrow(this.backupPath, "the backup");
    if (!there) return;
    if (!there.isFile()) throw refusal(this.backupPath, "the backup", `is ${kindOf(there)}, not a regular file`);
    // A backup with no record: a crash between forgetting the record and removing the backup (then
    // it equals the config), or something wrap cannot vouch for — never overwritten silently.
    if (readBackup(this.backupPath).equals(readOwnFile(this.configPath, "the config") ?? Buffer.alloc(0))) {
      log.info(`removing ${this.backupPath}: a left-over backup identical to the config`);
      removeBackup(this.backupPath);
      return;
    }
    throw new ThoughtGateError(
      "CONFIG",
      `${this.backupPath} is left over from an earlier wrap and differs from ${this.configPath}, and the wrap journal has no record of it; compare the two, keep the one you want (mv the backup over the config, or delete the backup), then run wrap again`,
    );
  }
}

/**
 * Restore every guard of this process that still holds its config. Synchronous, never throws: meant
 * for `process.on("exit")`, signal handlers and `uncaughtException`, in any order and any number of times.
 */
export function restoreAllGuards(): RestoreResult[] {
  return [...active].map((guard) => guard.restore());
}

/** The guard of this process that holds `configPath`, if any (so `unwrap` in-process defers to it). */
export function activeGuardFor(configPath: string): ConfigGuard | undefined {
  const real = realConfigPath(configPath);
  return [...active].find((guard) => guard.configPath === real);
}
