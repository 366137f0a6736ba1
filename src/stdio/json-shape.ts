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

/** null when the valid JSON `text` has unique names in every object and nests at most `maxNesting` deep. */
export function checkJsonShape(text: string, maxNesting = MAX_NESTING): ShapeProblem | null {
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
      if (starts.length >= maxNesting) return { code: "NestingTooDeep", detail: `nested more than ${maxNesting} levels deep` };
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

function duplicate(key: string): ShapeProblem {
  return { code: "DuplicateKey", detail: `the name ${JSON.stringify(key)} appears twice in one object` };
}

/** The index of the quote that ends the string whose content starts at `from`. */
function closingQuote(text: string, from: number): number {
  let at = text.indexOf('"', from);
  for (;;) {
    if (at === -1) return text.length; // cannot happen for text JSON.parse accepted
    let backslashes = 0;
    for (let k = at - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) backslashes += 1;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
}
