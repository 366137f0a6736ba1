import { applyEdits, findNodeAtLocation, modify, parseTree, type JSONPath, type Node } from "jsonc-parser";

/**
 * Put back the entries wrap rewrote, and nothing else (DESIGN decision 8). `backup` is the file as
 * it was before wrap, `rewritten` what wrap wrote, `current` what is on disk now, `owned` the JSON
 * paths of the entries wrap rewrote (e.g. ["mcpServers", "github"]).
 *
 * - Nobody touched the file since wrap wrote it: the backup comes back byte for byte.
 * - The agent changed it meanwhile: its changes stay, and each owned entry gets its original source
 *   text back (comments and formatting inside the entry included). An owned entry the agent
 *   deleted stays deleted; one wrap added (absent in the backup) is removed.
 */
export function restoreOwnedKeys(backup: string, rewritten: string, current: string, owned: JSONPath[]): string {
  if (current === rewritten) return backup;
  // One parse of each text, all edits applied from the end of the file: a megabyte
  // ~/.claude.json with a dozen owned keys took half a second when every edit re-parsed.
  const nowTree = parseTree(current);
  const beforeTree = parseTree(backup);
  const edits: Edit[] = [];
  for (const path of owned) {
    const now = nodeAt(nowTree, path);
    if (!now) continue;
    const before = nodeAt(beforeTree, path);
    const edit = before ? { offset: now.offset, length: now.length, content: backup.slice(before.offset, before.offset + before.length) } : removal(now);
    if (!edit) return restoreOneByOne(backup, current, owned);
    edits.push(edit);
  }
  edits.sort((a, b) => a.offset - b.offset);
  // Nested owned paths, or removals that touch (two leading properties of one object), would
  // overlap: those take the slow path, which re-parses after every edit.
  if (edits.some((edit, i) => i > 0 && edit.offset < (edits[i - 1]?.offset ?? 0) + (edits[i - 1]?.length ?? 0))) {
    return restoreOneByOne(backup, current, owned);
  }
  return applyEdits(current, edits);
}

type Edit = { offset: number; length: number; content: string };

/**
 * Remove the property holding `value` exactly as jsonc-parser's unformatted `modify(…, undefined)`
 * does: from the end of the previous property (taking its comma), or for the first property up
 * to the next one. No formatting: the edit removes exactly `,<whitespace>"key": value`, which is
 * what the rewrite inserted; jsonc-parser's formatting would also reflow the lines around it.
 */
function removal(value: Node): Edit | undefined {
  const property = value.parent;
  const object = property?.parent;
  const siblings = object?.children;
  if (!property || property.type !== "property" || !object || object.type !== "object" || !siblings) return undefined;
  const index = siblings.indexOf(property);
  const previous = siblings[index - 1];
  const next = siblings[index + 1];
  const end = property.offset + property.length;
  if (previous) return { offset: previous.offset + previous.length, length: end - (previous.offset + previous.length), content: "" };
  return { offset: object.offset + 1, length: (next ? next.offset : end) - (object.offset + 1), content: "" };
}

/** The general case: one owned path at a time, last in the file first, re-parsing after each. */
function restoreOneByOne(backup: string, current: string, owned: JSONPath[]): string {
  const originalTree = parseTree(backup);
  let text = current;
  const edits = owned
    .map((path) => ({ path, now: nodeAt(parseTree(text), path), before: nodeAt(originalTree, path) }))
    .filter((edit): edit is { path: JSONPath; now: Node; before: Node | undefined } => edit.now !== undefined);
  for (const { path, before } of edits.sort((a, b) => b.now.offset - a.now.offset)) {
    const now = nodeAt(parseTree(text), path);
    if (!now) continue;
    if (before) {
      text = text.slice(0, now.offset) + backup.slice(before.offset, before.offset + before.length) + text.slice(now.offset + now.length);
    } else {
      text = applyEdits(text, modify(text, path, undefined, {}));
    }
  }
  return text;
}

function nodeAt(tree: Node | undefined, path: JSONPath): Node | undefined {
  return tree ? findNodeAtLocation(tree, path) : undefined;
}

/** Indentation as the file already uses it, so an edit looks like the rest of the file. */
export function detectFormatting(text: string): { insertSpaces: boolean; tabSize: number; eol: string } {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
  return { insertSpaces: !indent.startsWith("\t"), tabSize: indent.startsWith("\t") ? 1 : indent.length, eol: text.includes("\r\n") ? "\r\n" : "\n" };
}
