/**
 * Repair after a wrap that never restored (`kill -9`, a power cut): `thoughtgate unwrap`, and the
 * first thing `wrap` does (EC: "the next wrap notices a stale rewrite and repairs it first"). A
 * record is only touched when its wrap is gone — same pid *and* same start stamp, so a reused pid
 * does not pass for it — and its config's lock can be taken. The one exception is this very
 * process: a config it holds itself is restored through its own guard.
 */
import { lstatSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { messageOf } from "../core/errors.ts";
import { journalPath } from "../core/paths.ts";
import { backupPathFor } from "./backup.ts";
import { activeGuardFor } from "./config-guard.ts";
import { realConfigPath } from "./config-path.ts";
import { findRecord, readJournal, type JournalRecord } from "./journal.ts";
import { lockedError, lockPathFor, tryLock } from "./lock.ts";
import { isSameProcessRunning } from "../core/process-identity.ts";
import { manualRestoreHint, planPutBack, putBack, type PutBackKind } from "./put-back.ts";

export type RepairOutcome =
  | { status: "restored"; configPath: string; kind: PutBackKind; agentType: string; pid: number }
  /** `--dry-run`: what would happen, with a unified diff of the config now → after (empty when nothing changes). */
  | { status: "would-restore"; configPath: string; kind: PutBackKind; agentType: string; pid: number; diff: string }
  /** Its wrap is still running (or something holds the config's lock). */
  | { status: "refused"; configPath: string; reason: string }
  | { status: "failed"; configPath: string; backupPath: string; reason: string }
  /** Asked for one config: no journal record, yet a backup next to it (made by something wrap cannot vouch for). */
  | { status: "orphan-backup"; configPath: string; backupPath: string };

export type RepairOptions = {
  /** Only this config (default: every record in the journal). */
  configPath?: string;
  dryRun?: boolean;
  /** The journal file (default `journalPath()`). */
  journal?: string;
};

/** `thoughtgate unwrap`: repair every record (or the one for `configPath`); live wraps are refused. */
export function repair(options: RepairOptions = {}): RepairOutcome[] {
  const journal = options.journal ?? journalPath();
  // Records name a config's real file (config-path.ts), so a symlink given here is resolved the same way.
  const wanted = options.configPath === undefined ? undefined : realConfigPath(options.configPath);
  const records = readJournal(journal).filter((record) => wanted === undefined || record.configPath === wanted);
  if (wanted !== undefined && records.length === 0 && lstatSync(backupPathFor(wanted), { throwIfNoEntry: false })) {
    return [{ status: "orphan-backup", configPath: wanted, backupPath: backupPathFor(wanted) }];
  }
  return records.flatMap((record) => repairRecord(record, journal, options.dryRun === true) ?? []);
}

/**
 * For `wrap` at start: repair what dead wraps left; records of wraps still running are theirs and
 * are skipped without a word (they are not a problem, just another session).
 */
export function repairStale(options: Pick<RepairOptions, "journal"> = {}): RepairOutcome[] {
  return repair(options).filter((outcome) => outcome.status !== "refused");
}

function repairRecord(record: JournalRecord, journal: string, dryRun: boolean): RepairOutcome | undefined {
  const { configPath } = record;
  const own = activeGuardFor(configPath);
  if (own && record.pid === process.pid) {
    if (dryRun) return preview(record);
    const result = own.restore();
    if (result.status === "failed") return { status: "failed", configPath, backupPath: result.backupPath, reason: result.error };
    return { status: "restored", configPath, kind: result.status === "restored" ? result.kind : "unchanged", agentType: record.agentType, pid: record.pid };
  }
  // The lock first: a live wrap holds it, so this is what refuses a running session (and it keeps a
  // new wrap from starting on this file while we restore it).
  let attempt: ReturnType<typeof tryLock>;
  try {
    attempt = tryLock(lockPathFor(configPath));
  } catch (error) {
    return { status: "failed", configPath, backupPath: record.backupPath, reason: `${messageOf(error)}; ${manualRestoreHint(configPath, record.backupPath)}` };
  }
  if (!attempt.ok) return { status: "refused", configPath, reason: lockedError(lockPathFor(configPath), configPath, attempt.holderPid).message };
  try {
    // Re-read under the lock: another unwrap may have finished this one meanwhile.
    const current = findRecord(configPath, journal);
    if (!current) return undefined;
    if (current.pid !== process.pid && isSameProcessRunning(current.pid, current.pidStart)) {
      return {
        status: "refused",
        configPath,
        reason: `${configPath} was rewritten by wrap pid ${current.pid} (${current.agentType}, since ${current.startedAt}), which is still running; it restores the file when it exits — stop it (Ctrl+C in its terminal, or kill ${current.pid}) instead of unwrapping under it`,
      };
    }
    if (dryRun) return preview(current);
    const kind = putBack(current, journal);
    return { status: "restored", configPath, kind, agentType: current.agentType, pid: current.pid };
  } catch (error) {
    return { status: "failed", configPath, backupPath: record.backupPath, reason: `${messageOf(error)}; ${manualRestoreHint(configPath, record.backupPath)}` };
  } finally {
    attempt.lock.release();
  }
}

function preview(record: JournalRecord): RepairOutcome {
  const plan = planPutBack(record);
  const before = plan.current?.toString("utf8") ?? "";
  const diff = plan.restored ? createTwoFilesPatch(record.configPath, record.configPath, before, plan.restored.toString("utf8"), "now", "after unwrap") : "";
  return { status: "would-restore", configPath: record.configPath, kind: plan.kind, agentType: record.agentType, pid: record.pid, diff };
}
