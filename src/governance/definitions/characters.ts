import type { Severity } from "../../core/severity.ts";
import { CONFUSABLES_TABLE } from "./confusables-data.ts";

/**
 * Characters that make a definition say something other than what a person reads: Unicode tag
 * characters (invisible ASCII look-alikes a model still reads: "ASCII smuggling"), bidi controls
 * that reorder what follows (CVE-2021-42574, "Trojan Source"), zero-width characters that split or
 * hide words, terminal escapes that rewrite what a terminal shows, other control characters, and
 * names with characters that pass for others (Unicode's confusables, UTS #39: a Cyrillic "а" in
 * "reаd_file", a dotless "ı" in "create_ıssue").
 */
export type CharacterRule = { rule: string; severity: Severity; pattern: RegExp; message: string; allowed?: (text: string, index: number) => boolean };

export const CHARACTER_RULES: readonly CharacterRule[] = [
  {
    rule: "tag-characters",
    severity: "high",
    pattern: /[\u{e0000}-\u{e007f}]+/gu,
    message: "Unicode tag characters: invisible to a person, read by the model",
    // An emoji flag of a subdivision (🏴 + tags + cancel tag) is the one legitimate use.
    allowed: (text, index) => text.codePointAt(Math.max(0, index - 2)) === 0x1f3f4,
  },
  { rule: "bidi-control", severity: "high", pattern: /[\u202a-\u202e\u2066-\u2069]+/gu, message: "bidi controls reorder the text that follows them" },
  { rule: "ansi-escape", severity: "high", pattern: /[\u001b\u009b][[\]()#;?\d]*[\x20-\x7e]?/gu, message: "terminal escape sequences can hide or rewrite what a terminal shows" },
  {
    rule: "zero-width",
    severity: "medium",
    pattern: /[\u200b-\u200d\u2060\ufeff\u180e]+/gu,
    message: "zero-width characters split or hide words",
    // A joiner between emoji or letters of a script that needs it (Arabic, Indic) is ordinary text;
    // inside ASCII words it only hides.
    allowed: (text, index) => !(isAscii(text.charCodeAt(index - 1)) && isAscii(text.charCodeAt(index + 1))) && /[\u200c\u200d]/u.test(text[index] ?? ""),
  },
  { rule: "bidi-mark", severity: "medium", pattern: /[\u200e\u200f\u061c]+/gu, message: "invisible direction marks" },
  { rule: "control-characters", severity: "medium", pattern: /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f-\u009a\u009c-\u009f]+/gu, message: "control characters" },
];

function isAscii(code: number): boolean {
  return code >= 0x21 && code <= 0x7e;
}

/** MCP 2025-11-25 tool names: ASCII letters, digits, `_`, `-`, `.` (and `/`, which namespaced servers use). */
const STANDARD_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

/**
 * A character of the name that is not ASCII but passes for it: its UTS #39 prototype is ASCII (a
 * Cyrillic "а" in "reаd_file", a dotless "ı", fullwidth and mathematical letters). In a tool name it
 * has no business but to pass for what it is not.
 */
export function lookalikeNameCharacter(name: string): { index: number; char: string } | null {
  let index = 0;
  for (const char of name) {
    if (char.charCodeAt(0) > 0x7f) {
      const prototype = prototypeOf(char.normalize("NFKC"));
      if (prototype !== char && /^[\x21-\x7e]+$/.test(prototype)) return { index, char };
    }
    index += char.length;
  }
  return null;
}

export function isStandardName(name: string): boolean {
  return STANDARD_NAME.test(name);
}

/** Each entry's source code point, ascending, and where the entry starts in `CONFUSABLES_TABLE`. */
type ConfusablesIndex = { sources: Uint32Array; starts: Uint32Array };

let index: ConfusablesIndex | null = null;

/**
 * The index of confusables.txt (confusables-data.ts), built on first use: the pin checks need it, a
 * shim that only forwards never does. Two typed arrays over the table's own text (~50 KB) rather
 * than a map of 6,500 strings (~0.7 MB of every shim's heap that had read a tool list): a
 * prototype is read from the table when a character has one.
 */
function confusables(): ConfusablesIndex {
  if (index) return index;
  const found: Array<{ source: number; start: number }> = [];
  for (let start = 0; start < CONFUSABLES_TABLE.length; ) {
    const end = CONFUSABLES_TABLE.indexOf("|", start);
    if (end === -1) break;
    const space = CONFUSABLES_TABLE.indexOf(" ", start);
    found.push({ source: Number.parseInt(CONFUSABLES_TABLE.slice(start, space), 16), start });
    start = end + 1;
  }
  found.sort((a, b) => a.source - b.source);
  index = { sources: Uint32Array.from(found, (entry) => entry.source), starts: Uint32Array.from(found, (entry) => entry.start) };
  return index;
}

/** The prototype of one code point (UTS #39), or null when confusables.txt gives it none. */
function prototypeOfCodePoint(codePoint: number): string | null {
  const { sources, starts } = confusables();
  let low = 0;
  let high = sources.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const source = sources[middle] as number;
    if (source < codePoint) low = middle + 1;
    else if (source > codePoint) high = middle - 1;
    else {
      const start = starts[middle] as number;
      const entry = CONFUSABLES_TABLE.slice(start, CONFUSABLES_TABLE.indexOf("|", start));
      return String.fromCodePoint(...entry.split(" ").slice(1).map((hex) => Number.parseInt(hex, 16)));
    }
  }
  return null;
}

/** Each character of `text` replaced by its prototype (UTS #39, section 4), then decomposed again. */
function prototypeOf(text: string): string {
  let out = "";
  for (const char of text.normalize("NFD")) out += prototypeOfCodePoint(char.codePointAt(0) as number) ?? char;
  return out.normalize("NFD");
}

/**
 * What a name looks like, for telling look-alikes apart: its UTS #39 skeleton (from Unicode's
 * confusables.txt, confusables-data.ts) after compatibility normalisation (fullwidth letters are
 * ASCII ones), also taken without case, and without separators.
 * `read_file`, `Read-File`, `readFile`, `reаd_file` (Cyrillic а) and `read_fıle` (dotless ı) share
 * one skeleton. Case is folded between two mappings, because lower-case letters have prototypes of
 * their own (`m` is `rn`).
 */
export function nameSkeleton(name: string): string {
  let out = "";
  for (const char of prototypeOf(prototypeOf(name.normalize("NFKC")).toLowerCase())) {
    if (char === "_" || char === "-" || char === "." || char === " " || char === "/") continue;
    out += char;
  }
  return out;
}
