/**
 * The wrap journal (`journalPath()`): one record per config ThoughtGate has backed up and may have
 * rewritten, with who keeps it rewritten (the wraps using it, `enroll`), so the last of them to let
 * go puts it back, and `unwrap` (or the next `wrap`) can after `kill -9` or a reboot. Every
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

/**
 * Who keeps a config rewritten: each running wrap whose session uses it (its pid and start stamp,
 * so a reused pid is not taken for it), and `enroll` (for good, until `unenroll`). The config is put
 * back when the last one lets go; a wrap that died holds nothing (repair.ts).
 */
const holderSchema = v.variant("kind", [
  v.object({
    kind: v.literal("wrap"),
    pid: v.pipe(v.number(), v.integer()),
    pidStart: v.nullable(v.string()),
    startedAt: v.string(),
    runId: v.string(),
  }),
  /** `thoughtgate enroll <agent>`: the agent's config stays rewritten until `unenroll`. */
  v.object({ kind: v.literal("enroll"), agent: v.string(), since: v.string() }),
]);

export type Holder = v.InferOutput<typeof holderSchema>;

const journalRecordSchema = v.object({
  /** Absolute path of the config, the record's key. */
  configPath: v.string(),
  backupPath: v.string(),
  agentType: v.string(),
  /** JSON paths of the entries wrap rewrote (what `restoreOwnedKeys` puts back). */
  owned: v.array(jsonPathSchema),
  /** SHA-256 (hex) of the text wrap wrote; null while the config is backed up but not yet rewritten. */
  rewrittenSha256: v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  /** SHA-256 of the backup's bytes: a backup changed behind the journal's back is never put back. */
  backupSha256: v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  /**
   * What wrap wrote at each of `owned` (the same order, as plain data): a key that holds something
   * else by the time it is put back was changed by the user, and stays as they made it (put-back.ts).
   * Absent in records written before it was kept.
   */
  written: v.optional(v.array(v.unknown())),
  /**
   * The config did not exist before ThoughtGate wrote it (a settings file made for the hook): it
   * has no backup, and putting it back means removing it (put-back.ts).
   */
  created: v.optional(v.literal(true)),
  holders: v.array(holderSchema),
});

export type JournalRecord = v.InferOutput<typeof journalRecordSchema>;

/** The first journal: one wrap per config, named by its pid. Read so a config it left is still repaired. */
const firstRecordSchema = v.pipe(
  v.object({
    configPath: v.string(),
    backupPath: v.string(),
    agentType: v.string(),
    owned: v.array(jsonPathSchema),
    rewrittenSha256: v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
    pid: v.pipe(v.number(), v.integer()),
    pidStart: v.nullable(v.string()),
    startedAt: v.string(),
  }),
  v.transform(({ pid, pidStart, startedAt, ...rest }): JournalRecord => ({ ...rest, backupSha256: null, holders: [{ kind: "wrap", pid, pidStart, startedAt, runId: "" }] })),
);

const journalSchema = v.union([
  v.object({ version: v.literal(2), records: v.array(journalRecordSchema) }),
  v.object({ version: v.literal(1), records: v.array(firstRecordSchema) }),
]);

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
function updateJournal(change: (records: JournalRecord[]) => JournalRecord[], path: string = journalPath()): JournalRecord[] {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // The lock file stays: many processes take it in turn, and it is not what `doctor` looks for.
  const lock = acquireLock(`${path}.lock`, { subject: "the wrap journal", busy: "being updated", waitMs: JOURNAL_LOCK_WAIT_MS, removeOnRelease: false });
  try {
    const records = change(readJournal(path));
    if (records.length > 0) {
      writeFileAtomic(path, `${JSON.stringify({ version: 2, records }, null, 2)}\n`, { mode: 0o600 });
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
