import { redactText } from "../../telemetry/redact.ts";

/**
 * What a call would change in a file, as a unified diff, wherever that can be computed from the
 * call's arguments (docs/governance.md, "What a person is shown"): an edit's old and new text
 * (`edits: [{oldText, newText}]` as server-filesystem's `edit_file` takes them, or one
 * `old_string`/`new_string` pair), and a write whose target the caller can read (`readExisting`: the
 * service reads only a regular file inside the session's project, see file-before.ts). The diff is
 * made from the arguments as a person is shown them (already redacted); a file's old text is
 * redacted here. `covers`: where in the arguments the diff's texts came from, so the arguments can
 * show a pointer there instead of the same text twice.
 */
export type ChangePreview = { path: string; diff: string; covers: Array<Array<string | number>> };

/** How the old text of a file is read, or null when it cannot or must not be. */
export type ReadExisting = (path: string) => string | null;

const PATH_KEYS = ["path", "file_path", "filePath", "filename", "file"] as const;
const OLD_KEYS = ["oldText", "old_text", "old_string", "oldString", "old_str"] as const;
const NEW_KEYS = ["newText", "new_text", "new_string", "newString", "new_str"] as const;
const CONTENT_KEYS = ["content", "contents", "file_text"] as const;

/** Lines of context around each change (git's default). */
const CONTEXT_LINES = 3;
/**
 * A diff that takes more than this to compute is not shown (the arguments are): Myers' algorithm
 * is quadratic in the worst case, and the arguments are the agent's.
 */
const DIFF_TIMEOUT_MS = 150;
const MAX_EDIT_LENGTH = 5_000;

export function previewChange(args: unknown, readExisting?: ReadExisting): ChangePreview | null {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return null;
  const record = args as Record<string, unknown>;
  const pathKey = PATH_KEYS.find((key) => typeof record[key] === "string");
  if (pathKey === undefined) return null;
  const path = record[pathKey] as string;

  const edits = record.edits;
  if (Array.isArray(edits) && edits.length > 0) {
    const pairs = edits.map((edit) => pairOf(edit));
    if (pairs.every((pair) => pair !== null)) {
      const hunks: string[] = [];
      for (const [i, pair] of pairs.entries()) {
        const lines = hunkLines(pair.old, pair.new);
        if (lines === null) return null;
        hunks.push(`@@ edit ${i + 1} of ${pairs.length} @@`, ...lines);
      }
      return { path, diff: [`--- ${path}`, `+++ ${path}`, ...hunks].join("\n"), covers: pairs.flatMap((pair, i) => [["edits", i, pair.oldKey], ["edits", i, pair.newKey]]) };
    }
  }
  const pair = pairOf(record);
  if (pair) {
    const lines = hunkLines(pair.old, pair.new);
    return lines === null ? null : { path, diff: [`--- ${path}`, `+++ ${path}`, "@@ the edit @@", ...lines].join("\n"), covers: [[pair.oldKey], [pair.newKey]] };
  }
  const contentKey = CONTENT_KEYS.find((key) => typeof record[key] === "string");
  if (contentKey === undefined || readExisting === undefined) return null;
  const before = readExisting(path);
  if (before === null) return null;
  const patch = diffLibrary().structuredPatch(path, path, redactText(before), record[contentKey] as string, "", "", { context: CONTEXT_LINES, timeout: DIFF_TIMEOUT_MS, maxEditLength: MAX_EDIT_LENGTH });
  if (patch === undefined) return null;
  const body = patch.hunks.flatMap((hunk) => [`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, ...hunk.lines]);
  return { path, diff: [`--- ${path}`, `+++ ${path}`, ...(body.length > 0 ? body : ["(the new content is the same as the file's)"])].join("\n"), covers: [[contentKey]] };
}

/** `diff`, loaded on the first change shown rather than with every shim: most shims never show one. */
function diffLibrary(): typeof import("diff") {
  return require("diff") as typeof import("diff");
}

type Pair = { old: string; new: string; oldKey: string; newKey: string };

function pairOf(value: unknown): Pair | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const oldKey = OLD_KEYS.find((key) => typeof record[key] === "string");
  const newKey = NEW_KEYS.find((key) => typeof record[key] === "string");
  if (oldKey === undefined || newKey === undefined) return null;
  return { old: record[oldKey] as string, new: record[newKey] as string, oldKey, newKey };
}

/** The changed lines of `before` → `after` with their context, one hunk's body; null when too costly. */
function hunkLines(before: string, after: string): string[] | null {
  // Whole text as context: an edit's texts are the fragment that changes, every line of it shown.
  // A fragment's last line is a line like any other: "A=1" and "A=1\n…" share their first line.
  const patch = diffLibrary().structuredPatch("", "", `${before}\n`, `${after}\n`, "", "", { context: Number.MAX_SAFE_INTEGER, timeout: DIFF_TIMEOUT_MS, maxEditLength: MAX_EDIT_LENGTH });
  if (patch === undefined) return null;
  const lines = patch.hunks.flatMap((hunk) => hunk.lines);
  return lines.length > 0 ? lines : ["(no change)"];
}
