/**
 * TOML configs (Codex `config.toml`), read with toml-eslint-parser: a TOML 1.0/1.1 parser that
 * rejects what the TOML spec rejects (a key or table defined twice) and gives the source range of
 * every key, value and table, so an edit replaces exactly the bytes of one value and everything
 * else (comments, blank lines, quoting, key order) stays. The same server can be written in four
 * ways, and each edit keeps the way the file uses:
 *
 *   [mcp_servers.fs]            [mcp_servers]                        [mcp_servers]
 *   command = "npx"             fs = { command = "npx" }             fs.command = "npx"
 *   [mcp_servers.fs.env]                                             mcp_servers.fs.command = "npx" (at the top)
 *   K = "v"
 *
 * A key is added after the object's last key: on a new line with the same indentation and dotted
 * prefix (`fs.args = [...]`), or inside an inline table as `, args = [...]`; under a table header
 * that has no key yet, on the line after the header.
 */
import type { JSONPath } from "jsonc-parser";
import { messageOf } from "../../core/errors.ts";
import { getStaticTOMLValue, parseTOML, type AST } from "toml-eslint-parser";
import { isPlainObject, spliceAll, type Span } from "../adapters/jsonc.ts";
import type { ConfigFormat, DocumentEdit, ObjectEdit } from "./types.ts";
import { eolOf, lineEnd, lineRemoval, restoreBySpans, trimEnd, type OwnedSpan } from "./owned-keys.ts";
import { indentOf } from "./jsonc.ts";

type Path = (string | number)[];
type KeyValue = { path: Path; node: AST.TOMLKeyValue; inline: boolean };
type Section = { path: Path; node: AST.TOMLTable };
type Edit = Span & { content: string };

/** TOML 1.1 reads every 1.0 file and the multi-line inline tables newer writers produce. */
const TOML_VERSION = "1.1.0";

export type ParsedToml = { ast: AST.TOMLProgram; value: Record<string, unknown> };

/**
 * Parse a TOML text, or throw an Error saying where it does not parse. A byte-order mark is read
 * as a space (the parser refuses it; a space keeps every offset where it is).
 */
export function parseTomlText(text: string): ParsedToml {
  const source = text.charCodeAt(0) === 0xfeff ? ` ${text.slice(1)}` : text;
  let ast: AST.TOMLProgram;
  try {
    ast = parseTOML(source, { tomlVersion: TOML_VERSION });
  } catch (error) {
    const { lineNumber, column, message } = error as { lineNumber?: number; column?: number; message?: string };
    const where = lineNumber === undefined ? "" : `line ${lineNumber}, column ${(column ?? 0) + 1}: `;
    throw new Error(`does not parse as TOML (${where}${message ?? String(error)})`);
  }
  const value: unknown = getStaticTOMLValue(ast);
  return { ast, value: isPlainObject(value) ? value : {} };
}

export const toml: ConfigFormat = {
  name: "toml",
  edit: (text) => new TomlDocument(text),
  restoreOwnedKeys: (backup, rewritten, current, owned) => restoreBySpans(backup, rewritten, current, owned, locate),
};

/** Every key/value and table of a document with its full key path. */
class TomlIndex {
  readonly keyValues: KeyValue[] = [];
  readonly sections: Section[] = [];

  constructor(ast: AST.TOMLProgram) {
    const [top] = ast.body;
    for (const item of top?.body ?? []) {
      if (item.type === "TOMLKeyValue") this.add(item, [], false);
      else {
        this.sections.push({ path: item.resolvedKey, node: item });
        for (const keyValue of item.body) this.add(keyValue, item.resolvedKey, false);
      }
    }
  }

  private add(node: AST.TOMLKeyValue, prefix: Path, inline: boolean): void {
    const path = [...prefix, ...keysOf(node.key)];
    this.keyValues.push({ path, node, inline });
    if (node.value.type === "TOMLInlineTable") for (const inner of node.value.body) this.add(inner, path, true);
  }

  keyValueAt(path: Path): KeyValue | undefined {
    return this.keyValues.find((keyValue) => samePath(keyValue.path, path));
  }

  sectionAt(path: Path): Section | undefined {
    return this.sections.find((section) => section.node.kind === "standard" && samePath(section.path, path));
  }

  /** The key/values one key below `path`, in the order of the file. */
  direct(path: Path): KeyValue[] {
    return this.keyValues.filter((keyValue) => keyValue.path.length === path.length + 1 && startsWith(keyValue.path, path));
  }
}

class TomlDocument implements DocumentEdit {
  readonly edits: Edit[] = [];
  readonly index: TomlIndex;
  readonly value: Record<string, unknown>;
  readonly eol: string;

  constructor(readonly text: string) {
    const { ast, value } = parseTomlText(text);
    this.index = new TomlIndex(ast);
    this.value = value;
    this.eol = eolOf(text);
  }

  objects(paths: readonly JSONPath[]): (ObjectEdit | undefined)[] {
    return paths.map((path) => this.object(path));
  }

  object(path: Path): TomlObject | undefined {
    if (!isPlainObject(valueAt(this.value, path))) return undefined;
    // An object that exists only through deeper tables (`[a.b.c]` without `[a.b]`) has no place to add a key.
    if (this.index.direct(path).length === 0 && !this.index.sectionAt(path)) return undefined;
    return new TomlObject(this, path);
  }

  apply(): string {
    return spliceAll(this.text, this.edits);
  }
}

class TomlObject implements ObjectEdit {
  constructor(
    private readonly document: TomlDocument,
    private readonly path: Path,
  ) {}

  get(key: string): unknown {
    return valueAt(this.document.value, [...this.path, key]);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  child(key: string): ObjectEdit | undefined {
    return this.document.object([...this.path, key]);
  }

  replace(key: string, value: unknown): void {
    const keyValue = this.document.index.keyValueAt([...this.path, key]);
    if (!keyValue) throw new Error(`has "${key}" as a table, which wrap does not replace`);
    const [start, end] = keyValue.node.value.range;
    this.document.edits.push({ offset: start, length: end - start, content: renderToml(value) });
  }

  insert(properties: readonly [string, unknown][]): void {
    if (properties.length === 0) return;
    const { text, eol, edits, index } = this.document;
    const anchor = index.direct(this.path).at(-1);
    if (anchor?.inline) {
      const prefix = dottedPrefix(text, anchor.node.key);
      const content = properties.map(([key, value]) => `, ${prefix}${renderKey(key)} = ${renderToml(value)}`).join("");
      edits.push({ offset: anchor.node.range[1], length: 0, content });
      return;
    }
    // After the anchor's line (its trailing comment stays on it), or after a bare `[table]` header.
    const section = index.sectionAt(this.path);
    const [start, after, prefix] = anchor
      ? [anchor.node.range[0], anchor.node.range[1], dottedPrefix(text, anchor.node.key)]
      : section
        ? [section.node.range[0], text.indexOf("]", section.node.key.range[1]) + 1, ""]
        : [undefined, undefined, ""];
    if (start === undefined || after === undefined) throw new Error("has no place to add a key");
    const indent = indentOf(text, start);
    const content = properties.map(([key, value]) => `${eol}${indent}${prefix}${renderKey(key)} = ${renderToml(value)}`).join("");
    edits.push({ offset: lineEnd(text, after), length: 0, content });
  }
}

/** For restoreOwnedKeys: the value or table at each path, and how to cut it out. */
function locate(text: string, paths: readonly JSONPath[]): (OwnedSpan | undefined)[] {
  let index: TomlIndex;
  try {
    index = new TomlIndex(parseTomlText(text).ast);
  } catch (error) {
    throw new Error(`the config ${messageOf(error)}: cannot put back the entries wrap owns`);
  }
  return paths.map((path) => {
    const keyValue = index.keyValueAt(path);
    if (keyValue) return { kind: "value", value: spanOf(keyValue.node.value.range), removal: keyValueRemoval(text, keyValue) };
    const section = index.sectionAt(path);
    if (!section) return undefined;
    // A table wrap added whole (a writer turned `env = {...}` into `[x.env]`): its header and its
    // keys, and the blank lines that set it apart from what comes before.
    const end = section.node.body.at(-1)?.range[1] ?? text.indexOf("]", section.node.key.range[1]) + 1;
    const start = trimEnd(text, section.node.range[0]);
    const removal = start > 0 ? { offset: start, length: end - start } : lineRemoval(text, section.node.range[0], end);
    return { kind: "section", value: removal, removal };
  });
}

function keyValueRemoval(text: string, { node, inline }: KeyValue): Span {
  if (!inline) return lineRemoval(text, node.range[0], node.range[1]);
  const table = node.parent as AST.TOMLInlineTable;
  const siblings = table.body;
  const at = siblings.indexOf(node);
  const previous = siblings[at - 1];
  const next = siblings[at + 1];
  // As for JSON: from the end of the previous key/value (taking its comma), or for the first one up to the next.
  const from = previous ? previous.range[1] : table.range[0] + 1;
  const to = previous || !next ? node.range[1] : next.range[0];
  return { offset: from, length: to - from };
}

const spanOf = ([start, end]: [number, number]): Span => ({ offset: start, length: end - start });

function keysOf(key: AST.TOMLKey): string[] {
  return key.keys.map((part) => (part.type === "TOMLBare" ? part.name : part.value));
}

/** `a.b.` of `a.b.c = 1` exactly as written (quoting and spacing kept); "" for a plain key. */
function dottedPrefix(text: string, key: AST.TOMLKey): string {
  const last = key.keys.at(-1);
  return last ? text.slice(key.range[0], last.range[0]) : "";
}

function samePath(a: Path, b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((segment, i) => segment === b[i]);
}

function startsWith(path: Path, prefix: readonly (string | number)[]): boolean {
  return prefix.every((segment, i) => path[i] === segment);
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let node = value;
  for (const segment of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[String(segment)];
  }
  return node;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function renderKey(key: string): string {
  return BARE_KEY.test(key) ? key : tomlString(key);
}

/** A TOML value on one line: basic strings, arrays, inline tables. */
function renderToml(value: unknown): string {
  if (typeof value === "string") return tomlString(value);
  if (Array.isArray(value)) return `[${value.map(renderToml).join(", ")}]`;
  if (isPlainObject(value)) {
    const items = Object.entries(value).map(([key, item]) => `${renderKey(key)} = ${renderToml(item)}`);
    return items.length === 0 ? "{}" : `{ ${items.join(", ")} }`;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`cannot write ${String(value)} as TOML`);
}

/** A TOML basic string: JSON's escapes are TOML's, except DEL, which TOML wants escaped too. */
function tomlString(value: string): string {
  return JSON.stringify(value).replaceAll("\u007f", "\\u007F");
}
