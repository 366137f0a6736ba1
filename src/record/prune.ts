import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { bestEffort } from "../core/errors.ts";
import { isSameProcessRunning, processStartId } from "../core/process-identity.ts";
import { readSessionDescriptor } from "../core/session-descriptor.ts";
import { SESSION_FILES } from "../core/session-file.ts";
import type { RecordIndex } from "./record-index.ts";
import { closeSync, lineAt, openRecord } from "./record-lines.ts";

export type PruneResult = { files: number; calls: number; kept: string[] };

/**
 * `thoughtgate log --prune --older-than D`: remove the record files whose newest event is older
 * than `cutoff`, and their rows in the index. A file is removed whole or not at all (one that holds
 * anything newer stays): the JSONL is the record, and a shim may still be appending to it. A wrap
 * session goes with its folder (its `wrap.json`), unless its wrap is still running; a standalone
 * run's file stays while its shim (or arbiter) runs, which keeps appending to it and whose later
 * calls would go to a deleted file. Run files' day folders left empty go too.
 */
export function pruneRecord(index: RecordIndex, cutoff: number): PruneResult {
  index.update();
  const removed: string[] = [];
  const kept: string[] = [];
  let calls = 0;
  for (const file of index.filesOlderThan(cutoff)) {
    if (file.session !== null) {
      const dir = dirname(file.path);
      const read = readSessionDescriptor(join(dir, SESSION_FILES.descriptor));
      if (read.ok && isSameProcessRunning(read.descriptor.pid, read.descriptor.startId)) {
        kept.push(file.path);
        continue;
      }
      rmSync(dir, { recursive: true, force: true });
    } else {
      if (writerRunning(file.path)) {
        kept.push(file.path);
        continue;
      }
      rmSync(file.path, { force: true });
      const day = dirname(file.path);
      // The day folder, once empty (readdir first: rmdir of a non-empty folder only fails).
      if (/^\d{4}-\d{2}-\d{2}$/.test(basename(day)) && entries(day).length === 0) bestEffort(() => rmdirSync(day));
    }
    removed.push(file.path);
    calls += file.calls;
  }
  index.forget(removed);
  return { files: removed.length, calls, kept };
}

function entries(dir: string): string[] {
  try {
    return readdirSync(join(dir));
  } catch {
    return ["?"];
  }
}

/**
 * Whether the shim or arbiter that writes a standalone run's file still runs: its `run_start` (the
 * file's first line) names its pid and when that process started (`start_id`), so a pid reused by
 * another process does not count. A record without `start_id` (written before it was recorded)
 * names no process that can be told apart from a stranger with its pid: it is not kept.
 */
function writerRunning(path: string): boolean {
  const fd = openRecord(path);
  if (fd === null) return false;
  let first: string | null;
  try {
    first = lineAt(fd, 0);
  } finally {
    closeSync(fd);
  }
  const start = parsedObject(first);
  if (start?.type !== "run_start" || typeof start.pid !== "number" || typeof start.start_id !== "string") return false;
  return processStartId(start.pid) === start.start_id;
}

function parsedObject(line: string | null): Record<string, unknown> | null {
  if (line === null) return null;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
