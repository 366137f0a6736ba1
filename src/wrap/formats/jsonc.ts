/**
 * JSON and JSONC configs (every agent but Codex and goose). Values are found with the scanner of
 * `adapters/jsonc.ts`, which never builds a tree of the whole file (a `~/.claude.json` passes a
 * megabyte); only the small objects an edit touches are parsed with jsonc-parser.
 */
import { getNodeValue, type Node } from "jsonc-parser";
import { jsoncProblem, locateValues, parseSpan, propertiesOf, spliceAll } from "../adapters/jsonc.ts";
import { detectFormatting, restoreOwnedKeys } from "../merge-owned-keys.ts";
import type { ConfigFormat, DocumentEdit, ObjectEdit } from "./types.ts";

type Edit = { offset: number; length: number; content: string };

export const jsonc: ConfigFormat = {
  name: "jsonc",
  edit: (text) => new JsoncDocument(text),
  restoreOwnedKeys: (backup, rewritten, current, owned) => restoreOwnedKeys(backup, rewritten, current, [...owned]),
};

class JsoncDocument implements DocumentEdit {
  readonly edits: Edit[] = [];
  private readonly eol: string;
  private readonly unit: string;

  constructor(readonly text: string) {
    const problem = jsoncProblem(text);
    if (problem) throw new Error(problem);
    const { insertSpaces, tabSize, eol } = detectFormatting(text);
    this.eol = eol;
    this.unit = insertSpaces ? " ".repeat(tabSize) : "\t";
  }

  objects(paths: Parameters<DocumentEdit["objects"]>[0]): (ObjectEdit | undefined)[] {
    const { spans, duplicates } = locateValues(this.text, paths);
    if (duplicates.length > 0) throw new Error(`has "${duplicates[0]}" twice`);
    return spans.map((span) => {
      const tree = span ? parseSpan(this.text, span) : undefined;
      return tree?.node.type === "object" ? new JsoncObject(this, tree.base, tree.node) : undefined;
    });
  }

  apply(): string {
    return spliceAll(this.text, this.edits);
  }

  replace(base: number, node: Node, value: unknown): void {
    const offset = base + node.offset;
    const multiline = this.text.slice(offset, offset + node.length).includes("\n");
    this.edits.push({ offset, length: node.length, content: this.render(value, multiline, indentOf(this.text, offset)) });
  }

  /**
   * Add properties after the object's last one, laid out like the object (one per line, or
   * inline): `,<newline><indent>"key": value`, which `restoreOwnedKeys` removes exactly.
   */
  insert(base: number, object: Node, properties: readonly [string, unknown][]): void {
    const children = object.children ?? [];
    const firstChild = children[0];
    const last = children.at(-1);
    if (properties.length === 0 || !firstChild || !last) return;
    const multiline = this.text.slice(base + object.offset, base + firstChild.offset).includes("\n");
    const indent = multiline ? indentOf(this.text, base + last.offset) : "";
    const separator = multiline ? this.eol + indent : " ";
    const content = properties.map(([key, value]) => `,${separator}${JSON.stringify(key)}: ${this.render(value, multiline, indent)}`).join("");
    this.edits.push({ offset: base + last.offset + last.length, length: 0, content });
  }

  private render(value: unknown, multiline: boolean, indent: string): string {
    const inner = indent + this.unit;
    const layout = (open: string, close: string, items: string[]) => {
      if (items.length === 0) return open + close;
      if (!multiline) return open === "{" ? `{ ${items.join(", ")} }` : `[${items.join(", ")}]`;
      return `${open}${this.eol}${inner}${items.join(`,${this.eol}${inner}`)}${this.eol}${indent}${close}`;
    };
    if (Array.isArray(value)) return layout("[", "]", value.map((item) => this.render(item, multiline, inner)));
    if (typeof value === "object" && value !== null) {
      return layout("{", "}", Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${this.render(item, multiline, inner)}`));
    }
    return JSON.stringify(value);
  }
}

class JsoncObject implements ObjectEdit {
  private readonly fields: Map<string, Node>;

  constructor(
    private readonly document: JsoncDocument,
    private readonly base: number,
    private readonly node: Node,
  ) {
    const { props, duplicate } = propertiesOf(node);
    if (duplicate !== undefined) throw new Error(`has "${duplicate}" twice in one server`);
    this.fields = props;
  }

  get(key: string): unknown {
    const node = this.fields.get(key);
    return node ? (getNodeValue(node) as unknown) : undefined;
  }

  has(key: string): boolean {
    return this.fields.has(key);
  }

  child(key: string): ObjectEdit | undefined {
    const node = this.fields.get(key);
    // `{}` takes no key after its last one: the caller writes the whole object instead.
    return node?.type === "object" && (node.children?.length ?? 0) > 0 ? new JsoncObject(this.document, this.base, node) : undefined;
  }

  replace(key: string, value: unknown): void {
    const node = this.fields.get(key);
    if (!node) throw new Error(`has no "${key}" to replace`);
    this.document.replace(this.base, node, value);
  }

  insert(properties: readonly [string, unknown][]): void {
    this.document.insert(this.base, this.node, properties);
  }
}

/** The whitespace a line starts with, for the line that holds `offset`. */
export function indentOf(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))?.[0] ?? "";
}
