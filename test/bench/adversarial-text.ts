/**
 * Text built against the secret scanner (src/telemetry/secret-scan.ts): for each rule, the input
 * that makes it look furthest ahead at every anchor and then give up, in 60 KB blocks (a look
 * ahead goes at most 64 KiB), one rule's block after another. A scanner that reads a stretch again
 * for each anchor inside it takes seconds per MiB of this; a linear one about as long as on prose.
 * The credential-like parts are assembled here so the repository holds none whole.
 */
const BLOCK_BYTES = 60_000;

const join = (...parts: string[]) => parts.join("");

/** [what it attacks, the unit repeated over a block, what ends the block]. */
export const ADVERSARIAL_UNITS: ReadonlyArray<readonly [string, string, string]> = [
  ["an assignment whose value runs into code", "token=", "("],
  ["a quoted assignment with no closing quote", "token='x", "\\n"],
  ["a YAML key per line", "\\npassword: a", ""],
  ["a map's members on one line, single-quoted values never closed", "{'password': 'x", "\\n"],
  ["a map's members on one line, glued key names", ", newpassword: a", ""],
  ["a JSON key named like a credential, its string never closed", '\\"password\\":\\"', ""],
  ["a Slack token longer than any", "xoxb-", ""],
  ["an Anthropic key longer than any", "sk-ant-", ""],
  ["JWT-looking segments", "eyJhbGciOiJIUzI1.", ""],
  ["private key blocks, the string's end far on", join("-----BEGIN ", "RSA PRIVATE KEY-----\\n-----END RSA PRIVATE KEY-----"), ""],
  ["URL user names with no password", "https://u:", ""],
  ["Bearer with no token", "Bearer ", ""],
  ["token prefixes with no token", join("gh", "p_"), ""],
  ["Authorization headers", "Authorization: x", ""],
  ["escaped slashes", "\\/", ""],
  ["backslashes before quotes", '\\\\\\\\\\\\\\"', ""],
];

/** About `bytes` of it (JSON string content: escapes as they appear on the wire). */
export function adversarialText(bytes: number): string {
  const blocks = ADVERSARIAL_UNITS.map(([, unit, end]) => unit.repeat(Math.floor((BLOCK_BYTES - end.length) / unit.length)) + end);
  let text = "";
  for (let i = 0; text.length < bytes; i++) text += blocks[i % blocks.length];
  // Cut whole: never between a backslash and what it escapes.
  return text.slice(0, bytes).replace(/\\+$/, "");
}
