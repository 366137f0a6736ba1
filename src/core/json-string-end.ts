/**
 * Where a JSON string ends, found in text `JSON.parse` has already accepted: the framing checks
 * (stdio/json-shape.ts) and the trace context splice (telemetry/tracing/meta-splice.ts) walk a
 * message's text without parsing it again, and skip every string's contents with this one scanner.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Characters stepped through one by one before a string's end is searched for with `indexOf`. */
const SHORT_STRING = 32;

/**
 * Whether the string `closingQuote` last closed has an escape in it: true or false when it was
 * stepped through, null when it was searched (long: the caller looks again if it must know).
 */
let closedEscaped: boolean | null = false;

/**
 * The index of the quote that ends the string whose content starts at `from` (`text.length` when
 * none does, which cannot happen in valid JSON). Most strings in a message are short (names, ids,
 * methods): those are stepped through, each escape as a pair, which costs less than a native
 * search per string; a long one is searched with `indexOf`.
 */
export function closingQuote(text: string, from: number): number {
  const stop = Math.min(text.length, from + SHORT_STRING);
  let at = from;
  closedEscaped = false;
  while (at < stop) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) return at;
    if (c === BACKSLASH) {
      closedEscaped = true;
      at += 2;
    } else {
      at += 1;
    }
  }
  // `at` is never inside an escape here: backslashes before a quote are counted from it on.
  closedEscaped = closedEscaped || null;
  return searchClosingQuote(text, Math.min(at, text.length));
}

/** Whether the string `closingQuote` last closed had an escape: known for a short one, null for a long one. */
export function lastStringEscaped(): boolean | null {
  return closedEscaped;
}

function searchClosingQuote(text: string, from: number): number {
  let at = text.indexOf('"', from);
  for (;;) {
    if (at === -1) return text.length;
    let backslashes = 0;
    for (let k = at - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) backslashes += 1;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
}
