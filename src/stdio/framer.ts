import { isValidId, type Message } from "../core/jsonrpc.ts";
import { concatBytes } from "../core/bytes.ts";
import { LineSplitter, MAX_LINE_BYTES } from "./line-splitter.ts";
import { endsInsideString, SmugglingWatch } from "./smuggling.ts";
import { oversizeError, validateLine, type FramingError } from "./validate-line.ts";

/** What one direction of the stream yields: messages to route and errors to report. */
export type Unit =
  | { kind: "message"; bytes: Uint8Array; message: Message }
  | { kind: "rejected"; error: FramingError }
  /**
   * A smuggling attempt. `replay` is what line-by-line handling gives (the `development` profile
   * forwards it with `WOULD_REJECT`); `production` forwards none of it.
   */
  | { kind: "smuggling"; error: FramingError; replay: Unit[] };

const lenientUtf8 = new TextDecoder("utf-8");

/** Framing for one direction: bytes in, validated units out, in order. */
export class Framer {
  private readonly splitter: LineSplitter;
  private watch: SmugglingWatch | null = null;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {
    this.splitter = new LineSplitter(maxLineBytes);
  }

  get watching(): boolean {
    return this.watch !== null;
  }

  push(chunk: Uint8Array): Unit[] {
    const units: Unit[] = [];
    for (const line of this.splitter.push(chunk)) {
      if (line.kind === "oversize") {
        // An oversize line cannot be part of a message we would accept; it ends any watch.
        if (this.watch) units.push(...this.abandonWatch());
        units.push({ kind: "rejected", error: oversizeError(line.size, line.head, line.tail, this.maxLineBytes) });
      } else {
        this.line(line.bytes, units);
      }
    }
    return units;
  }

  /** EOF: an open watch is abandoned and an unterminated last line reported. */
  end(): Unit[] {
    const units = this.watch ? this.abandonWatch() : [];
    const leftover = this.splitter.end();
    if (leftover > 0) {
      units.push({
        kind: "rejected",
        error: {
          code: "TruncatedLine",
          detail: `stream ended inside a line (${leftover} bytes without a newline)`,
          raw: new Uint8Array(0),
          size: leftover,
          id: null,
          looksLikeRequest: false,
        },
      });
    }
    return units;
  }

  /** The watch never closed (timeout or overflow): judge every held line on its own. */
  abandonWatch(): Unit[] {
    const watch = this.watch;
    this.watch = null;
    if (!watch) return [];
    const [first, ...rest] = watch.lines;
    const units: Unit[] = [];
    const verdict = validateLine(first as Uint8Array);
    if (!verdict.ok) units.push({ kind: "rejected", error: verdict.error });
    for (const line of rest) this.line(line, units);
    return units;
  }

  private line(bytes: Uint8Array, units: Unit[]): void {
    if (this.watch) {
      this.watched(this.watch, bytes, units);
      return;
    }
    // Whitespace-only lines carry nothing; dropping them silently keeps keep-alive newlines harmless.
    if (isBlank(bytes)) return;
    const verdict = validateLine(bytes);
    if (verdict.ok) {
      units.push({ kind: "message", bytes, message: verdict.message });
      return;
    }
    if (verdict.error.code === "InvalidJson" && verdict.text !== null && endsInsideString(verdict.text)) {
      this.watch = new SmugglingWatch(bytes.slice(), verdict.text);
      return;
    }
    units.push({ kind: "rejected", error: verdict.error });
  }

  private watched(watch: SmugglingWatch, bytes: Uint8Array, units: Unit[]): void {
    const outcome = watch.add(bytes.slice(), lenientUtf8.decode(bytes));
    if (outcome.kind === "open") return;
    if (outcome.kind === "abandon") {
      units.push(...this.abandonWatch());
      return;
    }
    this.watch = null;
    const raw = concatBytes(watch.lines.flatMap((line, i) => (i === 0 ? [line] : [NEWLINE_BYTES, line])));
    const id = isValidId(outcome.outer.id) ? outcome.outer.id : null;
    const looksLikeRequest = typeof outcome.outer.method === "string" && "id" in outcome.outer;
    if (outcome.kind === "multiline") {
      // One message with raw newlines inside a string: invalid JSON, but nothing hidden in it.
      units.push({
        kind: "rejected",
        error: {
          code: "InvalidJson",
          detail: `message spans ${watch.lines.length} lines (raw newline inside a JSON string)`,
          raw,
          size: raw.length,
          id,
          looksLikeRequest,
        },
      });
      return;
    }
    // What a line-by-line peer would have made of it: each line judged on its own, no watch.
    const replay: Unit[] = watch.lines.map((line): Unit => {
      const verdict = validateLine(line);
      return verdict.ok ? { kind: "message", bytes: line, message: verdict.message } : { kind: "rejected", error: verdict.error };
    });
    units.push({
      kind: "smuggling",
      error: {
        code: "SmugglingAttempt",
        detail: `line ${outcome.smuggledLine + 1} of a ${watch.lines.length}-line message is a JSON-RPC message hidden in a string`,
        raw,
        size: raw.length,
        id,
        looksLikeRequest,
      },
      replay,
    });
  }
}

const NEWLINE_BYTES = new Uint8Array([0x0a]);

function isBlank(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}
