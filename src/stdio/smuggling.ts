/**
 * The embedded-newline smuggling attack. A sender writes one JSON-RPC message
 * whose string value contains a raw newline followed by a complete second message:
 *
 *   {"jsonrpc":"2.0","id":1,"result":{"text":"hi          ← ends inside an open string
 *   {"jsonrpc":"2.0","id":2,"result":{"forged":true}}   ← parses on its own
 *   "}}                                                  ← closes the first message
 *
 * A line-based peer sees the middle line as a real message. We watch: a line that fails to parse
 * because it ends inside an open string starts a watch, and the following lines are joined with
 * `\n` until the text closes. If the joined text is one JSON-RPC message and any later line would
 * parse as JSON-RPC on its own, it is smuggling.
 */
type ScanState = { inString: boolean; escaped: boolean; depth: number };

const FRESH_SCAN: ScanState = { inString: false, escaped: false, depth: 0 };

/** Continue a JSON lexical scan (strings, escapes, nesting) over `text`. */
function scanJson(text: string, from: ScanState): ScanState {
  let { inString, escaped, depth } = from;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c /* \ */) escaped = true;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return { inString, escaped, depth };
}

export function endsInsideString(text: string): boolean {
  return scanJson(text, FRESH_SCAN).inString;
}

/** At most this many lines are held while a watch is open; past that it is abandoned. */
const WATCH_MAX_LINES = 64;
/** At most this many bytes are held (an attack needs a few hundred; a real message never spans lines). */
const WATCH_MAX_BYTES = 1024 * 1024;
/** A watch the sender never closes is abandoned after this long, so held lines are not delayed. */
export const WATCH_TIMEOUT_MS = 250;
/** Quotes tried per line as the one that closes the open string. */
const MAX_CLOSE_CANDIDATES = 8;

export type WatchOutcome =
  | { kind: "open" }
  /** The lines close into one JSON-RPC message and a line inside it is a message on its own. */
  | { kind: "smuggling"; outer: { [key: string]: unknown }; smuggledLine: number }
  /** The lines close into one message with raw newlines in a string but nothing hidden in it. */
  | { kind: "multiline"; outer: { [key: string]: unknown } }
  /** Too many lines or bytes: the watch gives up and every held line is judged on its own. */
  | { kind: "abandon" };

/**
 * The embedded message carries unescaped quotes, so the joined text is never strictly valid
 * JSON. We model the sender's intent instead: everything from the open string up to a closing
 * quote on a later line is string content. The lines "close" when, with that content escaped,
 * the text parses as one JSON-RPC object.
 */
export class SmugglingWatch {
  readonly lines: Uint8Array[] = [];
  private readonly texts: string[] = [];
  /** Nesting depth at the end of the first line: what the rest after the closing quote must close. */
  private readonly openDepth: number;
  private bytes: number;

  constructor(firstLine: Uint8Array, firstText: string) {
    this.lines.push(firstLine);
    this.texts.push(firstText);
    this.openDepth = scanJson(firstText, FRESH_SCAN).depth;
    this.bytes = firstLine.length;
  }

  add(line: Uint8Array, text: string): WatchOutcome {
    this.lines.push(line);
    this.texts.push(text);
    this.bytes += line.length + 1;
    if (this.lines.length > WATCH_MAX_LINES || this.bytes > WATCH_MAX_BYTES) return { kind: "abandon" };
    const outer = this.closeWith(text);
    if (!outer) return { kind: "open" };
    for (let i = 1; i < this.texts.length - 1; i++) {
      if (parsesAsJsonRpc(this.texts[i] as string)) return { kind: "smuggling", outer, smuggledLine: i };
    }
    return { kind: "multiline", outer };
  }

  /** Try the first quotes of `last` as the end of the open string; the outer message if one closes it. */
  private closeWith(last: string): { [key: string]: unknown } | null {
    const middle = this.texts.slice(1, -1);
    let quote = indexOfUnescapedQuote(last, 0);
    for (let tried = 0; quote !== -1 && tried < MAX_CLOSE_CANDIDATES; tried++) {
      const rest = last.slice(quote);
      // Cheap structural check before a full parse: the rest must close what the first line opened.
      const after = scanJson(rest.slice(1), { inString: false, escaped: false, depth: this.openDepth });
      if (!after.inString && after.depth === 0) {
        const content = ["", ...middle, last.slice(0, quote)].join("\n");
        const outer = parseJsonRpcObject(`${this.texts[0]}${escapeStringContent(content)}${rest}`);
        if (outer) return outer;
      }
      quote = indexOfUnescapedQuote(last, quote + 1);
    }
    return null;
  }
}

function indexOfUnescapedQuote(text: string, from: number): number {
  for (let i = text.indexOf('"', from); i !== -1; i = text.indexOf('"', i + 1)) {
    let backslashes = 0;
    for (let j = i - 1; j >= 0 && text.charCodeAt(j) === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return -1;
}

/** Raw text as the content of a JSON string (quotes, backslashes and newlines escaped). */
function escapeStringContent(content: string): string {
  return JSON.stringify(content).slice(1, -1);
}

function parseJsonRpcObject(text: string): { [key: string]: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    return (value as { jsonrpc?: unknown }).jsonrpc === "2.0" ? (value as { [key: string]: unknown }) : null;
  } catch {
    return null;
  }
}

function parsesAsJsonRpc(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && "jsonrpc" in value;
  } catch {
    return false;
  }
}
