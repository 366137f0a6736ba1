import { closingQuote } from "../../core/json-string-end.ts";

/**
 * A request's JSON text with `params._meta.traceparent` set, every other byte as the agent sent
 * it: the shim passes its span's context to the server (OpenTelemetry semantic conventions for
 * MCP, "Context propagation") without re-serialising the request. Re-serialising would change
 * what the gates decided on in ways the agent did not write: numbers beyond double precision
 * (`12345678901234567890`), `1e400`, escapes. Only the one member is added (or its value
 * replaced); the gates decide on the request as it arrived, and this runs after they have.
 *
 * The text is a line the shim already accepted: valid JSON, one object, no name twice at any
 * depth (stdio/json-shape.ts), so the walk below only has to find members, not validate. Returns
 * null when there is nowhere to put it (`params` or `_meta` that is not an object): the request
 * is then forwarded unchanged.
 */
export function withTraceparent(text: string, traceparent: string): string | null {
  const top = skipSpace(text, 0);
  if (text[top] !== "{") return null;
  const params = member(text, top, "params");
  if (!params || text[params.value] !== "{") return null;
  const value = JSON.stringify(traceparent);
  const meta = member(text, params.value, "_meta");
  if (!meta) return insertFirst(text, params.value, `"_meta":{"traceparent":${value}}`);
  if (text[meta.value] !== "{") return null;
  const existing = member(text, meta.value, "traceparent");
  if (!existing) return insertFirst(text, meta.value, `"traceparent":${value}`);
  return `${text.slice(0, existing.value)}${value}${text.slice(existing.end)}`;
}

type Found = { value: number; end: number };

/** The member named `name` of the object opening at `open`: where its value starts and ends. */
function member(text: string, open: number, name: string): Found | null {
  let i = skipSpace(text, open + 1);
  if (text[i] !== '"') return null; // `{}`
  for (;;) {
    const keyEnd = closingQuote(text, i + 1);
    const raw = text.slice(i + 1, keyEnd);
    // Compared as decoded, as JSON.parse (and the gates) saw it: `"p\u0061rams"` is `params`.
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd + 1)) as string) : raw;
    const colon = skipSpace(text, keyEnd + 1);
    const value = skipSpace(text, colon + 1);
    const end = skipValue(text, value);
    if (key === name) return { value, end };
    const next = skipSpace(text, end);
    if (text[next] !== ",") return null;
    i = skipSpace(text, next + 1);
  }
}

function insertFirst(text: string, open: number, entry: string): string {
  const empty = text[skipSpace(text, open + 1)] === "}";
  return `${text.slice(0, open + 1)}${entry}${empty ? "" : ","}${text.slice(open + 1)}`;
}

function skipValue(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return closingQuote(text, start + 1) + 1;
  if (first === "{" || first === "[") {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = closingQuote(text, i + 1);
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth += 1;
      else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return i + 1;
    }
    return text.length;
  }
  let i = start;
  while (i < text.length && !ENDS_LITERAL.has(text.charCodeAt(i))) i += 1;
  return i;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && SPACE.has(text.charCodeAt(i))) i += 1;
  return i;
}

const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const SPACE: ReadonlySet<number> = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ENDS_LITERAL: ReadonlySet<number> = new Set([0x2c, CLOSE_OBJECT, CLOSE_ARRAY, 0x20, 0x09, 0x0a, 0x0d]);
