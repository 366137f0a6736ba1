import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../core/paths.ts";
import { isSessionId } from "../core/session-file.ts";

/** One file of the record: a wrap session's, or a standalone run's. */
export type RecordFile = { path: string; session: string | null; size: number; mtimeMs: number };

/**
 * Every file of this user's record, found by walking the state directory (never by trusting what
 * a process's argv said): `sessions/<id>/events.jsonl` of each wrap session, and the standalone
 * runs' `runs/<date>/<server>-<run id>.jsonl` (docs/events.md). A symlink is not followed: the
 * state directory is the user's own, and the record is what was written there.
 */
export function recordFiles(env: NodeJS.ProcessEnv = process.env): RecordFile[] {
  const root = stateDir(env);
  const files: RecordFile[] = [];
  for (const id of entries(join(root, "sessions"))) {
    if (!isSessionId(id)) continue;
    const file = regular(join(root, "sessions", id, "events.jsonl"));
    if (file) files.push({ ...file, session: id });
  }
  for (const day of entries(join(root, "runs"))) {
    for (const name of entries(join(root, "runs", day))) {
      if (!name.endsWith(".jsonl")) continue;
      const file = regular(join(root, "runs", day, name));
      if (file) files.push({ ...file, session: null });
    }
  }
  return files;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function regular(path: string): { path: string; size: number; mtimeMs: number } | null {
  try {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    return stat?.isFile() ? { path, size: stat.size, mtimeMs: stat.mtimeMs } : null;
  } catch {
    return null;
  }
}
