import { keyKind } from "./secret-keys.ts";
import { redactedMarker } from "../core/secret-kinds.ts";
import { redactString } from "./secret-scan.ts";

/**
 * The one redactor for what a person is shown (approval prompts, the approvals page, `thoughtgate
 * tasks`, elicitation) and what logs and the event stream keep of raw bytes. Built on the secret
 * scanner (secret-scan.ts) in its `display` mode: every recognised credential, and the value of
 * every key that names one, becomes `[REDACTED:<kind>]`. Two forms of one rule:
 *
 * - `redact(value)`: a JSON value. The value of every key that names a credential is replaced, at
 *   any depth; strings get the text form (a token in a command line, a JSON document inside a string).
 * - `redactText(text)`: text that may not parse (a rejected line): JSON pairs at any level of
 *   escaping, `Authorization: …` headers, `Bearer …`, `api_key=…` parameters, the password of
 *   `scheme://user:password@host`, and the credential shapes (secret-shapes.ts).
 *
 * Tool results on their way to the agent are scanned in the stricter `result` mode instead
 * (src/shim/result-scanner.ts): there a false positive changes the agent's data.
 */
export { isSecretKey } from "./secret-keys.ts";

/**
 * Values that carry their own scheme (`Bearer …`, `Basic …`, `token …`) are credentials whatever
 * their key. `token` is also an English word ("token is ghp_…"): only a value that is the scheme
 * and one word counts; a sentence goes to the scanner, which names what it finds by its shape.
 */
const SCHEMED_CREDENTIAL = /^(?:(bearer|basic)\s+\S|token\s+\S+\s*$)/i;

/** Depth past which nested values are summarised rather than walked (a prompt, not a dump). */
const MAX_DEPTH = 8;

/** A copy of `value` with every credential replaced by `[REDACTED:<kind>]`. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") {
    const scheme = SCHEMED_CREDENTIAL.exec(value);
    if (scheme) return redactedMarker(scheme[1]?.toLowerCase() === "bearer" ? "bearer_token" : "authorization_header");
    return redactText(value);
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? "[…]" : "{…}";
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  // No prototype: an argument named `__proto__` (JSON.parse makes it an own key) must be kept and
  // shown like any other; assigned to `{}` it would set the prototype and vanish from every prompt
  // while the server still receives it.
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    const kind = keyKind(key, "display");
    out[key] = kind && item !== null && item !== undefined && item !== "" ? redactedMarker(kind) : redact(item, depth + 1);
  }
  return out;
}

/** Text with every credential the scanner recognises replaced by `[REDACTED:<kind>]`. */
export function redactText(text: string): string {
  return redactString(text, "display");
}
