/**
 * `SHA256SUMS` in the format `sha256sum` writes and `sha256sum -c` / `shasum -a 256 -c` read:
 * `<64 hex>  <file name>` per line, sorted by name. Build-time only.
 */

export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

export function formatSha256Sums(sums: ReadonlyMap<string, string>): string {
  return [...sums]
    .toSorted(([a], [b]) => a.localeCompare(b))
    .map(([name, hex]) => `${hex}  ${name}\n`)
    .join("");
}

/** name → hex. A `*` before the name (binary mode) is accepted; any other line shape is an error. */
export function parseSha256Sums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!match?.[1] || !match[2]) throw new Error(`not a SHA256SUMS line: ${JSON.stringify(line)}`);
    sums.set(match[2], match[1]);
  }
  return sums;
}
