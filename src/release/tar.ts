/**
 * A gzipped tarball holding one executable, byte-for-byte reproducible: fixed owner (0/0), mode
 * 0755 and a caller-chosen mtime. `Bun.Archive` writes 0644 and the current time, and a release
 * archive must carry the executable bit (Homebrew's `bin.install` and `tar -x` keep the mode).
 * Build-time only: nothing in `src/cli.ts` imports this.
 */

const BLOCK_BYTES = 512;

export type TarEntry = { name: string; bytes: Uint8Array; mode?: number; mtimeSeconds: number };

export function gzipTar(entry: TarEntry, level: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 = 9): Uint8Array {
  return Bun.gzipSync(tar(entry), { level });
}

/** POSIX ustar (pax-free): one regular file followed by the two zero blocks that end an archive. */
function tar({ name, bytes, mode = 0o755, mtimeSeconds }: TarEntry): Uint8Array<ArrayBuffer> {
  if (new TextEncoder().encode(name).length > 100) throw new Error(`tar entry name longer than 100 bytes: ${name}`);
  const header = new Uint8Array(BLOCK_BYTES);
  const put = (offset: number, length: number, text: string) => header.set(new TextEncoder().encode(text).subarray(0, length), offset);
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, "0")}\0`;
  put(0, 100, name);
  put(100, 8, octal(mode, 8));
  put(108, 8, octal(0, 8)); // uid
  put(116, 8, octal(0, 8)); // gid
  put(124, 12, octal(bytes.length, 12));
  put(136, 12, octal(Math.floor(mtimeSeconds), 12));
  put(148, 8, " ".repeat(8)); // checksum is computed over the header with this field as spaces
  put(156, 1, "0"); // regular file
  put(257, 6, "ustar\0");
  put(263, 2, "00");
  put(265, 32, "root");
  put(297, 32, "root");
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  put(148, 8, `${checksum.toString(8).padStart(6, "0")}\0 `);

  const dataBlocks = Math.ceil(bytes.length / BLOCK_BYTES) * BLOCK_BYTES;
  const out = new Uint8Array(BLOCK_BYTES + dataBlocks + 2 * BLOCK_BYTES);
  out.set(header, 0);
  out.set(bytes, BLOCK_BYTES);
  return out;
}
