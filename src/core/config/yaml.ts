import { isMap, isPair, isScalar, isSeq, parseDocument, type Node } from "yaml";

/**
 * YAML text → plain data (mappings, sequences, strings, numbers, booleans, null), bounded.
 *
 * `Bun.YAML.parse` follows aliases as it builds the result and cannot be limited from outside: a
 * 1 KiB file of nested aliases ("billion laughs") becomes hundreds of MB and seconds of CPU before
 * any check runs, and the loader then copies the expanded tree again. The `yaml` package builds a
 * document of the text first (linear in its size), and its `toJS` shares an aliased value instead
 * of copying it, refusing once aliases have been followed more than `maxAliasCount` times. What
 * the loader walks afterwards is the tree with every alias followed, so `measure` walks it once
 * more, stopping at `MAX_VALUES` values or `MAX_CHARACTERS` characters, before anything copies it.
 *
 * Semantics are those `Bun.YAML.parse` gave our files: YAML 1.2, core schema (`yes` is a string,
 * `0o17` octal, `1e3` a number), even under a `%YAML 1.1` directive, and `<<` merge keys. Stricter
 * where Bun was silent: a duplicate key is an error rather than the last one winning, and so are
 * unknown tags, several documents in one file, and typed values (`!!set`, `!!binary`, timestamps)
 * that no field of a policy holds.
 */

/** How often aliases may be followed, weighted by the aliases inside what they point at (`yaml`'s count). */
const MAX_ALIAS_COUNT = 100;
/** Values (mappings, sequences, scalars) in the tree once every alias is followed. */
export const MAX_VALUES = 200_000;
/** Characters of every string (and key) in that tree together. */
const MAX_CHARACTERS = 2 * 1024 * 1024;
/** Mappings and sequences inside each other (a policy needs about six). */
const MAX_DEPTH = 64;

/** A place in the text, both counted from 1. */
export type TextPosition = { line: number; column: number };

/** Each syntax problem of the text, with its place (`message` repeats the first, placed in words). */
type YamlProblem = { message: string } & Partial<TextPosition>;

export type YamlResult = { ok: true; value: unknown } | { ok: false; message: string; problems: YamlProblem[] };

function failed(message: string): YamlResult {
  return { ok: false, message, problems: [{ message }] };
}

const YAML_OPTIONS = {
  schema: "core",
  version: "1.2",
  merge: true,
  uniqueKeys: true,
  prettyErrors: false,
  // Warnings become problems below and the library prints nothing. Not "silent": that also
  // drops the error for a second document, which would then be ignored.
  logLevel: "error",
} as const;

export function parseYaml(text: string): YamlResult {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, YAML_OPTIONS);
  } catch (error) {
    return failed((error as Error).message);
  }
  // Every problem at once, each at its place: one run of validate-config shows them all.
  const syntax = [...doc.errors, ...doc.warnings];
  const first = syntax[0];
  if (first) {
    const problems = syntax.map((problem) => ({ message: problem.message, ...positionAt(text, problem.pos[0]) }));
    const place = positionAt(text, first.pos[0]);
    return { ok: false, message: `line ${place.line}, column ${place.column}: ${first.message}`, problems };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = (error as Error).message;
    if (/resource exhaustion/.test(message)) {
      return failed(`aliases (*name) are followed more than ${MAX_ALIAS_COUNT} times; write the values out instead`);
    }
    return failed(message);
  }
  const tooBig = measure(value);
  return tooBig ? failed(tooBig) : { ok: true, value };
}

/** Why the tree (every alias followed) is not plain policy data or is too big; null when it is fine. */
function measure(root: unknown): string | null {
  let values = 0;
  let characters = 0;
  const open = new Set<object>();
  const visit = (value: unknown, depth: number): string | null => {
    values += 1;
    if (values > MAX_VALUES) return `more than ${MAX_VALUES} values once aliases are followed`;
    if (typeof value === "string") {
      characters += value.length;
      return characters > MAX_CHARACTERS ? `more than ${MAX_CHARACTERS} characters once aliases are followed` : null;
    }
    if (value === null || typeof value === "number" || typeof value === "boolean") return null;
    if (typeof value !== "object" || !(Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype)) {
      return `a value of a type no setting holds (${describe(value)}); use a mapping, list, string, number, true/false or null`;
    }
    if (open.has(value)) return "an alias refers to a value that contains it";
    if (depth >= MAX_DEPTH) return `mappings and lists nested more than ${MAX_DEPTH} deep`;
    open.add(value);
    const entries = Array.isArray(value) ? value : Object.entries(value).flat();
    for (const item of entries) {
      const problem = visit(item, depth + 1);
      if (problem) return problem;
    }
    open.delete(value);
    return null;
  };
  return visit(root, 0);
}

function describe(value: unknown): string {
  if (value instanceof Set) return "a !!set";
  if (value instanceof Map) return "an ordered map (!!omap or !!pairs)";
  if (value instanceof Date) return "a timestamp (quote it to keep it as text)";
  if (value instanceof Uint8Array) return "!!binary data";
  return typeof value;
}

/** Line and column of an offset into the text. The text itself is never quoted back. */
function positionAt(text: string, offset: number): TextPosition {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i += 1) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * Where a field of a (parsed) policy text is: the key of the deepest part of `path` the text has
 * (a missing one: the mapping that lacks it), or at `at: "value"` the value when the whole path
 * is there and holds a scalar. Null when the text does not parse or the path leaves the document at
 * once. Called only for a file with problems, so parsing again costs nothing when all is well.
 */
export function locateInYaml(text: string, path: readonly (string | number)[], at: "key" | "value" = "value"): TextPosition | null {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, YAML_OPTIONS);
  } catch {
    return null;
  }
  let node: unknown = doc.contents;
  let offset: number | null = rangeStart(node);
  let found = 0;
  for (const segment of path) {
    const next = childOf(node, segment);
    if (!next) break;
    found += 1;
    offset = next.keyOffset ?? rangeStart(next.value) ?? offset;
    node = next.value;
  }
  if (at === "value" && found === path.length && !isMap(node) && !isSeq(node)) {
    // A wrong value (`action: allow`) is shown at the value, an unknown key (`mach:`) at its key.
    offset = rangeStart(node) ?? offset;
  }
  return offset === null ? null : positionAt(text, offset);
}

function childOf(node: unknown, segment: string | number): { value: unknown; keyOffset: number | null } | null {
  if (isSeq(node) && typeof segment === "number") {
    const item = node.items[segment];
    return item === undefined ? null : { value: item, keyOffset: null };
  }
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      if (String(key) === String(segment)) return { value: pair.value, keyOffset: rangeStart(pair.key) };
    }
  }
  return null;
}

function rangeStart(node: unknown): number | null {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : null;
}
