import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { bestEffort } from "../core/errors.ts";
import { isSameProcessRunning } from "../core/process-identity.ts";
import { readSessionDescriptor } from "../core/session-descriptor.ts";
import { SESSION_FILES } from "../core/session-file.ts";
import type { RecordIndex } from "./record-index.ts";

export type PruneResult = { files: number; calls: number; kept: string[] };

/**
 * `thoughtgate log --prune --older-than D`: remove the record files whose newest event is older
 * than `cutoff`, and their rows in the index. A file is removed whole or not at all (one that holds
 * anything newer stays): the JSONL is the record, and a shim may still be appending to it. A wrap
 * session goes with its folder (its `wrap.json`), unless its wrap is still running. Run files'
 * day folders left empty go too.
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
