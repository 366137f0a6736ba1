import {
  QUOTE,
  backslashesBefore,
  boundaryBefore,
  byteClass,
  isSpace,
  lineBreakAt,
  quoteAt,
  quoteLevel,
  runBefore,
  startsWith,
  startsWithFolded,
} from "./secret-bytes.ts";
import { runOf } from "./secret-stretches.ts";
import { keyKindAt } from "./secret-keys.ts";
import type { Span } from "../core/secret-kinds.ts";
import type { Rule, ScanMode } from "./secret-shapes.ts";

/**
 * Rules that find a credential by what surrounds it rather than by its shape: the value of a JSON
 * key named like a credential (secret-keys.ts), an `Authorization` header, a `Bearer` token, the
 * password of `scheme://user:password@host`. JSON pairs are found at every nesting level: in the
 * message itself, in a JSON document inside one of its strings (`\"password\":\"…\"`), and deeper.
 * Assignments in text (`PASSWORD=…`, `password: …`) are in secret-assignments.ts.
 */

/** A string or object value is followed this far at most; past it, what was seen is redacted. */
const MAX_VALUE = 64 * 1024;
const MAX_KEY = 64;
/** A scalar value (a number, `true`) is at most this long. */
const MAX_SCALAR = 1024;
const MAX_HEADER = 4096;

const KEY_CHARS = byteClass("A-Za-z0-9_. -");
const SCALAR = (() => {
  const table = byteClass("!-~");
  for (const c of ",}]\"\\") table[c.charCodeAt(0)] = 0;
  return table;
})();
const HEADER_VALUE = (() => {
  const table = byteClass(" -~");
  for (const c of "\"'\\") table[c.charCodeAt(0)] = 0;
  return table;
})();
const BEARER = byteClass("A-Za-z0-9._~+/=-");
const DIGIT = byteClass("0-9");
const SCHEME = byteClass("A-Za-z0-9+.-");
const USER = (() => {
  const table = byteClass("!-~");
  for (const c of "/:@\"'\\") table[c.charCodeAt(0)] = 0;
  return table;
})();
const PASSWORD = (() => {
  const table = byteClass("!-~");
  for (const c of "/@\"'\\") table[c.charCodeAt(0)] = 0;
  return table;
})();

/** `"key": value` at any nesting level, shown to a person: any value; the anchor is the key's closing quote and colon. */
const jsonPair: Rule = {
  kinds: ["secret_field", "aws_secret_access_key"],
  anchors: ['":'],
  mode: "display",
  match: pairAt,
};

/**
 * The same in a result, where only string values change: anchored on the key's closing quote, the
 * colon and the value's opening quote (compact or with a space, `\"` one level down), so the keys
 * of numbers, booleans and objects, half of a structured result's, cost nothing.
 */
const jsonStringPair: Rule = {
  kinds: ["secret_field", "aws_secret_access_key"],
  anchors: ['":"', '":\\'],
  mode: "result",
  match: pairAt,
};

/** The same with a space after the colon (pretty-printed JSON): found at the `: ` the YAML rule searches anyway. */
const jsonSpacedPair: Rule = {
  kinds: ["secret_field", "aws_secret_access_key"],
  anchors: [": "],
  mode: "result",
  match: (b, at, mode) => (b[at - 1] === QUOTE ? pairAt(b, at - 1, mode) : null),
};

function pairAt(b: Uint8Array, at: number, mode: ScanMode): Span | null {
  const escapes = backslashesBefore(b, at);
  const level = quoteLevel(escapes);
  if (escapes !== 2 ** level - 1) return null;
  const keyEnd = at - escapes;
  const keyLength = runBefore(b, keyEnd, KEY_CHARS, MAX_KEY + 1);
  const open = keyEnd - keyLength - 1;
  if (keyLength === 0 || keyLength > MAX_KEY || b[open] !== QUOTE || backslashesBefore(b, open) !== escapes) return null;
  const kind = keyKindAt(b, keyEnd - keyLength, keyEnd, mode);
  if (!kind) return null;
  let i = at + 2;
  while (isSpace(b[i]) || b[i] === 0x0a || b[i] === 0x0d) i++;
  const quote = quoteAt(level);
  if (startsWith(b, i, quote)) return stringContent(b, i + quote.length, level, kind);
  // A result keeps its shape: only string values change; the keys inside an object are checked on their own.
  if (mode === "result") return null;
  const c = b[i];
  if (c === 0x7b || c === 0x5b) return { kind, start: i, end: bracketEnd(b, i, level), wrap: quote };
  if (startsWith(b, i, "null")) return null;
  const length = runOf(b, i, SCALAR, MAX_SCALAR);
  return length === 0 ? null : { kind, start: i, end: i + length, wrap: quote };
}

/**
 * The content of a string at `level` starting at `start`: up to its closing quote (whose escape
 * stays), up to the closing quote of the string it is inside when it was cut off (and then the
 * replacement closes it), or `MAX_VALUE` bytes on (never between a backslash and what it escapes).
 */
function stringContent(b: Uint8Array, start: number, level: number, kind: Span["kind"]): Span | null {
  const limit = Math.min(b.length, start + MAX_VALUE);
  for (let q = b.indexOf(QUOTE, start); q !== -1 && q < limit; q = b.indexOf(QUOTE, q + 1)) {
    const run = backslashesBefore(b, q);
    const found = quoteLevel(run);
    if (found > level) continue;
    const end = q - (2 ** found - 1);
    if (end === start) return null;
    return found === level ? { kind, start, end } : { kind, start, end, close: quoteAt(level) };
  }
  let end = limit;
  while (end > start && backslashesBefore(b, end) % 2 === 1) end--;
  return end === start ? null : { kind, start, end };
}

/** The end of the object or array at `start` (nesting `level`); bounded like a string. */
function bracketEnd(b: Uint8Array, start: number, level: number): number {
  const limit = Math.min(b.length, start + MAX_VALUE);
  let depth = 0;
  let inString = false;
  for (let i = start; i < limit; i++) {
    const c = b[i];
    if (c === QUOTE) {
      const run = backslashesBefore(b, i);
      const found = quoteLevel(run);
      if (found < level) return i - (2 ** found - 1);
      if (found === level) inString = !inString;
    } else if (!inString && (c === 0x7b || c === 0x5b)) {
      depth++;
    } else if (!inString && (c === 0x7d || c === 0x5d)) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  let end = limit;
  while (end > start && backslashesBefore(b, end) % 2 === 1) end--;
  return end;
}

/**
 * `Authorization: …` / `Proxy-Authorization=…`: the value up to the end of the line or a quote.
 * Found at its `: ` or `=`, which other rules search anyway.
 */
const authorizationHeader: Rule = {
  kinds: ["authorization_header"],
  anchors: [": ", "="],
  match(b, at) {
    if ((b[at - 1] !== 0x6e && b[at - 1] !== 0x4e) || !startsWithFolded(b, at - 13, "authorization") || !boundaryBefore(b, at - 13)) return null;
    let i = at + 1;
    while (isSpace(b[i])) i++;
    let end = i;
    while (end < b.length && end - i < MAX_HEADER && HEADER_VALUE[b[end] as number] === 1 && !lineBreakAt(b, end)) end++;
    while (end > i && isSpace(b[end - 1])) end--;
    return end === i ? null : { kind: "authorization_header", start: i, end };
  },
};

/**
 * `Bearer <token>`. Shown to a person, any word after `Bearer` goes; in a result only what looks
 * like a token (12 characters with a digit, or 24), so "the bearer of this letter" stays.
 */
const bearer: Rule = {
  kinds: ["bearer_token"],
  anchors: ["Bearer", "bearer", "BEARER"],
  match(b, at, mode) {
    if (!boundaryBefore(b, at)) return null;
    let start = at + 6;
    if (!isSpace(b[start])) return null;
    while (isSpace(b[start])) start++;
    const length = runOf(b, start, BEARER, MAX_HEADER);
    if (length === 0) return null;
    if (mode === "result" && length < 24 && (length < 12 || countIn(b, start, length, DIGIT) === 0)) return null;
    return { kind: "bearer_token", start, end: start + length };
  },
};

function countIn(b: Uint8Array, start: number, length: number, cls: Uint8Array): number {
  let n = 0;
  for (let i = start; i < start + length; i++) n += cls[b[i] as number] ?? 0;
  return n;
}

/** `scheme://user:password@host` (also with the slashes JSON-escaped): the password. */
const urlPassword: Rule = {
  kinds: ["url_password"],
  anchors: ["://", ":\\/\\/"],
  match(b, at) {
    const scheme = runBefore(b, at, SCHEME, 33);
    if (scheme === 0 || scheme > 32) return null;
    const first = b[at - scheme] as number;
    if (!((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a))) return null;
    const userStart = at + (b[at + 1] === 0x2f ? 3 : 5);
    const user = runOf(b, userStart, USER, 257);
    if (user > 256 || b[userStart + user] !== 0x3a) return null;
    const start = userStart + user + 1;
    const length = runOf(b, start, PASSWORD, 257);
    if (length === 0 || length > 256 || b[start + length] !== 0x40) return null;
    return { kind: "url_password", start, end: start + length };
  },
};

export const FIELD_RULES: readonly Rule[] = [jsonPair, jsonStringPair, jsonSpacedPair, authorizationHeader, bearer, urlPassword];
