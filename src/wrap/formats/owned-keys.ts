/**
 * `restoreOwnedKeys` for formats whose parser gives the exact span of every key and value (TOML,
 * YAML): each owned value gets the source text it had in the backup, a key wrap added is cut out
 * with the separator `insert` put before it, and nothing else of the current text changes.
 */
import type { JSONPath } from "jsonc-parser";
import { spliceAll, type Span } from "../adapters/jsonc.ts";

/** Where an owned path is in a text: its value, and what to cut to remove the key entirely. */
export type OwnedSpan = {
  /** `section`: a TOML `[table]` (header and body), which only another section can replace. */
  kind: "value" | "section";
  value: Span;
  removal: Span;
};

/** The spans of `paths` in `text`; throws when `text` cannot be read (nothing is then written). */
export type Locate = (text: string, paths: readonly JSONPath[]) => (OwnedSpan | undefined)[];

type Edit = Span & { content: string };

export function restoreBySpans(backup: string, rewritten: string, current: string, owned: readonly JSONPath[], locate: Locate): string {
  if (current === rewritten) return backup;
  const before = locate(backup, owned);
  const now = locate(current, owned);
  const editFor = (span: OwnedSpan, i: number): Edit => {
    const original = before[i];
    if (original && original.kind === span.kind) {
      return { ...span.value, content: backup.slice(original.value.offset, original.value.offset + original.value.length) };
    }
    return { ...span.removal, content: "" };
  };
  const edits = now.flatMap((span, i) => (span ? [editFor(span, i)] : [])).sort((a, b) => a.offset - b.offset);
  const overlapping = edits.some((edit, i) => i > 0 && edit.offset < (edits[i - 1]?.offset ?? 0) + (edits[i - 1]?.length ?? 0));
  if (!overlapping) return spliceAll(current, edits);
  // Removals of neighbouring keys of one inline object share a separator: one at a time, last first,
  // looking each path up again in the text as it is by then.
  const order = now
    .map((span, i) => ({ i, at: span?.value.offset ?? -1 }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => b.at - a.at);
  let text = current;
  for (const { i } of order) {
    const path = owned[i];
    const [span] = path ? locate(text, [path]) : [];
    if (span) text = spliceAll(text, [editFor(span, i)]);
  }
  return text;
}

/** `offset` moved back over spaces, tabs and line breaks, never before `floor`. */
export function trimEnd(text: string, offset: number, floor = 0): number {
  let end = offset;
  while (end > floor && /[ \t\r\n]/.test(text[end - 1] ?? "")) end--;
  return end;
}

/** Where the line holding `offset` ends (before its `\r\n` or `\n`), or the end of the text. */
export function lineEnd(text: string, offset: number): number {
  const newline = text.indexOf("\n", offset);
  if (newline < 0) return text.length;
  return text[newline - 1] === "\r" ? newline - 1 : newline;
}

/**
 * The span of a whole line-form entry starting at `start` and ending at `end`, with the line break
 * before it, as an insertion `<eol><indent>entry` added it; for the first line of a text, the
 * line break after it instead.
 */
export function lineRemoval(text: string, start: number, end: number): Span {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const from = /^[ \t]*$/.test(text.slice(lineStart, start)) ? lineStart : start;
  if (from > 0 && from === lineStart) {
    const breakAt = text[from - 2] === "\r" ? from - 2 : from - 1;
    return { offset: breakAt, length: end - breakAt };
  }
  const next = lineEnd(text, end);
  const after = text.startsWith("\r\n", next) ? next + 2 : text.startsWith("\n", next) ? next + 1 : next;
  return { offset: from, length: after - from };
}

/** The line break a text uses. */
export function eolOf(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}
