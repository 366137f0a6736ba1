import type { Unit } from "./framer.ts";
import { MAX_LINE_BYTES } from "./line-splitter.ts";
import { oversizeError, validateLine } from "./validate-line.ts";

/**
 * One JSON-RPC message that arrived whole, not as a line of a stream: an HTTP body, or the data of
 * one Server-Sent Event. The same rules as a line apply (docs/architecture.md, decision 2): at most
 * `MAX_LINE_BYTES`, strict UTF-8 without a BOM, exactly one JSON-RPC 2.0 object, no duplicate keys,
 * bounded nesting.
 *
 * One difference: JSON sent over HTTP may be pretty-printed, with CR and LF between tokens, and a
 * newline-delimited stream to the agent cannot carry them. A raw CR or LF is never part of a valid
 * JSON string, so in a body that parses they are whitespace between tokens, and each becomes a
 * space: the same length, the same JSON value, one line. A body that does not parse is judged as
 * sent, never repaired (a raw newline inside a string stays invalid JSON).
 */
export function messageUnit(bytes: Uint8Array, maxBytes = MAX_LINE_BYTES): Unit {
  if (bytes.length > maxBytes) {
    return { kind: "rejected", error: oversizeError(bytes.length, bytes.subarray(0, 256), bytes.subarray(Math.max(256, bytes.length - 256)), maxBytes) };
  }
  const line = hasLineBreak(bytes) && parsesAsJson(bytes) ? spacesForLineBreaks(bytes) : bytes;
  const verdict = validateLine(line);
  return verdict.ok ? { kind: "message", bytes: line, message: verdict.message } : { kind: "rejected", error: verdict.error };
}

/** An event or body larger than the limit, of which only the head was kept. */
export function oversizeUnit(size: number, head: Uint8Array, maxBytes = MAX_LINE_BYTES): Unit {
  return { kind: "rejected", error: oversizeError(size, head, new Uint8Array(0), maxBytes) };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function hasLineBreak(bytes: Uint8Array): boolean {
  return bytes.indexOf(0x0a) !== -1 || bytes.indexOf(0x0d) !== -1;
}

function parsesAsJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(strictUtf8.decode(bytes));
    return true;
  } catch {
    return false;
  }
}

function spacesForLineBreaks(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  for (let i = 0; i < out.length; i++) if (out[i] === 0x0a || out[i] === 0x0d) out[i] = 0x20;
  return out;
}
