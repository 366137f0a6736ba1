import { classify, isValidId, type JsonObject, type JsonRpcId, type Message } from "../core/jsonrpc.ts";
import { checkJsonShape } from "./json-shape.ts";

/**
 * docs/architecture.md, decision 2: a line is forwarded only when it is valid UTF-8 without a BOM, has no bare CR,
 * and parses as exactly one JSON-RPC 2.0 object. Everything else becomes a `FramingError`.
 */
export type FramingErrorCode =
  | "MessageTooLarge"
  | "InvalidUtf8"
  | "ByteOrderMark"
  | "BareCarriageReturn"
  | "InvalidJson"
  | "DuplicateKey"
  | "NestingTooDeep"
  | "UnsupportedBatch"
  | "NotAnObject"
  | "MissingJsonRpcVersion"
  | "NotJsonRpc"
  | "InvalidId"
  | "SmugglingAttempt"
  | "DuplicateRequestId"
  | "TruncatedLine";

export type FramingError = {
  code: FramingErrorCode;
  detail: string;
  /** The offending bytes (for an oversize line only its head and tail). */
  raw: Uint8Array;
  size: number;
  /** The request or response id, when it could be recovered from the rejected bytes. */
  id: JsonRpcId | null;
  /** Whether the rejected line looks like a request, so its sender is waiting for an answer. */
  looksLikeRequest: boolean;
};

export type LineVerdict =
  | { ok: true; message: Message }
  | { ok: false; error: FramingError; text: string | null };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder("utf-8");
const CR = 0x0d;

export function validateLine(bytes: Uint8Array): LineVerdict {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return reject("ByteOrderMark", "line starts with a UTF-8 byte order mark", bytes, null);
  }
  const cr = bytes.indexOf(CR);
  // One CR right before the newline (CRLF) is tolerated; anywhere else some parsers treat it as a line break.
  if (cr !== -1 && cr !== bytes.length - 1) {
    return reject("BareCarriageReturn", `bare carriage return at byte ${cr}`, bytes, null);
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return reject("InvalidUtf8", "line is not valid UTF-8", bytes, null);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return reject("InvalidJson", `invalid JSON: ${withoutQuotedInput((error as Error).message)}`, bytes, text);
  }
  if (Array.isArray(value)) {
    return reject("UnsupportedBatch", "JSON-RPC batches are not supported (MCP 2025-06-18 removed them)", bytes, text);
  }
  if (typeof value !== "object" || value === null) {
    return reject("NotAnObject", "a JSON-RPC message must be a JSON object", bytes, text);
  }
  const body = value as JsonObject;
  const shape = checkJsonShape(text);
  if (shape) return reject(shape.code, shape.detail, bytes, text, body);
  if (body.jsonrpc !== "2.0") {
    return reject("MissingJsonRpcVersion", 'missing "jsonrpc": "2.0"', bytes, text, body);
  }
  const classified = classify(body);
  if (!classified.ok) {
    return {
      ok: false,
      text,
      error: {
        code: classified.code,
        detail: classified.detail,
        raw: bytes,
        size: bytes.length,
        id: classified.id,
        looksLikeRequest: classified.wasRequest,
      },
    };
  }
  // The same shape as a verdict: passed on, not copied (one object less per line).
  return classified;
}

export function oversizeError(size: number, head: Uint8Array, tail: Uint8Array, limit: number): FramingError {
  const raw = new Uint8Array(head.length + tail.length);
  raw.set(head);
  raw.set(tail, head.length);
  const headText = lenientUtf8.decode(head);
  const tailText = lenientUtf8.decode(tail);
  return {
    code: "MessageTooLarge",
    detail: `line of ${size} bytes exceeds the ${limit}-byte limit`,
    raw,
    size,
    id: recoverIdFromHead(headText) ?? recoverIdFromTail(tailText),
    looksLikeRequest: /"method"\s*:/.test(headText) || /"method"\s*:/.test(tailText),
  };
}

function reject(
  code: FramingErrorCode,
  detail: string,
  bytes: Uint8Array,
  text: string | null,
  body?: JsonObject,
): LineVerdict {
  const readable = text ?? lenientUtf8.decode(bytes);
  let id: JsonRpcId | null;
  let looksLikeRequest: boolean;
  if (body) {
    id = isValidId(body.id) ? body.id : null;
    looksLikeRequest = typeof body.method === "string" && "id" in body;
  } else {
    id = recoverIdFromHead(readable) ?? recoverIdFromTail(readable);
    // A sender that may be waiting is answered (with id null when it cannot be recovered, as
    // JSON-RPC 2.0 §5 prescribes for parse errors); a notification answered that way is harmless.
    looksLikeRequest = /"method"\s*:/.test(readable);
  }
  return { ok: false, text, error: { code, detail, raw: bytes, size: bytes.length, id, looksLikeRequest } };
}

// Best-effort id recovery from bytes that did not parse, so a rejected request can still be
// answered and its sender does not hang. Only positions where `"id"` is certainly top-level are
// trusted: first member after an optional `"jsonrpc"`, or the last member before the closing brace.
const ID_VALUE = String.raw`("(?:[^"\\]|\\.){0,256}"|-?\d{1,16})`;
const HEAD_ID = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);
const TAIL_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

function recoverIdFromHead(text: string): JsonRpcId | null {
  return parseIdLiteral(HEAD_ID.exec(text)?.[1]);
}

function recoverIdFromTail(text: string): JsonRpcId | null {
  return parseIdLiteral(TAIL_ID.exec(text)?.[1]);
}

function parseIdLiteral(literal: string | undefined): JsonRpcId | null {
  if (literal === undefined) return null;
  try {
    const id: unknown = JSON.parse(literal);
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * The parser's message without the input it quotes (`Unexpected identifier "ghp_…"`): the detail is
 * sent to the other side of the shim (a server's malformed line answers the agent's call), and what
 * the parser stopped at may be a credential no rule recognises out of its context (`hunter2`).
 */
function withoutQuotedInput(message: string): string {
  return message.replace(/"[^"]*"/g, (quoted) => `(${quoted.length - 2} characters)`);
}
