import { QUOTE, backslashesBefore, byteClass, isSpace, lineBreakAt, quoteLevel, runBefore } from "./secret-bytes.ts";
import { firstStop, runOf, type StopRule } from "./secret-stretches.ts";
import { keyKindAt } from "./secret-keys.ts";
import type { SecretKind, Span } from "../core/secret-kinds.ts";
import type { Rule, ScanMode } from "./secret-shapes.ts";

/**
 * Assignments in text whose key names a credential (secret-keys.ts): `PASSWORD=…` (.env files,
 * shells, `?api_key=…` in a URL, `--password=…`, `Password=…;` in a connection string),
 * `password = "…"` (ini, TOML, source code), `password: …` at the start of a line (YAML), and
 * `password: …` as a member of a map written on one line (`{user: u, password: p}` in YAML,
 * `{'password': 'p'}` printed by Python).
 *
 * In a result the agent may be reading source code, where `connect(password=password)` or
 * `api_key = os.environ["KEY"]` hold no secret and must reach it unchanged. So in the `result`
 * mode a quoted value is taken (a literal assigned to a credential), but an unquoted one only
 * when it ends where a value ends (not before `(`, `[`…) and looks like a secret rather than a
 * name: it has a character other than letters, `_` and `.`, or is at least 16 letters long. A
 * value that starts with `$` or `%` is a reference (`${DB_PASSWORD}`), never a secret.
 */

const MAX_KEY = 64;
/** A value is followed this far at most (and the whole of it redacted): a long token is still a secret. */
const MAX_VALUE = 64 * 1024;
const MAX_SPACES = 3;

const KEY = byteClass("A-Za-z0-9_.-");
/** A value shown to a person: up to `&`, `#`, a quote, a backslash (a JSON escape), `,`, `;` or whitespace. */
const DISPLAY_VALUE = except("&#\"'\\,;");
/** A value in a result: as above, and no brackets either (`f(x)`, `a[b]` are code). */
const RESULT_VALUE = except("&#\"'\\,;()[]{}<>");
const CODE_AFTER = byteClass("()[]{}<>");
/** A YAML scalar runs to the end of its line; `&`, `;`, `,` are part of it. */
const YAML_VALUE = except("\"'\\");
/** A member's value in a map on one line ends at the next member or the map's end. */
const FLOW_VALUE = except("\"'\\,{}[]");
const FLOW_NEXT = byteClass(",}");
const NAME_LIKE = byteClass("A-Za-z_.");

function except(chars: string): Uint8Array {
  const table = byteClass("!-~");
  for (const c of chars) table[c.charCodeAt(0)] = 0;
  return table;
}

/** `key=value`, `key = value`; the anchor is the `=`. */
const equals: Rule = {
  kinds: ["secret_field", "aws_secret_access_key"],
  anchors: ["="],
  match(b, at, mode) {
    const next = b[at + 1];
    const previous = b[at - 1];
    // `==`, `!=`, `<=`, `>=`, `=>`: comparisons and arrows, not assignments.
    if (next === 0x3d || next === 0x3e || previous === 0x3d || previous === 0x21 || previous === 0x3c || previous === 0x3e) return null;
    let keyEnd = at;
    while (keyEnd > 0 && at - keyEnd < MAX_SPACES && isSpace(b[keyEnd - 1])) keyEnd--;
    const kind = keyBefore(b, keyEnd, mode);
    return kind ? valueAt(b, at + 1, mode, kind, "parameter") : null;
  },
};

/**
 * `password: value` where a key stands: at the start of a line (after its indentation, or a list's
 * `- `), or after the `{` or `,` of a map on one line; the key may be in single quotes (Python's
 * `{'password': 'p'}`). The anchor is `: `.
 */
const yamlPair: Rule = {
  kinds: ["secret_field", "aws_secret_access_key"],
  anchors: [": "],
  match(b, at, mode) {
    const quoted = b[at - 1] === 0x27;
    const keyEnd = quoted ? at - 1 : at;
    const run = runBefore(b, keyEnd, KEY, MAX_KEY + 1);
    if (run === 0 || run > MAX_KEY) return null;
    const keyStart = afterEscape(b, keyEnd - run, keyEnd);
    if (keyStart === keyEnd || (quoted && b[keyStart - 1] !== 0x27)) return null;
    let i = quoted ? keyStart - 1 : keyStart;
    while (i > 0 && isSpace(b[i - 1])) i--;
    const inMap = b[i - 1] === 0x7b || b[i - 1] === 0x2c;
    if (!inMap) {
      if (b[i - 1] === 0x2d) i--;
      while (i > 0 && isSpace(b[i - 1])) i--;
      const lineStart = i === 0 || b[i - 1] === 0x0a || b[i - 1] === 0x0d || ((b[i - 1] === 0x6e || b[i - 1] === 0x72) && b[i - 2] === 0x5c);
      if (!lineStart) return null;
    }
    const kind = keyKindAt(b, keyStart, keyEnd, mode);
    return kind ? valueAt(b, at + 2, mode, kind, inMap ? "member" : "yaml") : null;
  },
};

/** The kind of the key ending at `end` (its start found by going back over key characters), or null. */
function keyBefore(b: Uint8Array, end: number, mode: ScanMode): SecretKind | null {
  const run = runBefore(b, end, KEY, MAX_KEY + 1);
  if (run === 0 || run > MAX_KEY) return null;
  const start = afterEscape(b, end - run, end);
  return start === end ? null : keyKindAt(b, start, end, mode);
}

/**
 * Where a key found from `start` really starts: after the letters of a JSON escape (`\n`, `\u00e9`)
 * it begins with. A newline one level down is `\\n`, so any backslash before counts.
 */
function afterEscape(b: Uint8Array, start: number, end: number): number {
  if (b[start - 1] !== 0x5c) return start;
  return Math.min(end, start + (b[start] === 0x75 ? 5 : 1));
}

/**
 * The value starting at `start` (after spaces): quoted, or up to where a value ends. A YAML value
 * in a result must be the whole rest of its line: `Password: must be 8 characters` is prose; a
 * member's must end where the member does (`{password: getPassword()}` is code).
 */
function valueAt(b: Uint8Array, start: number, mode: ScanMode, kind: SecretKind, syntax: "parameter" | "yaml" | "member"): Span | null {
  let i = start;
  while (i - start < MAX_SPACES && isSpace(b[i])) i++;
  const escapes = runOf(b, i, BACKSLASH_CLASS, 16);
  const quote = b[i + escapes];
  if (quote === QUOTE || (quote === 0x27 && escapes === 0)) return quotedValue(b, i + escapes, quote, kind);
  const cls = syntax === "yaml" ? YAML_VALUE : mode === "result" ? RESULT_VALUE : syntax === "member" ? FLOW_VALUE : DISPLAY_VALUE;
  const length = runOf(b, i, cls, MAX_VALUE);
  if (length === 0) return null;
  const first = b[i];
  if (first === 0x24 || first === 0x25) return null;
  if (mode === "result") {
    if (!secretLooking(b, i, length)) return null;
    if (syntax === "parameter" ? CODE_AFTER[b[i + length] as number] === 1 : syntax === "yaml" ? !lineEndsAt(b, i + length) : !memberEndsAt(b, i + length)) return null;
  }
  return { kind, start: i, end: i + length };
}

/** Only spaces, then the next member, the map's end, or the end of the line. */
function memberEndsAt(b: Uint8Array, i: number): boolean {
  let j = i;
  while (j - i < MAX_SPACES && isSpace(b[j])) j++;
  return FLOW_NEXT[b[j] as number] === 1 || lineEndsAt(b, j);
}

const BACKSLASH_CLASS = byteClass("\\\\");

/**
 * A quoted value whose opening quote is at `open`: its content, when the closing quote (the same
 * quote, as many backslashes before it) comes on the same line. A quote of the JSON around it
 * (fewer backslashes) means the value is not what it seemed: nothing is taken.
 */
function quotedValue(b: Uint8Array, open: number, quote: number, kind: SecretKind): Span | null {
  const escapes = backslashesBefore(b, open);
  const level = quoteLevel(escapes);
  const start = open + 1;
  const limit = Math.min(b.length, start + MAX_VALUE);
  const j = firstStop(b, start, limit, quoteStop(quote, level));
  if (j >= limit || lineBreakAt(b, j) || (b[j] !== QUOTE && b[j] !== quote)) return null;
  if (b[j] === QUOTE && quote === QUOTE) {
    // A quote of the JSON around the value (fewer backslashes) ends the string it was in.
    if (quoteLevel(backslashesBefore(b, j)) !== level) return null;
    return j - escapes === start || b[start] === 0x24 ? null : { kind, start, end: j - escapes };
  }
  if (b[j] === QUOTE) return null;
  return j === start || b[start] === 0x24 ? null : { kind, start, end: j };
}

const quoteStops = new Map<number, StopRule>();

/**
 * Where a value in `quote` at nesting `level` ends: a line break (no closing quote on the line), its
 * closing quote, or a quote of the JSON around it. One rule per quote and level, so each kind of
 * look is remembered on its own (secret-stretches.ts).
 */
function quoteStop(quote: number, level: number): StopRule {
  const key = quote * 64 + level;
  let rule = quoteStops.get(key);
  if (!rule) {
    rule =
      quote === QUOTE
        ? { stops: (b, j) => lineBreakAt(b, j) || (b[j] === QUOTE && quoteLevel(backslashesBefore(b, j)) <= level) }
        : { stops: (b, j) => lineBreakAt(b, j) || b[j] === QUOTE || (b[j] === quote && backslashesBefore(b, j) === 0) };
    quoteStops.set(key, rule);
  }
  return rule;
}

/** Only spaces, then a comment, the end of the line, or the end of the JSON string the text is in. */
function lineEndsAt(b: Uint8Array, i: number): boolean {
  while (isSpace(b[i])) i++;
  return i >= b.length || b[i] === 0x23 || b[i] === QUOTE || lineBreakAt(b, i) || (b[i] === 0x5c && b[i + 1] === QUOTE);
}

/** Not a name: some character other than letters, `_` and `.`, or 16 letters at least (and no dot). */
function secretLooking(b: Uint8Array, start: number, length: number): boolean {
  let dotted = false;
  for (let i = start; i < start + length; i++) {
    const c = b[i] as number;
    if (NAME_LIKE[c] !== 1) return true;
    if (c === 0x2e) dotted = true;
  }
  return length >= 16 && !dotted;
}

export const ASSIGNMENT_RULES: readonly Rule[] = [equals, yamlPair];
