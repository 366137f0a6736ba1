/**
 * The text of the bench server's `blob` tool: what a file-reading tool returns, source code and
 * prose in turn, the same on every run. With `secrets`, fake credentials in real formats are spread
 * through it (one group every 64 KiB: a GitHub token in code, a password in a .env line, a
 * database URL with a password), assembled here so the repository holds none of them whole.
 */
const LINES = [
  "import { readFileSync } from \"node:fs\";",
  "export function parseConfig(path: string, options = { strict: true }): Config {",
  "  const text = readFileSync(path, \"utf8\"); // the caller checked the size",
  "  if (text.length === 0) throw new Error(`empty config: ${path}`);",
  "  return options.strict ? validate(JSON.parse(text)) : (JSON.parse(text) as Config);",
  "}",
  "The deployment guide explains how the service reads its settings at start-up, and why a",
  "missing value stops it with a clear message instead of falling back to a default.",
  "| name | default | meaning |",
  "| timeout | 30s | how long a request may take before it is cancelled |",
  "const retries = Number(process.env.RETRIES ?? 3), backoff = 250; // ms",
  "for (const [key, value] of Object.entries(settings)) log.debug(`${key} = ${String(value)}`);",
];

const join = (...parts: string[]) => parts.join("");

function secretGroup(n: number): string {
  const tail = String(n).padStart(6, "0");
  return [
    `const client = new Octokit({ auth: "${join("gh", "p_", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hgf", tail)}" });`,
    `DB_PASSWORD=${join("Hunter", tail, "-x")}`,
    `DATABASE_URL=postgres://app:${join("pa55", tail)}@db.internal:5432/prod`,
  ].join("\n");
}

/** How long `text` is once written as a JSON string (quotes, backslashes and newlines take two bytes). */
function escapedLength(text: string): number {
  let length = text.length;
  for (const c of text) if (c === '"' || c === "\\" || c === "\n") length += 1;
  return length;
}

/** ASCII text that takes at most `bytes` bytes inside a JSON string, whole lines only. */
export function blobText(bytes: number, secrets: boolean): string {
  const parts: string[] = [];
  let length = 0;
  let line = 0;
  let nextGroup = 0;
  for (;;) {
    let piece = `${LINES[line % LINES.length]}\n`;
    if (secrets && length >= nextGroup) {
      piece = `${secretGroup(nextGroup / 65536)}\n${piece}`;
      nextGroup += 65536;
    }
    const escaped = escapedLength(piece);
    if (length + escaped > bytes) break;
    parts.push(piece);
    length += escaped;
    line += 1;
  }
  return parts.join("");
}
