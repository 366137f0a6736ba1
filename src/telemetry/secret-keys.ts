import type { SecretKind } from "../core/secret-kinds.ts";
import type { ScanMode } from "./secret-shapes.ts";

/**
 * Which key names hold credentials. Keys are split into words (`apiKey`, `X-Api-Key`,
 * `access_token`, `DBPassword` → api key / x api key / access token / db password), without case,
 * and words run together are taken apart where they end in a credential word (`newpassword`,
 * `accesstoken`, `clientsecret`; `privatekey` only after a word that makes a key a credential, so
 * not `monkey`), or make one together (`PassWord`). So `key` catches `private_key` but not
 * `keyboard`, and `secret` not `secretary`.
 *
 * A key whose last word says something about a credential rather than holding it (`token_count`,
 * `passwordPolicy`, `secret_name`, `token_type`) names no credential in either reading.
 *
 * Two readings, one per scan mode (secret-shapes.ts):
 * - display: any key with a credential-ish word (`session`, `auth`, `key`, `tokens`…): a person
 *   shown less loses nothing.
 * - result: the key must name a credential, because the agent gets the redacted data and a
 *   false positive breaks its work: `access_token`, `client_secret`, `db_password`, `api_key`,
 *   `Authorization`, `Cookie`, yes; `next_page_token`, `input_tokens`, `sort_key`, `secret_name`,
 *   `session_id`, `pwd` (a directory), no.
 */
const DISPLAY_WORDS: ReadonlySet<string> = new Set([
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

/** A last word that is a credential by itself. */
const CREDENTIAL_WORDS: ReadonlySet<string> = new Set([
  "password",
  "passwd",
  "passphrase",
  "secret",
  "secrets",
  "credential",
  "credentials",
  "authorization",
  "cookie",
  "apikey",
  "privatekey",
  "secretkey",
]);
/** `<word>_key` is a credential for these words (`api_key`, `private_key`); `sort_key`, `primary_key` are not. */
const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "api",
  "private",
  "secret",
  "access",
  "signing",
  "encryption",
  "master",
  "account",
  "shared",
  "client",
  "app",
  "service",
  "subscription",
  "auth",
  "session",
  "webhook",
  "deploy",
  "ssh",
  "license",
]);
/** `<word>_token` that is a position in a listing, not a credential. */
const NOT_CREDENTIAL_TOKENS: ReadonlySet<string> = new Set(["page", "next", "continuation", "sync", "cursor", "pagination", "resume", "start"]);
/** Words after the credential word that still name its value (`secret_value`, `password_b64`). */
const VALUE_SUFFIXES: ReadonlySet<string> = new Set(["value", "string", "text", "data", "plain", "plaintext", "raw", "b64", "base64", "hex", "encoded"]);

/** A last word that describes a credential (how many, what kind, its rules, its name), never holds one. */
const DESCRIBING_WORDS: ReadonlySet<string> = new Set([
  "count",
  "counts",
  "limit",
  "limits",
  "policy",
  "policies",
  "length",
  "type",
  "types",
  "kind",
  "expiry",
  "expires",
  "expiration",
  "ttl",
  "name",
  "names",
  "label",
  "format",
  "rules",
  "required",
  "usage",
]);
/** `<word>_tokens` that counts a model's tokens (`max_tokens`, `input_tokens`). */
const COUNTED_TOKENS: ReadonlySet<string> = new Set(["max", "min", "input", "output", "total", "num", "prompt", "completion", "cached", "reasoning", "remaining", "used"]);
/** Credential words found at the end of a word run together (`newpassword`, `accesstoken`), longest first. */
const GLUED_ENDINGS: readonly string[] = ["authorization", "credentials", "passphrase", "credential", "password", "cookies", "secrets", "passwd", "cookie", "secret", "tokens", "token"];
/** Two words that are one credential word when written as two (`PassWord`, `Pass_Phrase`). */
const SPLIT_WORDS: ReadonlySet<string> = new Set(["password", "passphrase"]);

function keyWords(key: string): string[] {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const joined = word + (words[i + 1] ?? "");
    if (i + 1 < words.length && SPLIT_WORDS.has(joined)) {
      out.push(joined);
      i++;
    } else {
      out.push(...unglued(word));
    }
  }
  return out;
}

/** A word run together taken apart at the credential words it ends in: `dbpassword` → db password, `awssecretaccesskey` → aws secret access key. */
function unglued(word: string): string[] {
  if (DISPLAY_WORDS.has(word)) return [word];
  const key = unglueKey(word);
  if (key) return key;
  for (const ending of GLUED_ENDINGS) {
    if (word.length > ending.length && word.endsWith(ending)) return [...unglued(word.slice(0, -ending.length)), ending];
  }
  return [word];
}

/** `<qualifier>key` (`privatekey`, `sshkey`, `secretaccesskey`), or null: `monkey` and `hockey` are no keys. */
function unglueKey(word: string): string[] | null {
  if (!word.endsWith("key") || word.length <= 3) return null;
  const before = word.slice(0, -3);
  for (const qualifier of KEY_QUALIFIERS) {
    if (before.endsWith(qualifier)) return [...(before.length > qualifier.length ? unglued(before.slice(0, -qualifier.length)) : []), qualifier, "key"];
  }
  return null;
}

/** Whether the last word describes a credential (`token_count`, `max_tokens`) instead of holding one. */
function describesOnly(words: readonly string[]): boolean {
  const last = words[words.length - 1] ?? "";
  if (words.length > 1 && DESCRIBING_WORDS.has(last)) return true;
  return last === "tokens" && COUNTED_TOKENS.has(words[words.length - 2] ?? "");
}

/** The display reading: any credential-ish word. */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  return !describesOnly(words) && words.some((word) => DISPLAY_WORDS.has(word));
}

/** The result reading: the key names a credential. */
export function isCredentialKey(key: string): boolean {
  const words = keyWords(key);
  if (describesOnly(words)) return false;
  while (words.length > 1 && VALUE_SUFFIXES.has(words[words.length - 1] ?? "")) words.pop();
  const last = words[words.length - 1] ?? "";
  const before = words[words.length - 2] ?? "";
  if (CREDENTIAL_WORDS.has(last)) return true;
  if (last === "token") return !NOT_CREDENTIAL_TOKENS.has(before);
  if (last === "key") return KEY_QUALIFIERS.has(before);
  return false;
}

/** The kind a value under this key is redacted as, or null when the key does not name a credential. */
export function keyKind(key: string, mode: ScanMode): SecretKind | null {
  if (!(mode === "display" ? isSecretKey(key) : isCredentialKey(key))) return null;
  const words = keyWords(key);
  return words.includes("secret") && words.includes("access") && words.includes("key") ? "aws_secret_access_key" : "secret_field";
}

/**
 * `keyKind` of the key in `b[start, end)`, remembered by its bytes: a JSON document repeats its
 * keys (a 10 MiB result can hold half a million), and building a string for each costs more than
 * the rest of the scan. A fixed table, so a hostile document of unique keys cannot grow it.
 */
const SLOTS = 4096;
type KeyCache = { hashes: Int32Array; keys: Array<Uint8Array | undefined>; kinds: Array<SecretKind | null> };
const caches: Record<ScanMode, KeyCache> = {
  display: { hashes: new Int32Array(SLOTS), keys: new Array(SLOTS), kinds: new Array(SLOTS).fill(null) },
  result: { hashes: new Int32Array(SLOTS), keys: new Array(SLOTS), kinds: new Array(SLOTS).fill(null) },
};

export function keyKindAt(b: Uint8Array, start: number, end: number, mode: ScanMode): SecretKind | null {
  if (!mayNameCredential(b, start, end)) return null;
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (b[i] as number), 0x01000193);
  const slot = hash & (SLOTS - 1);
  const cache = caches[mode];
  const known = cache.keys[slot];
  if (known !== undefined && cache.hashes[slot] === hash && sameBytes(known, b, start, end)) return cache.kinds[slot] ?? null;
  const kind = keyKind(new TextDecoder("latin1").decode(b.subarray(start, end)), mode);
  cache.hashes[slot] = hash;
  cache.keys[slot] = b.slice(start, end);
  cache.kinds[slot] = kind;
  return kind;
}

/**
 * A cheap test that rules out most keys before the cache is asked: every word either reading
 * accepts (token, password, passwd, pwd, passphrase, secret, key, apikey, authorization, auth,
 * bearer, cookie, credential, session, signature, otp, and their plurals) contains one of these
 * three-letter pieces, compared without case: tok pas pwd sec ses sig key aut bea coo cre otp.
 * Source code has tens of thousands of distinct names, more than the cache holds.
 */
function mayNameCredential(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i + 2 < end; i++) {
    const x = (b[i + 1] as number) | 0x20;
    const y = (b[i + 2] as number) | 0x20;
    switch ((b[i] as number) | 0x20) {
      case 0x74: // t
        if (x === 0x6f && y === 0x6b) return true;
        break;
      case 0x70: // p
        if ((x === 0x61 && y === 0x73) || (x === 0x77 && y === 0x64)) return true;
        break;
      case 0x73: // s
        if ((x === 0x65 && (y === 0x63 || y === 0x73)) || (x === 0x69 && y === 0x67)) return true;
        break;
      case 0x6b: // k
        if (x === 0x65 && y === 0x79) return true;
        break;
      case 0x61: // a
        if (x === 0x75 && y === 0x74) return true;
        break;
      case 0x62: // b
        if (x === 0x65 && y === 0x61) return true;
        break;
      case 0x63: // c
        if ((x === 0x6f && y === 0x6f) || (x === 0x72 && y === 0x65)) return true;
        break;
      case 0x6f: // o
        if (x === 0x74 && y === 0x70) return true;
        break;
    }
  }
  return false;
}

function sameBytes(known: Uint8Array, b: Uint8Array, start: number, end: number): boolean {
  if (known.length !== end - start) return false;
  for (let i = 0; i < known.length; i++) if (known[i] !== b[start + i]) return false;
  return true;
}
