import {
  ALNUM,
  BACKSLASH,
  BASE64,
  BASE64URL,
  UPPER_ALNUM,
  WORD,
  backslashesBefore,
  boundaryAfter,
  boundaryBefore,
  byteClass,
  runBefore,
  startsWith,
} from "./secret-bytes.ts";
import { nextIndex, runOf } from "./secret-stretches.ts";
import type { SecretKind, Span } from "../core/secret-kinds.ts";

/**
 * `display`: what a person is shown, or a log keeps: anything that may be a credential goes.
 * `result`: what an MCP server returns to the agent: only what is a credential changes, because
 * every false positive changes the data the agent works with.
 */
export type ScanMode = "display" | "result";

/**
 * A recognition rule: wherever one of its fixed `anchors` occurs, `match` looks around it (a
 * bounded distance) and returns the span to redact, or null. Anchors are searched with
 * `Buffer#indexOf`, so the scan costs one native pass over the bytes per anchor and a few bounded
 * checks per hit: linear, with no regular expression that could backtrack.
 */
export type Rule = {
  kinds: readonly SecretKind[];
  anchors: readonly string[];
  /** The one mode the rule runs in; absent: both. */
  mode?: ScanMode;
  match(b: Uint8Array, at: number, mode: ScanMode): Span | null;
};

/** The longest token the fixed-prefix rules take: far above any real one, and it bounds the work per hit. */
const MAX_TOKEN = 1024;
/** A PEM block is looked for this far after its BEGIN line (a 16384-bit RSA key is about 12 KiB). */
const MAX_PEM_BYTES = 64 * 1024;
const MAX_JWT_SEGMENT = 8192;

type Matcher = (b: Uint8Array, start: number) => Span | null;

/** A token of `prefixLength` fixed bytes at `start` and `min` to `max` bytes of `body`, whole (a boundary on both sides). */
function tokenAt(kind: SecretKind, prefixLength: number, body: Uint8Array, min: number, max = MAX_TOKEN): Matcher {
  return (b, start) => {
    if (!boundaryBefore(b, start)) return null;
    const bodyStart = start + prefixLength;
    const length = runOf(b, bodyStart, body, max + 1);
    if (length < min || length > max || !boundaryAfter(b, bodyStart + length, body)) return null;
    return { kind, start, end: bodyStart + length };
  };
}

function prefixed(kind: SecretKind, anchor: string, body: Uint8Array, min: number, max = MAX_TOKEN): Rule {
  const match = tokenAt(kind, anchor.length, body, min, max);
  return { kinds: [kind], anchors: [anchor], match: (b, at) => match(b, at) };
}

const githubClassic = tokenAt("github_token", 4, ALNUM, 36, 251);
const githubFineGrained = tokenAt("github_token", 11, WORD, 22, 247);
const stripeWebhook = tokenAt("stripe_webhook_secret", 6, BASE64, 24, 255);

/**
 * Tokens whose prefix ends in `_`: `ghp_` (and gho, ghu, ghs, ghr), `github_pat_`, `sk_live_` (and
 * test, rk), `whsec_`. One search for `_` and a look at the bytes around each costs less than a
 * search per prefix, because a prefix starting with a common letter makes `indexOf` stop often.
 */
const underscoreTokens: Rule = {
  kinds: ["github_token", "stripe_secret_key", "stripe_restricted_key", "stripe_webhook_secret"],
  anchors: ["_"],
  match(b, at) {
    // Most underscores are in snake_case names: one look at the letter before rules them out.
    switch (b[at - 1]) {
      case 0x70: // p
      case 0x6f: // o
      case 0x75: // u
      case 0x73: // s
      case 0x72: // r
        return b[at - 3] === 0x67 && b[at - 2] === 0x68 ? githubClassic(b, at - 3) : null;
      case 0x62: // b
        return startsWith(b, at - 6, "github") && startsWith(b, at + 1, "pat_") ? githubFineGrained(b, at - 6) : null;
      case 0x6b: // k
        return startsWith(b, at + 1, "live_") || startsWith(b, at + 1, "test_") ? stripeKey(b, at - 1) : null;
      case 0x63: // c
        return startsWith(b, at - 5, "whsec") ? stripeWebhook(b, at - 5) : null;
      default:
        return null;
    }
  },
};

/** `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_`; `at` is the `k`. */
function stripeKey(b: Uint8Array, at: number): Span | null {
  const first = b[at - 1];
  if ((first !== 0x73 && first !== 0x72) || !boundaryBefore(b, at - 1)) return null;
  const start = at + 7;
  const length = runOf(b, start, ALNUM, 248);
  if (length < 10 || length > 247 || !boundaryAfter(b, start + length, WORD)) return null;
  return { kind: first === 0x73 ? "stripe_secret_key" : "stripe_restricted_key", start: at - 1, end: start + length };
}

/** AWS access key ids: a four-letter prefix and 16 more upper-case letters and digits, exactly. */
const awsAccessKeyId: Rule = {
  kinds: ["aws_access_key_id"],
  anchors: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
  match(b, at) {
    if (!boundaryBefore(b, at, ALNUM)) return null;
    const end = at + 20;
    if (runOf(b, at, UPPER_ALNUM, 21) !== 20 || !boundaryAfter(b, end)) return null;
    return { kind: "aws_access_key_id", start: at, end };
  },
};

const PEM_LABEL = byteClass("A-Z0-9 ");
const PEM_END = Buffer.from("-----END ");
const QUOTE_NEEDLE = Buffer.from('"');

/** `-----BEGIN … PRIVATE KEY-----` through its END line; to the end of the string when it was cut off. */
const privateKey: Rule = {
  kinds: ["private_key"],
  anchors: ["-----BEGIN "],
  match(b, at) {
    const labelStart = at + 11;
    const label = runOf(b, labelStart, PEM_LABEL, 64);
    const header = labelStart + label;
    if (!startsWith(b, header, "-----")) return null;
    const text = new TextDecoder().decode(b.subarray(labelStart, header));
    if (!/PRIVATE KEY( BLOCK)?$/.test(text)) return null;
    const limit = Math.min(b.length, header + MAX_PEM_BYTES);
    // A quote ends the string the key is in (a PEM block has none): the key never spans it. Both
    // searches are remembered (secret-stretches.ts): keys one after another cost one pass.
    const found = nextIndex(b, QUOTE_NEEDLE, header);
    const quote = found === -1 || found >= limit ? -1 : found;
    const blockEnd = quote === -1 ? limit : quote;
    const endLine = nextIndex(b, PEM_END, header);
    if (endLine !== -1 && endLine < blockEnd) {
      const labelEnd = endLine + PEM_END.length + runOf(b, endLine + PEM_END.length, PEM_LABEL, 80);
      if (labelEnd + 5 <= blockEnd && startsWith(b, labelEnd, "-----")) return { kind: "private_key", start: at, end: labelEnd + 5 };
    }
    // Cut off (a truncated file, a shortened output): everything to the end of the string goes,
    // but not the backslashes before its quote, which belong to the escape that ends it.
    if (quote === -1) return { kind: "private_key", start: at, end: limit };
    return { kind: "private_key", start: at, end: quote - backslashesBefore(b, quote) };
  },
};

/** `AccountKey=…` / `SharedAccessKey=…` in an Azure connection string; found at its `=`, which the assignment rules search anyway. */
const azureKey: Rule = {
  kinds: ["azure_storage_key", "azure_shared_access_key"],
  anchors: ["="],
  match(b, at) {
    if (b[at - 1] !== 0x79) return null;
    const kind = startsWith(b, at - 10, "AccountKey") && boundaryBefore(b, at - 10) ? "azure_storage_key" : startsWith(b, at - 15, "SharedAccessKey") && boundaryBefore(b, at - 15) ? "azure_shared_access_key" : null;
    if (!kind) return null;
    const start = at + 1;
    const length = runOf(b, start, BASE64, 257);
    if (length < 20 || length > 256) return null;
    return { kind, start, end: start + length };
  },
};

const SAS = byteClass("A-Za-z0-9%+/=");

/** `sig=` of a shared access signature, in a URL's query; found at its `=`. */
const azureSas: Rule = {
  kinds: ["azure_sas_signature"],
  anchors: ["="],
  match(b, at) {
    const before = b[at - 4];
    if (b[at - 1] !== 0x67 || !startsWith(b, at - 3, "sig") || (before !== 0x3f && before !== 0x26)) return null;
    const start = at + 1;
    const length = runOf(b, start, SAS, 257);
    if (length < 16 || length > 256) return null;
    return { kind: "azure_sas_signature", start, end: start + length };
  },
};

const ENTRA = byteClass("A-Za-z0-9_~.");
const ENTRA_BODY = byteClass("A-Za-z0-9_~.-");

/** Entra ID client secrets: three characters, a digit, `Q~`, then 31 to 34 more. */
const azureClientSecret: Rule = {
  kinds: ["azure_client_secret"],
  anchors: ["Q~"],
  match(b, at) {
    const start = at - 4;
    const digit = b[at - 1] ?? 0;
    if (start < 0 || digit < 0x30 || digit > 0x39 || runBefore(b, at - 1, ENTRA, 3) !== 3) return null;
    if (!boundaryBefore(b, start, ENTRA)) return null;
    const length = runOf(b, at + 2, ENTRA_BODY, 35);
    if (length < 31 || length > 34) return null;
    return { kind: "azure_client_secret", start, end: at + 2 + length };
  },
};

/** `sk-`: Anthropic (`sk-ant-…`) or OpenAI (`sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`, or 32–64 letters and digits). */
const skKeys: Rule = {
  kinds: ["anthropic_api_key", "openai_api_key"],
  anchors: ["sk-"],
  match(b, at) {
    if (!boundaryBefore(b, at, BASE64URL)) return null;
    const rest = at + 3;
    const prefix = ["ant-", "proj-", "svcacct-", "admin-"].find((text) => startsWith(b, rest, text));
    if (prefix) {
      const start = rest + prefix.length;
      const length = runOf(b, start, BASE64URL, MAX_TOKEN + 1);
      if (length < 32 || length > MAX_TOKEN) return null;
      return { kind: prefix === "ant-" ? "anthropic_api_key" : "openai_api_key", start: at, end: start + length };
    }
    const length = runOf(b, rest, ALNUM, 65);
    if (length < 32 || length > 64 || !boundaryAfter(b, rest + length, BASE64URL)) return null;
    return { kind: "openai_api_key", start: at, end: rest + length };
  },
};

const SLACK = byteClass("A-Za-z0-9-");

/** `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe-` and app-level `xapp-` tokens. */
const slackToken: Rule = {
  kinds: ["slack_token"],
  anchors: ["xox", "xapp-"],
  match(b, at) {
    if (!boundaryBefore(b, at)) return null;
    let start: number;
    if (b[at + 1] === 0x61) start = at + 5;
    else if ("abprse".includes(String.fromCharCode(b[at + 3] ?? 0)) && b[at + 4] === 0x2d) start = at + 5;
    else return null;
    const length = runOf(b, start, SLACK, MAX_TOKEN + 1);
    if (length < 10 || length > MAX_TOKEN) return null;
    return { kind: "slack_token", start: at, end: start + length };
  },
};

const WEBHOOK_PATH = byteClass("A-Za-z0-9/_-");

/**
 * The secret path of `https://hooks.slack.com/services/T…/B…/…` (the host stays readable); found at
 * its `://`, or at `:\/\/` when a serialiser escaped every slash (PHP's `json_encode`, some Java ones).
 */
const slackWebhook: Rule = {
  kinds: ["slack_webhook"],
  anchors: ["://", ":\\/\\/"],
  match(b, at) {
    const escaped = b[at + 1] === BACKSLASH;
    const slash = escaped ? "\\/" : "/";
    const host = at + (escaped ? 5 : 3);
    if (!startsWith(b, host, `hooks.slack.com${slash}`)) return null;
    const start = host + 15 + slash.length;
    const section = ["services", "workflows", "triggers"].find((text) => startsWith(b, start, `${text}${slash}`));
    if (!section) return null;
    const pathStart = start + section.length + slash.length;
    const length = runOf(b, pathStart, WEBHOOK_PATH, 257);
    if (length < 16 || length > 256) return null;
    return { kind: "slack_webhook", start: pathStart, end: pathStart + length };
  },
};

/** Three base64url segments, the first two JSON objects (`eyJ` is `{"`); the signature may be empty. */
const jwt: Rule = {
  kinds: ["jwt"],
  anchors: ["eyJ"],
  match(b, at) {
    if (!boundaryBefore(b, at, BASE64URL)) return null;
    const header = runOf(b, at, BASE64URL, MAX_JWT_SEGMENT + 1);
    let i = at + header;
    if (header < 10 || header > MAX_JWT_SEGMENT || b[i] !== 0x2e) return null;
    const payload = runOf(b, i + 1, BASE64URL, MAX_JWT_SEGMENT + 1);
    if (payload < 10 || payload > MAX_JWT_SEGMENT || b[i + 1 + payload] !== 0x2e) return null;
    i += 2 + payload;
    const signature = runOf(b, i, BASE64URL, MAX_JWT_SEGMENT + 1);
    if (signature > MAX_JWT_SEGMENT || !boundaryAfter(b, i + signature, BASE64URL)) return null;
    return { kind: "jwt", start: at, end: i + signature };
  },
};

const GITLAB = byteClass("A-Za-z0-9_.-");

export const SHAPE_RULES: readonly Rule[] = [
  awsAccessKeyId,
  prefixed("gcp_api_key", "AIza", BASE64URL, 35, 35),
  privateKey,
  azureKey,
  azureSas,
  azureClientSecret,
  underscoreTokens,
  prefixed("gitlab_token", "glpat-", GITLAB, 20, 255),
  slackToken,
  slackWebhook,
  skKeys,
  jwt,
];
