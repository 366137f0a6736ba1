/**
 * F-014 / EC-STDIO-018, the embedded-newline smuggling attack. A sender writes one JSON-RPC message
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
export type ScanState = { inString: boolean; escaped: boolean; depth: number };

export const FRESH_SCAN: ScanState = { inString: false, escaped: false, depth: 0 };

/** Continue a JSON lexical scan (strings, escapes, nesting) over `text`. */
export function scanJson(text: string, from: ScanState): ScanState {
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

/** At most this many lines or bytes are held while a watch is open; past that it is abandoned. */
export const WATCH_MAX_LINES = 64;
/** A watch the sender never closes is abandoned after this long, so held lines are not delayed. */
export const WATCH_TIMEOUT_MS = 250;

export type WatchOutcome =
  | { kind: "open" }
  /** The text closed into one JSON-RPC message and a later line is a message on its own. */
  | { kind: "smuggling"; outer: { [key: string]: unknown }; smuggledLine: number }
  /** The text closed into one message with raw newlines in a string but nothing hidden in it. */
  | { kind: "multiline"; outer: { [key: string]: unknown } }
  /** The text closed into something that is not one JSON-RPC message, or the watch overflowed. */
  | { kind: "abandon" };

export class SmugglingWatch {
  readonly lines: Uint8Array[] = [];
  private readonly texts: string[] = [];
  /** The JSON text with each join point's newline escaped when it fell inside a string. */
  private joined: string;
  private state: ScanState;
  private bytes: number;

  constructor(
    firstLine: Uint8Array,
    firstText: string,
    private readonly maxBytes: number,
  ) {
    this.lines.push(firstLine);
    this.texts.push(firstText);
    this.joined = firstText;
    this.state = scanJson(firstText, FRESH_SCAN);
    this.bytes = firstLine.length;
  }

  add(line: Uint8Array, text: string): WatchOutcome {
    this.lines.push(line);
    this.texts.push(text);
    this.bytes += line.length + 1;
    this.joined += this.state.inString ? "\\n" : "\n";
    this.joined += text;
    this.state = scanJson(text, this.state);
    if (this.lines.length > WATCH_MAX_LINES || this.bytes > this.maxBytes) return { kind: "abandon" };
    if (this.state.inString || this.state.depth > 0) return { kind: "open" };
    return this.evaluate();
  }

  private evaluate(): WatchOutcome {
    let outer: unknown;
    try {
      outer = JSON.parse(this.joined);
    } catch {
      return { kind: "abandon" };
    }
    if (typeof outer !== "object" || outer === null || Array.isArray(outer)) return { kind: "abandon" };
    const body = outer as { [key: string]: unknown };
    if (body.jsonrpc !== "2.0") return { kind: "abandon" };
    for (let i = 1; i < this.texts.length; i++) {
      if (parsesAsJsonRpc(this.texts[i] as string)) return { kind: "smuggling", outer: body, smuggledLine: i };
    }
    return { kind: "multiline", outer: body };
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
