/**
 * `ConfigGuard`: one holder's share of one agent config, made safe. A rewritten entry names a server,
 * never a session, so every wrap of the agent (and `enroll`) writes the same entries, and the config
 * is shared: the journal records who keeps it rewritten (journal.ts, `holders`), and the last to let
 * go puts it back.
 *
 *   share()    with the config's lock: forget holders whose wrap is gone (putting the file back when
 *              none is left), then either join (nothing new to rewrite), or back the file up,
 *              verified, and rewrite it, or, when another holder already rewrote it and the agent
 *              added servers since, rebase: the backup becomes the file as it would be restored now
 *              (the agent's changes in it), and the new entries are rewritten too.
 *   restore()  let go: the last holder puts the backup's bytes back if the file is still what was
 *              written, else only the owned entries; then forgets the record and the backup.
 *              Idempotent, never throws.
 *   release()  let go without putting back (`wrap --no-restore`): the holder stays in the journal,
 *              dead once this process ends, for `unwrap` or the next wrap.
 *
 * Every change to configs and holders happens under `withConfigsLock` (lock.ts), so two wraps
 * starting at once rewrite one after the other, each seeing what the other wrote.
 *
 * The config path is resolved once, here (config-path.ts): a user's config that is a symlink into a
 * dotfiles repository is worked on through its real file, with the lock and the backup beside that
 * file, and stays a link. Every file the guard opens after that is opened without following a link.
 *
 * Everything here is synchronous on purpose: `restoreAllGuards()` must work inside
 * `process.on("exit")`, where no promise ever settles.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { journalPath } from "../core/paths.ts";
import { writeFileAtomic } from "../core/atomic-write.ts";
import { backupPathFor, createBackup, readBackup, removeBackup, replaceBackup } from "./backup.ts";
import { realConfigPath } from "./config-path.ts";
import { findRecord, patchRecord, putRecord, removeRecord, type Holder, type JournalRecord } from "./journal.ts";
import { describeHolders, isHolderAlive, isSameHolder } from "./holders.ts";
import { acquireLock, lockPathFor, withConfigsLock } from "./lock.ts";
import { checkedBackup, manualRestoreHint, planPutBack, putBack, sha256OfBytes, valuesAt, type PutBackKind } from "./put-back.ts";
import { kindOf, lstatOrThrow, readOwnFile, refusal } from "../core/safe-open.ts";

export type ConfigGuardOptions = {
  /** The config as discovered; a symlink is resolved to its real file (`configPath` is that). */
  configPath: string;
  /** Which adapter rewrote it ("zed", "claude-code", …), recorded for `unwrap`'s report. */
  agentType: string;
  /** Who this share is for: a wrap session, or `enroll`. */
  holder: Holder;
  /** The journal file (default `journalPath()`); tests point it elsewhere. */
  journal?: string;
};

/** What `share` did: rewrote the file (first, or the servers added since), or joined the holders of a file already rewritten. */
export type ShareOutcome = "rewritten" | "joined";

export type RestoreResult =
  /** `changedSince`: owned keys left as the user changed them (put-back.ts). */
  | { status: "restored"; configPath: string; kind: PutBackKind; changedSince?: JSONPath[]; removed?: true }
  /** Others still hold it (another wrap, `enroll`): it stays rewritten for them. */
  | { status: "kept"; configPath: string; holders: string }
  /** Never shared, or already let go. */
  | { status: "nothing"; configPath: string }
  /** Logged already, with the backup path and how to restore by hand; the journal record stays for `unwrap`. */
  | { status: "failed"; configPath: string; backupPath: string; error: string };

type State = "idle" | "shared" | "done";

/** Guards sharing a config in this process, for `restoreAllGuards()`. */
const active = new Set<ConfigGuard>();

export class ConfigGuard {
  readonly configPath: string;
  readonly backupPath: string;
  readonly lockPath: string;
  readonly agentType: string;
  readonly holder: Holder;
  readonly #journal: string;
  #state: State = "idle";
  /** The backup's bytes as this guard wrote or checked them: a backup swapped during the session is never what goes back. */
  #original: Buffer | undefined;

  constructor(options: ConfigGuardOptions) {
    this.configPath = realConfigPath(options.configPath);
    this.backupPath = backupPathFor(this.configPath);
    this.lockPath = lockPathFor(this.configPath);
    this.agentType = options.agentType;
    this.holder = options.holder;
    this.#journal = options.journal ?? journalPath();
  }

  /**
   * Share the config, whose text must still be `expected` (what the rewrite was computed from), and
   * write `rewritten` over it when it differs. Throws `LOCKED` when something outside this
   * mechanism holds the config's lock (an older thoughtgate's wrap), `CONFIG` when the file changed
   * since it was read or a left-over backup nothing explains is in the way, `IO` otherwise; on any
   * failure this holder is not recorded and the file is as it was.
   */
  share(expected: string, rewritten: { text: string; owned: JSONPath[] }): ShareOutcome {
    if (this.#state !== "idle") throw new Error(`ConfigGuard(${this.configPath}): share() called twice`);
    return withConfigsLock(() => {
      // A settings file made for a hook may be the first in its directory (~/.gemini): the lock goes beside it.
      mkdirSync(dirname(this.configPath), { recursive: true, mode: 0o700 });
      const lock = acquireLock(this.lockPath, { subject: this.configPath });
      try {
        const record = this.#liveRecord();
        const found = readOwnFile(this.configPath, "the config");
        const current = found ?? Buffer.alloc(0);
        if (current.toString("utf8") !== expected) throw new ThoughtGateError("CONFIG", `${this.configPath} changed while wrap was reading it; run wrap again`);
        const outcome = found === null && !record ? this.#create(rewritten) : this.#write(record, current, rewritten);
        this.#state = "shared";
        active.add(this);
        return outcome;
      } finally {
        lock.release();
      }
    });
  }

  /** Let go; the last holder puts the config back. Idempotent and never throws. */
  restore(): RestoreResult {
    if (this.#state !== "shared") return { status: "nothing", configPath: this.configPath };
    return this.leave();
  }

  /**
   * Let go of a share this holder has in the journal, whether or not this guard made it
   * (`unenroll` lets go of what `enroll` shared). Never throws.
   */
  leave(): RestoreResult {
    try {
      return withConfigsLock(() => {
        const lock = acquireLock(this.lockPath, { subject: this.configPath, waitMs: 5_000 });
        try {
          return this.#letGo();
        } finally {
          lock.release();
        }
      });
    } catch (error) {
      log.error(`could not restore ${this.configPath}: ${messageOf(error)}; ${manualRestoreHint(this.configPath, this.backupPath)}`);
      return { status: "failed", configPath: this.configPath, backupPath: this.backupPath, error: messageOf(error) };
    } finally {
      this.#finish();
    }
  }

  /**
   * Let go without restoring (`wrap --no-restore`): the rewritten config, its backup and this
   * holder's record stay, so `thoughtgate unwrap` (or the next wrap) puts it back once this process ends.
   */
  release(): void {
    if (this.#state !== "shared") return;
    this.#finish();
  }

  [Symbol.dispose](): void {
    this.restore();
  }

  /** Whether this guard shares its config now. */
  get held(): boolean {
    return this.#state === "shared";
  }

  #finish(): void {
    this.#state = "done";
    active.delete(this);
  }

  /**
   * With the lock held: the journal's record with only live holders, having put back a config no
   * live holder keeps rewritten (a dead wrap's), and cleared a harmless left-over backup.
   */
  #liveRecord(): JournalRecord | undefined {
    const record = findRecord(this.configPath, this.#journal);
    if (record) {
      const live = record.holders.filter(isHolderAlive);
      if (live.length > 0) {
        if (live.length < record.holders.length) patchRecord(this.configPath, { holders: live }, this.#journal);
        return { ...record, holders: live };
      }
      log.warn(`${this.configPath} was left rewritten by ${describeHolders(record.holders)}, which ended without restoring it; restoring it first`);
      const { kind } = putBack(record, this.#journal);
      log.info(`restored ${this.configPath} (${kind})`);
    }
    this.#clearLeftOverBackup();
    return undefined;
  }

  #write(record: JournalRecord | undefined, current: Buffer, rewritten: { text: string; owned: JSONPath[] }): ShareOutcome {
    const bytes = Buffer.from(rewritten.text, "utf8");
    const holders = [...(record?.holders.filter((h) => !isSameHolder(h, this.holder)) ?? []), this.holder];
    if (bytes.equals(current)) {
      if (record) {
        patchRecord(this.configPath, { holders }, this.#journal);
        this.#original = checkedBackup(record);
      }
      return "joined";
    }
    const sha = sha256OfBytes(bytes);
    if (!record) {
      putRecord({ configPath: this.configPath, backupPath: this.backupPath, agentType: this.agentType, owned: [], rewrittenSha256: null, backupSha256: null, holders }, this.#journal);
      try {
        const backup = createBackup(this.configPath);
        // #liveRecord cleared the way under our lock; only something outside wrap could have raced us.
        if (!backup.ok) throw new ThoughtGateError("CONFIG", `${backup.backupPath} appeared while wrap was backing up ${this.configPath}; remove it and try again`);
        if (!backup.original.equals(current)) throw new ThoughtGateError("CONFIG", `${this.configPath} changed while wrap was backing it up; run wrap again`);
        this.#original = backup.original;
        // The journal learns the rewrite before the file changes, so a crash right after the rename is still repairable.
        patchRecord(this.configPath, { rewrittenSha256: sha, owned: rewritten.owned, written: this.#written(rewritten.text, rewritten.owned), backupSha256: sha256OfBytes(backup.original) }, this.#journal);
      } catch (error) {
        bestEffort(() => removeRecord(this.configPath, this.#journal));
        if (this.#original) bestEffort(() => removeBackup(this.backupPath));
        throw error;
      }
      writeFileAtomic(this.configPath, bytes);
      return "rewritten";
    }
    // Already rewritten by another holder, and the agent has added servers since: the backup becomes
    // the file as it would be put back now, so the last restore keeps the agent's changes and gives
    // its new servers back as it wrote them. Backup first, then the journal, then the file: a crash
    // between any two still restores to exactly that.
    const plan = planPutBack({ ...record, original: checkedBackup(record) });
    // A file ThoughtGate created puts back to nothing; once the agent wrote in it, to what it wrote.
    const base = plan.restored ?? (record.created && plan.kind === "backup" ? Buffer.alloc(0) : current);
    replaceBackup(this.backupPath, base);
    this.#original = base;
    const owned = unionOfPaths(record.owned, rewritten.owned);
    const created = record.created && base.length === 0 ? true : undefined;
    patchRecord(this.configPath, { rewrittenSha256: sha, owned, written: this.#written(rewritten.text, owned), backupSha256: sha256OfBytes(base), holders, created }, this.#journal);
    writeFileAtomic(this.configPath, bytes);
    return "rewritten";
  }

  /**
   * The config does not exist yet (a settings file the hook needs): it is created, and the journal
   * says so first, so every way of putting it back (restore, unwrap after a crash) removes it again.
   */
  #create(rewritten: { text: string; owned: JSONPath[] }): ShareOutcome {
    const bytes = Buffer.from(rewritten.text, "utf8");
    const written = this.#written(rewritten.text, rewritten.owned);
    putRecord({ configPath: this.configPath, backupPath: this.backupPath, agentType: this.agentType, owned: rewritten.owned, rewrittenSha256: sha256OfBytes(bytes), backupSha256: null, written, created: true, holders: [this.holder] }, this.#journal);
    this.#original = Buffer.alloc(0);
    try {
      writeFileAtomic(this.configPath, bytes, { mode: 0o600 });
    } catch (error) {
      bestEffort(() => removeRecord(this.configPath, this.#journal));
      throw new ThoughtGateError("IO", `cannot create ${this.configPath}: ${messageOf(error)}`, { cause: error });
    }
    return "rewritten";
  }

  #letGo(): RestoreResult {
    const record = findRecord(this.configPath, this.#journal);
    if (!record || !record.holders.some((h) => isSameHolder(h, this.holder))) return { status: "nothing", configPath: this.configPath };
    const others = record.holders.filter((h) => !isSameHolder(h, this.holder) && isHolderAlive(h));
    if (others.length > 0) {
      patchRecord(this.configPath, { holders: others }, this.#journal);
      return { status: "kept", configPath: this.configPath, holders: describeHolders(others) };
    }
    const original = this.#original && record.backupSha256 === sha256OfBytes(this.#original) ? this.#original : undefined;
    const { kind, changedSince, removed } = putBack({ ...record, original: original ?? checkedBackup(record) }, this.#journal);
    log.debug(`restored ${this.configPath} (${kind})`);
    return { status: "restored", configPath: this.configPath, kind, ...(changedSince.length > 0 ? { changedSince } : {}), ...(removed ? { removed } : {}) };
  }

  /** What the rewrite put at each owned key, for the journal: a restore then puts back only keys still holding it. */
  #written(text: string, owned: readonly JSONPath[]): unknown[] {
    return valuesAt(this.agentType, this.configPath, text, owned);
  }

  /** A backup with no record: a crash between forgetting the record and removing the backup (then it equals the config), or something wrap cannot vouch for. */
  #clearLeftOverBackup(): void {
    const there = lstatOrThrow(this.backupPath, "the backup");
    if (!there) return;
    if (!there.isFile()) throw refusal(this.backupPath, "the backup", `is ${kindOf(there)}, not a regular file`);
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

function unionOfPaths(a: readonly JSONPath[], b: readonly JSONPath[]): JSONPath[] {
  const key = (path: JSONPath) => JSON.stringify(path);
  const seen = new Set(a.map(key));
  return [...a, ...b.filter((path) => !seen.has(key(path)))];
}

/**
 * Let go of every config this process shares. Synchronous, never throws: meant for
 * `process.on("exit")`, signal handlers and `uncaughtException`, in any order and any number of times.
 */
export function restoreAllGuards(): RestoreResult[] {
  return [...active].map((guard) => guard.restore());
}

/** The guard of this process that shares `configPath`, if any (so `unwrap` in-process defers to it). */
export function activeGuardFor(configPath: string): ConfigGuard | undefined {
  const real = realConfigPath(configPath);
  return [...active].find((guard) => guard.configPath === real);
}
