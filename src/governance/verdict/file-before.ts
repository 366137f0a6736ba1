import { realpathSync } from "node:fs";
import { isAbsolute, sep } from "node:path";
import { readRegularFile } from "../../core/safe-open.ts";
import type { ReadExisting } from "./change-preview.ts";

/** The largest file whose old text a prompt diffs against a write; past it the write shows its arguments only. */
const MAX_DIFFED_FILE_BYTES = 64 * 1024;

/**
 * How a prompt reads the text a write would replace (change-preview.ts): only a regular file inside
 * the project (its real path, links resolved), at most MAX_DIFFED_FILE_BYTES of valid UTF-8. The
 * old text goes into a prompt that Slack and the approvals page show too: a call naming a file
 * outside the project (`~/.aws/credentials`) must not make ThoughtGate post that file's text, so
 * such a write shows its arguments and no diff. Opened without blocking (a FIFO never stalls it)
 * and checked on the open descriptor (src/core/safe-open.ts).
 */
export function projectFileReader(project: string): ReadExisting {
  let root: string;
  try {
    root = realpathSync(project);
  } catch {
    return () => null;
  }
  return (path) => {
    if (!isAbsolute(path)) return null;
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return null;
    }
    if (real !== root && !real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) return null;
    const read = readRegularFile(real, { follow: false, maxBytes: MAX_DIFFED_FILE_BYTES });
    if (!read.ok) return null;
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
    } catch {
      return null;
    }
  };
}
