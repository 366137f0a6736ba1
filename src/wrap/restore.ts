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
  const originalTree = parseTree(backup);
  let text = current;
  // Work from the end of the file backwards so earlier offsets stay valid.
  const edits = owned
    .map((path) => ({ path, now: nodeAt(parseTree(text), path), before: nodeAt(originalTree, path) }))
    .filter((edit): edit is { path: JSONPath; now: Node; before: Node | undefined } => edit.now !== undefined);
  for (const { path, before } of edits.sort((a, b) => b.now.offset - a.now.offset)) {
    const now = nodeAt(parseTree(text), path);
    if (!now) continue;
    if (before) {
      text = text.slice(0, now.offset) + backup.slice(before.offset, before.offset + before.length) + text.slice(now.offset + now.length);
    } else {
      // No formatting options: the edit removes exactly `,<whitespace>"key": value` after the
      // previous property, which is what the rewrite inserted. With formatting, jsonc-parser
      // would also reflow the lines around it (a one-line entry becomes several).
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
