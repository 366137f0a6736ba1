/**
 * Byte-level helpers of the secret scanner (secret-scan.ts). The scanner reads text as UTF-8 bytes,
 * usually a whole JSON-RPC line as it came off the pipe, so what it sees inside strings is still
 * JSON-escaped: a newline is the two bytes `\n`, a quote inside a string is `\"`, and a JSON
 * document inside a string has its quotes escaped once more (`\\\"` two levels down). Every helper
 * here is bounded: it looks at most a fixed number of bytes away from where it starts (the looks
 * that go far, `runOf` and the like, are in secret-stretches.ts, which never repeats one).
 */

/** A byte class: `table[byte]` is 1 for members. */
export type ByteClass = Uint8Array;

/** A class from ranges like "A-Za-z0-9_-" (a `-` first or last is itself). */
export function byteClass(ranges: string): ByteClass {
  const table = new Uint8Array(256);
  for (let i = 0; i < ranges.length; i++) {
    const from = ranges.charCodeAt(i);
    if (ranges[i + 1] === "-" && i + 2 < ranges.length) {
      const to = ranges.charCodeAt(i + 2);
      for (let c = from; c <= to; c++) table[c] = 1;
      i += 2;
    } else {
      table[from] = 1;
    }
  }
  return table;
}

export const ALNUM = byteClass("A-Za-z0-9");
export const UPPER_ALNUM = byteClass("A-Z0-9");
export const WORD = byteClass("A-Za-z0-9_");
export const BASE64URL = byteClass("A-Za-z0-9_-");
export const BASE64 = byteClass("A-Za-z0-9+/=");
const HEX = byteClass("0-9A-Fa-f");

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** How many bytes of `cls` end just before `i` (going back), counting at most `max`. */
export function runBefore(b: Uint8Array, i: number, cls: ByteClass, max: number): number {
  const stop = Math.max(0, i - max);
  let j = i;
  while (j > stop && cls[b[j - 1] as number] === 1) j--;
  return i - j;
}

/** The backslashes right before `i`. */
export function backslashesBefore(b: Uint8Array, i: number): number {
  let run = 0;
  while (i - 1 - run >= 0 && b[i - 1 - run] === BACKSLASH) run++;
  return run;
}

/**
 * The nesting level a quote belongs to, from the backslashes before it: 0 for a quote of the JSON
 * itself, 1 for one of a JSON document inside a string (`\"`), 2 one more level down (`\\\"`)…
 * A quote preceded by r backslashes belongs to level d when r = 2^d − 1 (mod 2^(d+1)), which is
 * the number of trailing one bits of r.
 */
export function quoteLevel(backslashes: number): number {
  let level = 0;
  while (backslashes & 1) {
    level++;
    backslashes >>= 1;
  }
  return level;
}

/** The escaped quote of a level: `"`, `\"`, `\\\"`… */
export function quoteAt(level: number): string {
  return `${"\\".repeat(2 ** level - 1)}"`;
}

export function startsWith(b: Uint8Array, i: number, text: string): boolean {
  if (i < 0 || i + text.length > b.length) return false;
  for (let k = 0; k < text.length; k++) if (b[i + k] !== text.charCodeAt(k)) return false;
  return true;
}

/** Like `startsWith`, ASCII letters compared without case. */
export function startsWithFolded(b: Uint8Array, i: number, lower: string): boolean {
  if (i < 0 || i + lower.length > b.length) return false;
  for (let k = 0; k < lower.length; k++) if (((b[i + k] as number) | 0x20) !== lower.charCodeAt(k)) return false;
  return true;
}

/**
 * Whether a token may start at `i`: the byte before is not part of a word (`cls`, letters and
 * digits by default). A letter that ends a JSON escape (`\n`, `\t`, `\u00e9`; one level down
 * `\\n`) counts as a separator, so a token on the line after a newline inside a JSON string is
 * still found.
 */
export function boundaryBefore(b: Uint8Array, i: number, cls: ByteClass = WORD): boolean {
  if (i <= 0) return true;
  const c = b[i - 1] as number;
  if (cls[c] !== 1) return true;
  if ((c === 0x6e || c === 0x74 || c === 0x72 || c === 0x62 || c === 0x66) && b[i - 2] === BACKSLASH) return true;
  // `\uXXXX`: four hex digits after `\u`.
  if (HEX[c] === 1 && i >= 6 && b[i - 5] === 0x75 && HEX[b[i - 4] as number] === 1 && HEX[b[i - 3] as number] === 1 && HEX[b[i - 2] as number] === 1) {
    return b[i - 6] === BACKSLASH;
  }
  return false;
}

/** Whether a token may end at `i`: the byte there (if any) is not part of it. */
export function boundaryAfter(b: Uint8Array, i: number, cls: ByteClass = ALNUM): boolean {
  return i >= b.length || cls[b[i] as number] !== 1;
}

/** Whether the text at `i` is a line break: a real one, or `\n` / `\r` inside a JSON string. */
export function lineBreakAt(b: Uint8Array, i: number): boolean {
  const c = b[i];
  if (c === 0x0a || c === 0x0d) return true;
  return c === BACKSLASH && (b[i + 1] === 0x6e || b[i + 1] === 0x72);
}

export function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09;
}
