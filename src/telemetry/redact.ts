/**
 * The one redactor for what a person is shown (approval prompts, the approvals page, `thoughtgate
 * tasks`) and what logs and the event stream keep of raw bytes. Two forms of one rule:
 *
 * - `redact(value)`: a JSON value. The value of every key that names a credential is replaced, at
 *   any depth; strings get the text form too (a `Bearer …` or a JSON document inside a string).
 * - `redactText(text)`: text that may not parse (a rejected line): `"password": "…"` pairs, also
 *   inside escaped JSON, `Authorization: …` headers, `Bearer …`, `api_key=…` parameters and the
 *   password of `scheme://user:password@host`.
 *
 * Keys are split into words (`apiKey`, `X-Api-Key`, `access_token` → api key / x api key / access
 * token) so that `key` catches `private_key` but not `keyboard` or `monkey`.
 */
export const REDACTED = "[REDACTED]";

const SECRET_WORDS: ReadonlySet<string> = new Set([
  "token",
  "tokens",
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "secrets",
  "key",
  "keys",
  "apikey",
  "authorization",
  "auth",
  "bearer",
  "cookie",
  "cookies",
  "credential",
  "credentials",
  "session",
  "signature",
  "otp",
]);

/** Values that carry their own scheme (`Bearer …`, `Basic …`) are credentials whatever their key. */
const SCHEMED_CREDENTIAL = /^(bearer|basic|token)\s+\S/i;

/** Depth past which nested values are summarised rather than walked (a prompt, not a dump). */
const MAX_DEPTH = 8;

export function isSecretKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  return words.some((word) => SECRET_WORDS.has(word));
}

/** A copy of `value` with every secret-looking key's value replaced by `[REDACTED]`. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return SCHEMED_CREDENTIAL.test(value) ? REDACTED : redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[…]" : "{…}";
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretKey(key) && item !== null && item !== undefined && item !== "" ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

/** A quoted key and its colon; group 1 is the backslashes before each quote (JSON inside a JSON string). */
const QUOTED_KEY = /(\\*)"([A-Za-z0-9_.\- ]{1,64})\1"\s*:\s*/g;
/** `Authorization: Basic …` / `"authorization=…"`: the whole header value, up to the line or quote. */
const AUTH_HEADER = /\b((?:proxy-)?authorization\s*[:=]\s*)([^\s"'\\][^\r\n"'\\]*)/gi;
const BEARER = /\b(bearer\s+)([A-Za-z0-9\-._~+/=]+)/gi;
/** `?api_key=…`, `--password=…`, `SECRET_TOKEN=…`. */
const PARAMETER = /(^|[?&;,\s])(-{0,2})([A-Za-z][A-Za-z0-9_.-]{0,63})=([^&#\s"'\\,;]+)/g;
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@"'\\]*:)([^\s/@"'\\]+)@/gi;

/** Text with every credential the patterns above recognise replaced by `[REDACTED]`. */
export function redactText(text: string): string {
  return redactQuotedPairs(text)
    .replace(AUTH_HEADER, (_, head: string) => `${head}${REDACTED}`)
    .replace(BEARER, (_, head: string) => `${head}${REDACTED}`)
    .replace(PARAMETER, (whole: string, before: string, dashes: string, key: string) => (isSecretKey(key) ? `${before}${dashes}${key}=${REDACTED}` : whole))
    .replace(URL_PASSWORD, (_, head: string) => `${head}${REDACTED}@`);
}

function redactQuotedPairs(text: string): string {
  let out = "";
  let copied = 0;
  QUOTED_KEY.lastIndex = 0;
  for (let match = QUOTED_KEY.exec(text); match !== null; match = QUOTED_KEY.exec(text)) {
    const escapes = match[1] ?? "";
    if (!isSecretKey(match[2] ?? "")) continue;
    const start = match.index + match[0].length;
    const end = valueEnd(text, start, escapes);
    if (end === start) continue;
    const quote = `${escapes}"`;
    out += `${text.slice(copied, start)}${quote}${REDACTED}${quote}`;
    copied = end;
    QUOTED_KEY.lastIndex = end;
  }
  return out + text.slice(copied);
}

/**
 * Where the value starting at `start` ends (exclusive); `start` itself for values left alone
 * (null, an empty string). A string at escape depth d (its quotes preceded by 2^d − 1
 * backslashes) ends at the first quote whose run of backslashes, modulo 2^(d+1), is 2^d − 1. A
 * value cut off by the end of the text (a truncated line) runs to the end.
 */
function valueEnd(text: string, start: number, escapes: string): number {
  const quote = `${escapes}"`;
  if (text.startsWith(quote, start)) {
    const period = 2 * (escapes.length + 1);
    for (let i = start + quote.length; i < text.length; i++) {
      if (text[i] !== '"') continue;
      let run = 0;
      while (text[i - 1 - run] === "\\") run += 1;
      if (run % period === escapes.length) return i - (start + quote.length) === escapes.length ? start : i + 1;
    }
    return text.length;
  }
  const first = text[start];
  if (first === "{" || first === "[") return bracketEnd(text, start);
  if (text.startsWith("null", start)) return start;
  const scalar = /^[^,}\]\s\\]+/.exec(text.slice(start, start + 1024));
  return start + (scalar?.[0].length ?? 0);
}

/** The end of the object or array starting at `start`, strings skipped (unbalanced: the end of the text). */
function bracketEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}
