/**
 * The wrap journal (`journalPath()`): one record per config a wrap has backed up and may have
 * rewritten, so `unwrap` (or the next `wrap`) can put it back after `kill -9` or a reboot. Every
 * update is read → change → atomic write under the journal's own lock, so two wraps of different
 * files never lose each other's records. An empty journal is removed: its presence alone means
 * "something is (or was left) wrapped" to `thoughtgate doctor`. The journal, its lock and its temp
 * files are never opened through a symlink (safe-open.ts): one planted there is refused.
 */
import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import * as v from "valibot";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { journalPath } from "../core/paths.ts";
import { fsyncDirectory, writeFileAtomic } from "../core/atomic-write.ts";
import { acquireLock } from "./lock.ts";
import { readOwnFile } from "../core/safe-open.ts";

/** Wait this long for another wrap's journal update (they take milliseconds) before giving up. */
const JOURNAL_LOCK_WAIT_MS = 5_000;

const jsonPathSchema = v.array(v.union([v.string(), v.number()]));

export const journalRecordSchema = v.object({
  /** Absolute path of the config, the record's key. */
  configPath: v.string(),
  backupPath: v.string(),
  agentType: v.string(),
  /** JSON paths of the entries wrap rewrote (what `restoreOwnedKeys` puts back). */
  owned: v.array(jsonPathSchema),
  /** SHA-256 (hex) of the text wrap wrote; null while the config is backed up but not yet rewritten. */
  rewrittenSha256: v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  /** The wrap process, and its start stamp (`processStartId`) so a reused pid is not taken for it. */
  pid: v.pipe(v.number(), v.integer()),
  pidStart: v.nullable(v.string()),
  startedAt: v.string(),
});

export type JournalRecord = v.InferOutput<typeof journalRecordSchema>;

const journalSchema = v.object({ version: v.literal(1), records: v.array(journalRecordSchema) });

export function readJournal(path: string = journalPath()): JournalRecord[] {
  const bytes = readOwnFile(path, "the wrap journal");
  if (!bytes) return [];
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw corrupt(path, messageOf(error));
  }
  const parsed = v.safeParse(journalSchema, json);
  if (!parsed.success) throw corrupt(path, parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`).join("; "));
  return parsed.output.records;
}

export function findRecord(configPath: string, path: string = journalPath()): JournalRecord | undefined {
  return readJournal(path).find((record) => record.configPath === configPath);
}

/** Add or replace the record for `record.configPath`. */
export function putRecord(record: JournalRecord, path: string = journalPath()): void {
  updateJournal((records) => [...records.filter((r) => r.configPath !== record.configPath), record], path);
}

/** Change the record for `configPath` (no-op when there is none). */
export function patchRecord(configPath: string, patch: Partial<JournalRecord>, path: string = journalPath()): void {
  updateJournal((records) => records.map((r) => (r.configPath === configPath ? { ...r, ...patch } : r)), path);
}

export function removeRecord(configPath: string, path: string = journalPath()): void {
  updateJournal((records) => records.filter((r) => r.configPath !== configPath), path);
}

/** Read, change and write the journal while holding its lock. */
export function updateJournal(change: (records: JournalRecord[]) => JournalRecord[], path: string = journalPath()): JournalRecord[] {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // The lock file stays: many processes take it in turn, and it is not what `doctor` looks for.
  const lock = acquireLock(`${path}.lock`, { subject: "the wrap journal", busy: "being updated", waitMs: JOURNAL_LOCK_WAIT_MS, removeOnRelease: false });
  try {
    const records = change(readJournal(path));
    if (records.length > 0) {
      writeFileAtomic(path, `${JSON.stringify({ version: 1, records }, null, 2)}\n`, { mode: 0o600 });
    } else if (existsSync(path)) {
      unlinkSync(path);
      fsyncDirectory(dirname(path));
    }
    return records;
  } finally {
    lock.release();
  }
}

function corrupt(path: string, detail: string): ThoughtGateError {
  return new ThoughtGateError(
    "CONFIG",
    `the wrap journal ${path} is not valid (${detail}); configs it tracked may still be rewritten: put each \`<config>.thoughtgate-backup\` back by hand, then delete the journal`,
  );
}
