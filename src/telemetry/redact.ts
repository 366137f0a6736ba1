/**
 * Redaction for what a human is shown (the arbiter's approval prompt) and what logs may print:
 * the value of every key that names a credential is replaced, at any depth. Keys are split into
 * words (`apiKey`, `X-Api-Key`, `access_token` → api key / x api key / access token) so that
 * `key` catches `private_key` but not `keyboard` or `monkey`.
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
  if (typeof value === "string") return SCHEMED_CREDENTIAL.test(value) ? REDACTED : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[…]" : "{…}";
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretKey(key) && item !== null && item !== undefined && item !== "" ? REDACTED : redact(item, depth + 1);
  }
  return out;
}
