import { parseDocument } from "yaml";

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

export type YamlResult = { ok: true; value: unknown } | { ok: false; message: string };

export function parseYaml(text: string): YamlResult {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, {
      schema: "core",
      version: "1.2",
      merge: true,
      uniqueKeys: true,
      prettyErrors: false,
      // Warnings become problems below and the library prints nothing. Not "silent": that also
      // drops the error for a second document, which would then be ignored.
      logLevel: "error",
    });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) return { ok: false, message: `${at(text, problem.pos[0])}${problem.message}` };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = (error as Error).message;
    if (/resource exhaustion/.test(message)) {
      return { ok: false, message: `aliases (*name) are followed more than ${MAX_ALIAS_COUNT} times; write the values out instead` };
    }
    return { ok: false, message };
  }
  const tooBig = measure(value);
  return tooBig ? { ok: false, message: tooBig } : { ok: true, value };
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

/** "line 3, column 5: " for an offset into the text. The text itself is never quoted back. */
function at(text: string, offset: number): string {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i += 1) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      start = i + 1;
    }
  }
  return `line ${line}, column ${offset - start + 1}: `;
}
