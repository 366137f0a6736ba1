/**
 * Repair after wraps that never restored (`kill -9`, a power cut): `thoughtgate unwrap`, and the
 * first thing `wrap` does (EC: "the next wrap notices a stale rewrite and repairs it first"). A
 * config is put back only when every wrap that used it is gone — same pid *and* same start stamp,
 * so a reused pid does not pass for one — and it is not enrolled. The one exception is this very
 * process: a config it shares itself is let go through its own guard.
 */
import { lstatSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { messageOf } from "../core/errors.ts";
import { journalPath } from "../core/paths.ts";
import { backupPathFor } from "./backup.ts";
import { activeGuardFor } from "./config-guard.ts";
import { realConfigPath } from "./config-path.ts";
import { describeHolders, isHolderAlive, isSameHolder } from "./holders.ts";
import { findRecord, patchRecord, readJournal, type JournalRecord } from "./journal.ts";
import { lockedError, lockPathFor, tryLock, withConfigsLock } from "./lock.ts";
import { manualRestoreHint, planPutBack, putBack, type PutBackKind } from "./put-back.ts";

export type RepairOutcome =
  | { status: "restored"; configPath: string; kind: PutBackKind; agentType: string; pid: number }
  /** `--dry-run`: what would happen, with a unified diff of the config now → after (empty when nothing changes). */
  | { status: "would-restore"; configPath: string; kind: PutBackKind; agentType: string; pid: number; diff: string }
  /** A wrap using it is still running (or something holds the config's lock). */
  | { status: "refused"; configPath: string; reason: string }
  /** Enrolled: it stays rewritten until `thoughtgate unenroll` (wraps that died no longer count). */
  | { status: "enrolled"; configPath: string; agentType: string }
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
 * For `wrap` at start: repair what dead wraps left; configs still in use (another session,
 * enroll) are theirs and are skipped without a word.
 */
export function repairStale(options: Pick<RepairOptions, "journal"> = {}): RepairOutcome[] {
  return repair(options).filter((outcome) => outcome.status !== "refused" && outcome.status !== "enrolled");
}

function repairRecord(record: JournalRecord, journal: string, dryRun: boolean): RepairOutcome | undefined {
  const { configPath } = record;
  const own = activeGuardFor(configPath);
  if (own && record.holders.some((holder) => isSameHolder(holder, own.holder))) {
    if (dryRun) return preview(record);
    const result = own.restore();
    if (result.status === "failed") return { status: "failed", configPath, backupPath: result.backupPath, reason: result.error };
    if (result.status === "kept") return { status: "refused", configPath, reason: `${configPath} is also used by ${result.holders}, which keeps it rewritten` };
    return { status: "restored", configPath, kind: result.status === "restored" ? result.kind : "unchanged", agentType: record.agentType, pid: process.pid };
  }
  return withConfigsLock(() => {
    // The config's lock: a wrap of an earlier thoughtgate holds it for its whole session.
    let attempt: ReturnType<typeof tryLock>;
    try {
      attempt = tryLock(lockPathFor(configPath));
    } catch (error) {
      return { status: "failed", configPath, backupPath: record.backupPath, reason: `${messageOf(error)}; ${manualRestoreHint(configPath, record.backupPath)}` };
    }
    if (!attempt.ok) return { status: "refused", configPath, reason: lockedError(lockPathFor(configPath), configPath, attempt.holderPid).message };
    try {
      // Re-read under the locks: another unwrap may have finished this one meanwhile.
      const current = findRecord(configPath, journal);
      if (!current) return undefined;
      const live = current.holders.filter(isHolderAlive);
      const dead = current.holders.find((holder) => holder.kind === "wrap" && !isHolderAlive(holder));
      const pid = dead?.kind === "wrap" ? dead.pid : 0;
      const wraps = live.filter((holder) => holder.kind === "wrap");
      if (wraps.length > 0) {
        return {
          status: "refused",
          configPath,
          reason: `${configPath} is in use by ${describeHolders(wraps)} (${current.agentType}), still running; the last of them restores it when it exits — stop it (Ctrl+C in its terminal, or kill ${wraps.map((h) => (h.kind === "wrap" ? h.pid : "")).join(" ")}) instead of unwrapping under it`,
        };
      }
      if (live.length > 0) {
        if (!dryRun && live.length < current.holders.length) patchRecord(configPath, { holders: live }, journal);
        return { status: "enrolled", configPath, agentType: current.agentType };
      }
      if (dryRun) return preview(current, pid);
      const { kind } = putBack(current, journal);
      return { status: "restored", configPath, kind, agentType: current.agentType, pid };
    } catch (error) {
      return { status: "failed", configPath, backupPath: record.backupPath, reason: `${messageOf(error)}; ${manualRestoreHint(configPath, record.backupPath)}` };
    } finally {
      attempt.lock.release();
    }
  });
}

function preview(record: JournalRecord, pid = process.pid): RepairOutcome {
  const plan = planPutBack(record);
  const before = plan.current?.toString("utf8") ?? "";
  const diff = plan.restored ? createTwoFilesPatch(record.configPath, record.configPath, before, plan.restored.toString("utf8"), "now", "after unwrap") : "";
  return { status: "would-restore", configPath: record.configPath, kind: plan.kind, agentType: record.agentType, pid, diff };
}
