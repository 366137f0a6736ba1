import { parseTree, printParseErrorCode, visit, type JSONPath, type Node } from "jsonc-parser";
import { readRegularFile } from "../../core/safe-open.ts";

/**
 * Reading agent configs as JSONC without building a tree of the whole file.
 *
 * A Claude Code `~/.claude.json` grows past a megabyte (every project's history lives in it) and
 * jsonc-parser's `parseTree` takes 10–30 ms on that, more than the whole rewrite may take (≤ 20 ms,
 * docs/benchmarks.md, Wrap). So a file is validated with the engine's `JSON.parse` (~1 ms) and only falls back to
 * jsonc-parser when it has comments or trailing commas (Zed, VS Code; small files); then
 * `locateValues` walks just the keys on the wanted paths and jumps over every other value.
 * The small subtrees it finds are parsed with jsonc-parser as usual.
 */

const JSONC_OPTIONS = { allowTrailingComma: true, disallowComments: false } as const;

/** Offset and length of a value in the file's text. */
export type Span = { offset: number; length: number };

export type ReadResult = { exists: boolean; text: string; problem?: string };

/**
 * The file's exact text. Undecodable bytes are a problem, not replacement characters: the text is
 * what gets written back. A config may be a symlink (a user's dotfiles; config-path.ts says when a
 * project's may not), but it must end at a regular file of at most 16 MiB: a FIFO, a device such
 * as /dev/zero, a socket or a directory is a problem of the file, found without blocking on it or
 * reading it (safe-open.ts).
 */
export function readConfigText(path: string): ReadResult {
  const read = readRegularFile(path, { follow: true });
  if (!read.ok) return read.missing ? { exists: false, text: "" } : { exists: true, text: "", problem: read.problem };
  try {
    // ignoreBOM keeps a byte-order mark in the text, so text and bytes stay the same file.
    return { exists: true, text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes) };
  } catch {
    return { exists: true, text: "", problem: "is not valid UTF-8" };
  }
}

/**
 * The last text found valid. Discovery checks a file and `rewrite` gets the same string straight
 * after; comparing with `===` is a pointer check for that string, so the second check is free.
 */
let lastValid: string | undefined;

/** Why `text` is not a JSONC object, or undefined when it is one. */
export function jsoncProblem(text: string): string | undefined {
  if (text === lastValid) return undefined;
  const problem = findProblem(text);
  if (problem === undefined) lastValid = text;
  return problem;
}

function findProblem(text: string): string | undefined {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  try {
    const value: unknown = JSON.parse(start ? text.slice(start) : text);
    return isPlainObject(value) ? undefined : "does not hold a JSON object at the top level";
  } catch {
    // Not strict JSON: comments or trailing commas are fine, anything else is a problem.
  }
  if (text.slice(start).trim() === "") return "is empty";
  let problem: string | undefined;
  visit(
    text.slice(start),
    {
      onError: (error, offset) => {
        problem ??= `does not parse (${position(text, offset + start)}: ${printParseErrorCode(error)})`;
      },
    },
    JSONC_OPTIONS,
  );
  if (problem) return problem;
  const first = text.slice(start).replace(/^(\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/, "")[0];
  return first === "{" ? undefined : "does not hold a JSON object at the top level";
}

function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Where the values at `paths` (object keys only) are in `text`, which must already be valid
 * JSONC (`jsoncProblem` said so). One pass: a key on one of the paths is descended into, any
 * other value is skipped by bracket matching. A key on a path that appears twice in its object is
 * reported in `duplicates`: `JSON.parse` (the agent) would take the last one while jsonc-parser
 * (`restoreOwnedKeys`) finds the first, so such a file must not be edited.
 */
export function locateValues(text: string, paths: readonly JSONPath[]): { spans: (Span | undefined)[]; duplicates: string[] } {
  const root: Trie = { children: new Map(), ends: [] };
  paths.forEach((path, index) => {
    let node = root;
    for (const segment of path) {
      const key = String(segment);
      let child = node.children.get(key);
      if (!child) node.children.set(key, (child = { children: new Map(), ends: [] }));
      node = child;
    }
    node.ends.push(index);
  });
  const scanner = new Scanner(text);
  const spans: (Span | undefined)[] = paths.map(() => undefined);
  const duplicates: string[] = [];
  const walk = (trie: Trie, at: string[]): void => {
    const seen = new Set<string>();
    scanner.objectEntries((key) => {
      const child = trie.children.get(key);
      if (!child) return scanner.skipValue();
      if (seen.has(key)) duplicates.push([...at, key].join("."));
      seen.add(key);
      const offset = scanner.pos;
      if (child.children.size > 0 && scanner.peek() === OPEN_BRACE) walk(child, [...at, key]);
      else scanner.skipValue();
      for (const index of child.ends) spans[index] = { offset, length: scanner.pos - offset };
    });
  };
  scanner.skipTrivia();
  walk(root, []);
  return { spans, duplicates };
}

type Trie = { children: Map<string, Trie>; ends: number[] };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const STAR = 0x2a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** A cursor over valid JSONC that reads keys and skips values; strings are crossed with indexOf, not char by char. */
class Scanner {
  pos = 0;
  constructor(private readonly text: string) {
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  /** Calls `onKey` with the cursor on each property's value; `onKey` must move the cursor past it. */
  objectEntries(onKey: (key: string) => void): void {
    this.expect(OPEN_BRACE);
    for (;;) {
      this.skipTrivia();
      if (this.peek() === CLOSE_BRACE) break;
      const start = this.pos;
      this.skipString();
      const raw = this.text.slice(start, this.pos);
      const key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      this.skipTrivia();
      this.expect(COLON);
      this.skipTrivia();
      onKey(key);
      this.skipTrivia();
      if (this.peek() !== COMMA) break;
      this.pos++;
    }
    this.skipTrivia();
    this.expect(CLOSE_BRACE);
  }

  skipValue(): void {
    const c = this.peek();
    if (c === QUOTE) return this.skipString();
    if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
      // A number, true, false or null: runs to the next delimiter.
      while (this.pos < this.text.length && !/[\s,\]}/]/.test(this.text[this.pos] ?? "")) this.pos++;
      return;
    }
    // The hot loop of a megabyte file: locals only, strings crossed with indexOf.
    const text = this.text;
    const end = text.length;
    let depth = 0;
    let i = this.pos;
    while (i < end) {
      const ch = text.charCodeAt(i);
      if (ch === QUOTE) {
        let close = text.indexOf('"', i + 1);
        // Checked inline first: a call per string is what a cold (not yet JIT-compiled) loop pays for.
        while (close > 0 && text.charCodeAt(close - 1) === BACKSLASH && isEscaped(text, close)) close = text.indexOf('"', close + 1);
        if (close < 0) break;
        i = close + 1;
      } else if (ch === SLASH) {
        this.pos = i;
        this.skipComment();
        i = this.pos;
      } else {
        if (ch === OPEN_BRACE || ch === OPEN_BRACKET) depth++;
        else if ((ch === CLOSE_BRACE || ch === CLOSE_BRACKET) && --depth === 0) {
          this.pos = i + 1;
          return;
        }
        i++;
      }
    }
    throw new Error("unbalanced brackets");
  }

  skipTrivia(): void {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else if (c === SLASH) this.skipComment();
      else return;
    }
  }

  private skipString(): void {
    this.expect(QUOTE);
    let close = this.text.indexOf('"', this.pos);
    while (close > 0 && isEscaped(this.text, close)) close = this.text.indexOf('"', close + 1);
    if (close < 0) throw new Error("unterminated string");
    this.pos = close + 1;
  }

  private skipComment(): void {
    const next = this.text.charCodeAt(this.pos + 1);
    if (next === SLASH) {
      // jsonc-parser ends a line comment at \n or \r.
      let end = this.pos + 2;
      while (end < this.text.length && this.text.charCodeAt(end) !== 0x0a && this.text.charCodeAt(end) !== 0x0d) end++;
      this.pos = end;
    } else if (next === STAR) {
      const end = this.text.indexOf("*/", this.pos + 2);
      if (end < 0) throw new Error("unterminated comment");
      this.pos = end + 2;
    } else {
      throw new Error(`unexpected "/" at offset ${this.pos}`);
    }
  }

  private expect(char: number): void {
    if (this.peek() !== char) throw new Error(`expected "${String.fromCharCode(char)}" at offset ${this.pos}`);
    this.pos++;
  }
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** A located value parsed on its own: jsonc-parser nodes with offsets relative to `base`. */
export type Subtree = { base: number; node: Node };

export function parseSpan(text: string, span: Span): Subtree | undefined {
  const node = parseTree(text.slice(span.offset, span.offset + span.length), [], JSONC_OPTIONS);
  return node ? { base: span.offset, node } : undefined;
}

/** An object node's properties by key; `duplicate` names the first key that appears twice. */
export function propertiesOf(node: Node): { props: Map<string, Node>; duplicate?: string } {
  const props = new Map<string, Node>();
  let duplicate: string | undefined;
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key?.type !== "string" || !value) continue;
    const name = String(key.value);
    if (props.has(name)) duplicate ??= name;
    props.set(name, value);
  }
  return duplicate === undefined ? { props } : { props, duplicate };
}

/** Non-overlapping edits applied in one pass (jsonc-parser's `applyEdits` copies the text once per edit). */
export function spliceAll(text: string, edits: readonly (Span & { content: string })[]): string {
  const sorted = [...edits].sort((a, b) => a.offset - b.offset);
  const parts: string[] = [];
  let at = 0;
  for (const edit of sorted) {
    if (edit.offset < at) throw new Error(`overlapping edits at offset ${edit.offset}`);
    parts.push(text.slice(at, edit.offset), edit.content);
    at = edit.offset + edit.length;
  }
  parts.push(text.slice(at));
  return parts.join("");
}
