import type { Severity } from "../../core/severity.ts";

/**
 * Characters that make a definition say something other than what a person reads: Unicode tag
 * characters (invisible ASCII look-alikes a model still reads: "ASCII smuggling"), bidi controls
 * that reorder what follows (CVE-2021-42574, "Trojan Source"), zero-width characters that split or
 * hide words, terminal escapes that rewrite what a terminal shows, other control characters, and
 * names whose letters come from another script (a Cyrillic "а" in "reаd_file").
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

/**
 * Letters of scripts whose shapes copy Latin ones (Cyrillic, Greek, Armenian, Cherokee), fullwidth
 * forms and mathematical alphanumerics. In a tool name they have no business but to pass for Latin.
 */
const LOOKALIKE_SCRIPTS = /[\u0370-\u03ff\u0400-\u052f\u0530-\u058f\u13a0-\u13ff\uab70-\uabbf\uff00-\uffef\u{1d400}-\u{1d7ff}]/u;
/** MCP 2025-11-25 tool names: ASCII letters, digits, `_`, `-`, `.` (and `/`, which namespaced servers use). */
const STANDARD_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

export function lookalikeNameCharacter(name: string): { index: number; char: string } | null {
  const match = LOOKALIKE_SCRIPTS.exec(name);
  return match ? { index: match.index, char: match[0] } : null;
}

export function isStandardName(name: string): boolean {
  return STANDARD_NAME.test(name);
}

/** Letters that pass for Latin ones, mapped to what they pass for. */
const CONFUSABLES: Readonly<Record<string, string>> = {
  а: "a", в: "b", е: "e", ё: "e", к: "k", м: "m", н: "h", о: "o", р: "p", с: "c", т: "t", у: "y", х: "x", і: "i", ї: "i", ј: "j", ѕ: "s", ԁ: "d", ԛ: "q", ԝ: "w", ɡ: "g",
  α: "a", β: "b", ε: "e", η: "n", ι: "i", κ: "k", ν: "v", ο: "o", ρ: "p", τ: "t", υ: "u", χ: "x", ω: "w",
  "1": "l", "0": "o", "|": "l",
};

/**
 * What a name looks like, for telling look-alikes apart: compatibility-normalised (fullwidth and
 * mathematical letters become ASCII), lower case, confusable letters mapped, separators dropped.
 * `read_file`, `Read-File`, `readFile` and `reаd_file` (Cyrillic а) share one skeleton.
 */
export function nameSkeleton(name: string): string {
  let out = "";
  for (const char of name.normalize("NFKC").toLowerCase()) {
    if (char === "_" || char === "-" || char === "." || char === " " || char === "/") continue;
    out += CONFUSABLES[char] ?? char;
  }
  return out;
}
