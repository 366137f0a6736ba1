import { applyEdits, findNodeAtLocation, modify, parseTree, type JSONPath, type Node } from "jsonc-parser";
import { jsoncProblem, locateValues, parseSpan, spliceAll, type Span } from "./adapters/jsonc.ts";

/**
 * Put back the entries wrap rewrote, and nothing else (docs/architecture.md, decision 8). `backup` is the file as
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
  const edits = ownedEdits(backup, current, owned);
  return edits ? spliceAll(current, edits) : restoreOneByOne(backup, current, owned);
}

type Edit = { offset: number; length: number; content: string };
/** A node of a tree parsed from `text.slice(base)`: offsets in the file are `base + node.offset`. */
type Located = { node: Node; base: number };

/**
 * All edits from one look at each text, applied together from the end of the file. A megabyte
 * ~/.claude.json with a dozen owned keys took half a second when every edit re-parsed it, and
 * Claude Code saves that file during every session, so this is the usual path. Undefined when
 * edits would overlap (nested owned paths, removals of two leading properties of one object):
 * those go one at a time.
 */
function ownedEdits(backup: string, current: string, owned: JSONPath[]): Edit[] | undefined {
  const found = lookUpThroughParents(backup, current, owned) ?? lookUpInTrees(backup, current, owned);
  const edits: Edit[] = [];
  for (const { now, before } of found) {
    if (!now) continue;
    const edit = before
      ? { offset: now.base + now.node.offset, length: now.node.length, content: backup.slice(before.base + before.node.offset, before.base + before.node.offset + before.node.length) }
      : removal(now);
    if (!edit) return undefined;
    edits.push(edit);
  }
  edits.sort((a, b) => a.offset - b.offset);
  const overlaps = edits.some((edit, i) => i > 0 && edit.offset < (edits[i - 1]?.offset ?? 0) + (edits[i - 1]?.length ?? 0));
  return overlaps ? undefined : edits;
}

/**
 * Each owned key through its parent object (an entry, an env map): `locateValues` finds the
 * parents in one pass without a tree of the whole file, and only those small objects are parsed.
 * Undefined when that does not apply (a top-level or array path, a text that is not valid JSONC,
 * duplicate keys on the way).
 */
function lookUpThroughParents(backup: string, current: string, owned: JSONPath[]): { now?: Located; before?: Located }[] | undefined {
  if (owned.some((path) => path.length < 2 || path.some((segment) => typeof segment !== "string"))) return undefined;
  if (jsoncProblem(current) !== undefined || jsoncProblem(backup) !== undefined) return undefined;
  const parents = owned.map((path) => path.slice(0, -1));
  const now = locateValues(current, parents);
  const before = locateValues(backup, parents);
  if (now.duplicates.length > 0 || before.duplicates.length > 0) return undefined;
  const child = (text: string, span: Span | undefined, key: JSONPath[number] | undefined): Located | undefined => {
    const parent = span && key !== undefined ? parseSpan(text, span) : undefined;
    const node = parent && key !== undefined ? findNodeAtLocation(parent.node, [key]) : undefined;
    return parent && node ? { node, base: parent.base } : undefined;
  };
  return owned.map((path, i) => ({ now: child(current, now.spans[i], path.at(-1)), before: child(backup, before.spans[i], path.at(-1)) }));
}

/** The general lookup: one jsonc-parser tree of each text (error-tolerant). */
function lookUpInTrees(backup: string, current: string, owned: JSONPath[]): { now?: Located; before?: Located }[] {
  const nowTree = parseTree(current);
  const beforeTree = parseTree(backup);
  const at = (tree: Node | undefined, path: JSONPath): Located | undefined => {
    const node = nodeAt(tree, path);
    return node && { node, base: 0 };
  };
  return owned.map((path) => ({ now: at(nowTree, path), before: at(beforeTree, path) }));
}

/**
 * Remove the property holding `value` exactly as jsonc-parser's unformatted `modify(…, undefined)`
 * does: from the end of the previous property (taking its comma), or for the first property up
 * to the next one. No formatting: the edit removes exactly `,<whitespace>"key": value`, which is
 * what the rewrite inserted; jsonc-parser's formatting would also reflow the lines around it.
 */
function removal({ node: value, base }: Located): Edit | undefined {
  const property = value.parent;
  const object = property?.parent;
  const siblings = object?.children;
  if (!property || property.type !== "property" || !object || object.type !== "object" || !siblings) return undefined;
  const index = siblings.indexOf(property);
  const previous = siblings[index - 1];
  const next = siblings[index + 1];
  const end = property.offset + property.length;
  const from = previous ? previous.offset + previous.length : object.offset + 1;
  const to = previous || !next ? end : next.offset;
  return { offset: base + from, length: to - from, content: "" };
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
