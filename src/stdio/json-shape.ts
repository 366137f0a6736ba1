/**
 * What `JSON.parse` accepts but the shim must not: a name that appears twice in one object, and
 * nesting deeper than anything real.
 *
 * Duplicate keys: `JSON.parse` keeps the last `"name"` of `{"name":"delete_file","name":"echo"}`
 * while the shim forwards the original bytes, and the server's parser may keep the first. The gates
 * would decide on one call and the server run another. Rather than forward a re-serialisation (the
 * original bytes are what is forwarded, docs/architecture.md decision 2), a message with a duplicate
 * name at any depth, in either direction, is rejected as a framing error. Names are compared after
 * their escapes are decoded: `"n\u0061me"` is `"name"`.
 *
 * Nesting: every later step that walks a message (hashing arguments, Cedar's conversion, redaction)
 * must be able to finish, so messages nested deeper than `MAX_NESTING` are rejected too.
 *
 * The scan runs over text `JSON.parse` has already accepted, so it only tracks what it needs:
 * which strings are object keys, and how deep it is. String contents, where the bytes of a large
 * message are, are skipped with `indexOf`.
 */
import { closingQuote, lastStringEscaped } from "../core/json-string-end.ts";

export const MAX_NESTING = 128;

export type ShapeProblem = { code: "DuplicateKey" | "NestingTooDeep"; detail: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/** Objects with more names than this are checked with a set; smaller ones by comparing in place. */
const LINEAR_NAMES = 16;

/**
 * Scratch space reused by every call (the scan runs once per line, on the hot path, and never
 * re-enters): where each name of every open object starts and ends in the text, and for each open
 * container where its names start (-1 for an array). Nothing is allocated per line unless an object
 * is large or a name has an escape.
 */
let nameStarts = new Int32Array(256);
let nameEnds = new Int32Array(256);
const frames = new Int32Array(MAX_NESTING + 1);
const largeFrames: Array<Set<string> | null> = [];

/** null when the valid JSON `text` has unique names in every object and nests at most `maxNesting` deep. */
export function checkJsonShape(text: string, maxNesting = MAX_NESTING): ShapeProblem | null {
  if (maxNesting > MAX_NESTING) return checkWithSlices(text, maxNesting);
  let depth = 0;
  let names = 0;
  let expectKey = false;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i + 1);
      if (expectKey) {
        // A name with an escape must be decoded before it is compared: the rare text with one
        // takes the decoding scan below.
        if (lastStringEscaped() ?? hasBackslash(text, i + 1, end)) return checkWithSlices(text, maxNesting);
        const from = frames[depth - 1] as number;
        const set = largeFrames[depth - 1];
        if (set) {
          const key = text.slice(i + 1, end);
          if (set.has(key)) return duplicate(key);
          set.add(key);
        } else {
          if (sameNameBefore(text, from, names, i + 1, end)) return duplicate(text.slice(i + 1, end));
          if (names === nameStarts.length) growNames();
          nameStarts[names] = i + 1;
          nameEnds[names] = end;
          names += 1;
          if (names - from > LINEAR_NAMES) largeFrames[depth - 1] = namesOf(text, from, names);
        }
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth >= maxNesting) return tooDeep(maxNesting);
      frames[depth] = c === OPEN_OBJECT ? names : -1;
      largeFrames[depth] = null;
      depth += 1;
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth -= 1;
      const from = frames[depth] as number;
      if (from >= 0) names = from;
      largeFrames[depth] = null;
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = depth > 0 && (frames[depth - 1] as number) >= 0;
    }
    i += 1;
  }
  return null;
}

/** Whether one of the names `from..count` (offsets into `text`) has the same characters as `text[start, end)`. */
function sameNameBefore(text: string, from: number, count: number, start: number, end: number): boolean {
  const length = end - start;
  for (let k = from; k < count; k++) {
    const other = nameStarts[k] as number;
    if ((nameEnds[k] as number) - other !== length) continue;
    let j = 0;
    while (j < length && text.charCodeAt(other + j) === text.charCodeAt(start + j)) j += 1;
    if (j === length) return true;
  }
  return false;
}

function namesOf(text: string, from: number, count: number): Set<string> {
  const set = new Set<string>();
  for (let k = from; k < count; k++) set.add(text.slice(nameStarts[k], nameEnds[k]));
  return set;
}

function growNames(): void {
  const starts = new Int32Array(nameStarts.length * 2);
  starts.set(nameStarts);
  nameStarts = starts;
  const ends = new Int32Array(nameEnds.length * 2);
  ends.set(nameEnds);
  nameEnds = ends;
}

/**
 * The same scan with every name decoded into a string: for names with escapes (`"n\\u0061me"` is
 * `"name"`) and for a nesting limit deeper than the scratch space.
 */
function checkWithSlices(text: string, maxNesting: number): ShapeProblem | null {
  // The names of every open object, one after another; each open container records where its
  // names start (-1 for an array), so nothing is allocated per object unless it is large.
  const names: string[] = [];
  const starts: number[] = [];
  const large: Array<Set<string> | null> = [];
  let expectKey = false;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i + 1);
      if (expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const depth = starts.length - 1;
        const from = starts[depth] as number;
        const set = large[depth];
        if (set) {
          if (set.has(key)) return duplicate(key);
          set.add(key);
        } else {
          for (let k = from; k < names.length; k++) if (names[k] === key) return duplicate(key);
          names.push(key);
          if (names.length - from > LINEAR_NAMES) large[depth] = new Set(names.slice(from));
        }
        expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (starts.length >= maxNesting) return tooDeep(maxNesting);
      starts.push(c === OPEN_OBJECT ? names.length : -1);
      large.push(null);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      const from = starts.pop() as number;
      large.pop();
      if (from >= 0) names.length = from;
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = starts.length > 0 && (starts[starts.length - 1] as number) >= 0;
    }
    i += 1;
  }
  return null;
}

function tooDeep(maxNesting: number): ShapeProblem {
  return { code: "NestingTooDeep", detail: `nested more than ${maxNesting} levels deep` };
}

function duplicate(key: string): ShapeProblem {
  return { code: "DuplicateKey", detail: `the name ${JSON.stringify(key)} appears twice in one object` };
}

function hasBackslash(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (text.charCodeAt(k) === BACKSLASH) return true;
  return false;
}
