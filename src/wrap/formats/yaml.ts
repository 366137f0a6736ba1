/**
 * YAML configs (goose `config.yaml`), read with `yaml` (eemeli/yaml): its nodes carry the source
 * range of every key and value, so an edit replaces exactly the text from after a key to the end
 * of its value (`: <new value>`) and everything else (comments, quoting, key order, the block or
 * flow style of other values) stays. Values wrap writes are flow style (`["shim", ...]`,
 * `{"K": "v"}`), valid on one line in block and flow mappings alike. A key is added before the
 * mapping's first key, at its column (`key: value<newline><indent>`), or in a flow mapping after
 * its last value (`, key: value`).
 *
 * The document's own Document API would write the whole file back in its own style (re-quoting,
 * re-folding long lines); the spans are what keeps the rest of the file byte for byte.
 */
import type { JSONPath } from "jsonc-parser";
import { messageOf } from "../../core/errors.ts";
import { isAlias, isMap, isNode, isScalar, parseAllDocuments, parseDocument, visit, type Document, type Node, type Pair, type YAMLMap } from "yaml";
import { isPlainObject, spliceAll, type Span } from "../adapters/jsonc.ts";
import type { ConfigFormat, DocumentEdit, ObjectEdit } from "./types.ts";
import { eolOf, restoreBySpans, trimEnd, type OwnedSpan } from "./owned-keys.ts";

type Edit = Span & { content: string };
type ParsedDocument = Document.Parsed;

/** Parse one YAML document, or throw an Error saying where it does not parse. */
export function parseYamlText(text: string): ParsedDocument {
  const options = { uniqueKeys: true, prettyErrors: true } as const;
  const documents = parseAllDocuments(text, options);
  if (documents.length > 1) throw new Error("holds more than one YAML document");
  // Nothing but comments (or nothing at all): one empty document.
  const document = documents[0] ?? parseDocument(text, options);
  const [error] = document.errors;
  if (error) {
    const where = error.linePos ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}: ` : "";
    // The pretty message repeats the position and quotes the line; the first line's text is enough.
    const message = (error.message.split("\n")[0] ?? error.code).replace(/ at line \d+, column \d+:?$/, "");
    throw new Error(`does not parse as YAML (${where}${message})`);
  }
  return document;
}

/** The document's value as plain data. */
export function yamlValue(document: ParsedDocument): unknown {
  return document.contents ? document.toJS({ maxAliasCount: 100 }) : {};
}

/**
 * Whether the subtree at `path` uses anchors, aliases or merge keys (`<<`): an edit of an
 * anchored value would change every alias of it, and a merged key is not where the file says.
 */
export function usesAliases(document: ParsedDocument, path: readonly (string | number)[]): boolean {
  const node: unknown = document.getIn(path, true);
  if (!isNode(node)) return false;
  let found = false;
  visit(node, {
    Node: (_, visited) => {
      if (isAlias(visited) || (visited as { anchor?: string }).anchor) found = true;
      return found ? visit.BREAK : undefined;
    },
    Pair: (_, pair) => {
      if (isScalar(pair.key) && pair.key.value === "<<") found = true;
      return found ? visit.BREAK : undefined;
    },
  });
  return found;
}

export const yaml: ConfigFormat = {
  name: "yaml",
  edit: (text) => new YamlDocument(text),
  restoreOwnedKeys: (backup, rewritten, current, owned) => restoreBySpans(backup, rewritten, current, owned, locate),
};

class YamlDocument implements DocumentEdit {
  readonly edits: Edit[] = [];
  readonly document: ParsedDocument;
  readonly eol: string;

  constructor(readonly text: string) {
    this.document = parseYamlText(text);
    this.eol = eolOf(text);
  }

  objects(paths: readonly JSONPath[]): (ObjectEdit | undefined)[] {
    return paths.map((path) => {
      const node: unknown = this.document.getIn(path, true);
      return isMap(node) && node.range ? new YamlObject(this, node) : undefined;
    });
  }

  apply(): string {
    return spliceAll(this.text, this.edits);
  }
}

class YamlObject implements ObjectEdit {
  constructor(
    private readonly document: YamlDocument,
    private readonly map: YAMLMap,
  ) {}

  private pair(key: string): Pair | undefined {
    return this.map.items.find((pair) => keyOf(pair) === key);
  }

  get(key: string): unknown {
    const pair = this.pair(key);
    if (!pair) return undefined;
    return isNode(pair.value) ? (pair.value as Node).toJS(this.document.document) : null;
  }

  has(key: string): boolean {
    return this.pair(key) !== undefined;
  }

  child(key: string): ObjectEdit | undefined {
    const value = this.pair(key)?.value;
    return isMap(value) && value.items.length > 0 ? new YamlObject(this.document, value) : undefined;
  }

  replace(key: string, value: unknown): void {
    const pair = this.pair(key);
    const span = pair && valueSpan(this.document.text, pair);
    if (!span) throw new Error(`has no "${key}" to replace`);
    this.document.edits.push({ ...span, content: `: ${renderYaml(value)}` });
  }

  insert(properties: readonly [string, unknown][]): void {
    if (properties.length === 0) return;
    const { text, eol, edits } = this.document;
    const rendered = properties.map(([key, value]) => `${renderKey(key)}: ${renderYaml(value)}`);
    if (this.map.flow) {
      const last = this.map.items.at(-1);
      const end = last && pairEnd(text, last);
      if (end === undefined) throw new Error("has no place to add a key");
      edits.push({ offset: end, length: 0, content: rendered.map((item) => `, ${item}`).join("") });
      return;
    }
    const first = this.map.items[0];
    const start = first && keyRange(first)?.[0];
    if (start === undefined) throw new Error("has no place to add a key");
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const before = text.slice(lineStart, start);
    // A mapping that starts a sequence item (`- cmd: x`): the new lines go at the key's column.
    const indent = /^[ \t]*$/.test(before) ? before : " ".repeat(before.length);
    edits.push({ offset: start, length: 0, content: rendered.map((item) => `${item}${eol}${indent}`).join("") });
  }
}

/** For restoreOwnedKeys: the value at each path, and how to cut its key out. */
function locate(text: string, paths: readonly JSONPath[]): (OwnedSpan | undefined)[] {
  let document: ParsedDocument;
  try {
    document = parseYamlText(text);
  } catch (error) {
    throw new Error(`the config ${messageOf(error)}: cannot put back the entries wrap owns`);
  }
  return paths.map((path) => {
    const parent: unknown = document.getIn(path.slice(0, -1), true);
    if (!isMap(parent)) return undefined;
    const at = parent.items.findIndex((pair) => keyOf(pair) === path.at(-1));
    const pair = parent.items[at];
    const value = pair && valueSpan(text, pair);
    const start = pair && keyRange(pair)?.[0];
    if (!pair || !value || start === undefined) return undefined;
    return { kind: "value", value, removal: removal(text, parent, at, start, value.offset + value.length) };
  });
}

/** Cut a key/value out: up to the next key, or from the end of the previous value. */
function removal(text: string, map: YAMLMap, at: number, start: number, end: number): Span {
  const previous = map.items[at - 1];
  const nextStart = map.items[at + 1] ? keyRange(map.items[at + 1] as Pair)?.[0] : undefined;
  if (!map.flow && nextStart !== undefined) return { offset: start, length: nextStart - start };
  const previousEnd = previous ? pairEnd(text, previous, !map.flow) : undefined;
  if (previousEnd !== undefined) return { offset: previousEnd, length: end - previousEnd };
  if (nextStart !== undefined) return { offset: start, length: nextStart - start };
  return { offset: start, length: end - start };
}

function keyOf(pair: Pair): unknown {
  return isScalar(pair.key) ? pair.key.value : pair.key;
}

function keyRange(pair: Pair): [number, number, number] | undefined {
  return isNode(pair.key) ? ((pair.key as Node).range ?? undefined) : undefined;
}

/**
 * From the end of the key to the end of the value: `: value` (or `:\n  - a\n  - b`), without the
 * line break a block value ends with and without a comment after a plain value.
 */
function valueSpan(text: string, pair: Pair): Span | undefined {
  const key = keyRange(pair);
  if (!key) return undefined;
  const keyEnd = key[1];
  const value = isNode(pair.value) ? (pair.value as Node).range : undefined;
  const end = value ? trimEnd(text, value[1], keyEnd) : text.indexOf(":", keyEnd) + 1;
  return end > keyEnd ? { offset: keyEnd, length: end - keyEnd } : undefined;
}

/** Where a key/value ends: its value, or with `withComment` the comment after it on the same line. */
function pairEnd(text: string, pair: Pair, withComment = false): number | undefined {
  const value = isNode(pair.value) ? (pair.value as Node).range : undefined;
  const key = keyRange(pair);
  if (!value) return key?.[1];
  return trimEnd(text, withComment ? value[2] : value[1], key?.[1] ?? 0);
}

/** Flow-style YAML that reads the same in YAML 1.1 (goose's parser) and 1.2: JSON scalars, `: ` and `, ` with spaces. */
function renderYaml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(renderYaml).join(", ")}]`;
  if (isPlainObject(value)) return `{${Object.entries(value).map(([key, item]) => `${renderKey(key)}: ${renderYaml(item)}`).join(", ")}}`;
  return JSON.stringify(value);
}

/** Words YAML 1.1 reads as booleans or null: such a key must be quoted to stay a string. */
const YAML_11_WORDS = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);

/** A key as a plain scalar when it is an identifier that reads as a string in YAML 1.1 and 1.2, else JSON-quoted. */
function renderKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !YAML_11_WORDS.has(key.toLowerCase()) ? key : JSON.stringify(key);
}
