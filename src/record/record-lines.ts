import { closeSync, openSync, readSync } from "node:fs";
import { CallAssembler, type Assembled, type RunInfo } from "./call-assembler.ts";

/**
 * Reading the record files for the index (record-index.ts): whole lines from where indexing
 * stopped, the lines of one call at their offsets, and the fingerprints that tell a file is still
 * the one that was indexed.
 */

/** Bytes of a record file read per batch (one write transaction each). */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** A line's first read at its offset; a longer line is read on until its newline. */
const LINE_READ_BYTES = 4096;

/**
 * The whole lines from `from` on, up to a batch's worth: a last line still being written waits for
 * the next update. A line longer than a batch (at most 10 MiB plus its envelope) is read whole.
 */
export function readWholeLines(fd: number, from: number): { text: string; bytes: number; more: boolean } {
  let size = CHUNK_BYTES;
  for (;;) {
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, from);
    const end = buffer.subarray(0, read).lastIndexOf(0x0a);
    if (end === -1) {
      if (read < size) return { text: "", bytes: 0, more: false };
      size *= 2;
      continue;
    }
    return { text: buffer.toString("utf8", 0, end + 1), bytes: end + 1, more: read === size };
  }
}

/** The line starting at `offset`, or null when there is none there (the file changed). */
function lineAt(fd: number, offset: number): string | null {
  const parts: Buffer[] = [];
  let at = offset;
  for (;;) {
    const buffer = Buffer.alloc(LINE_READ_BYTES);
    const read = readSync(fd, buffer, 0, buffer.length, at);
    if (read === 0) return null;
    const end = buffer.subarray(0, read).indexOf(0x0a);
    if (end !== -1) {
      parts.push(buffer.subarray(0, end));
      return Buffer.concat(parts).toString("utf8");
    }
    parts.push(buffer.subarray(0, read));
    at += read;
  }
}

/** A hash of the bytes [from, to) of the file ("short" when it no longer has them). */
export function fingerprint(fd: number, from: number, to: number): string {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  const read = buffer.length === 0 ? 0 : readSync(fd, buffer, 0, buffer.length, from);
  if (read !== buffer.length) return "short";
  return Bun.hash(buffer).toString(16);
}

/**
 * One call assembled again from its lines in the record (`path`, at `lines`), or null when they are
 * not there as indexed (not a line, not JSON, not that call).
 */
export function callFromLines(fd: number, lines: number[], place: { path: string; session: string | null; callId: string; loadRun: (runId: string, server: string) => RunInfo | null }): Assembled | null {
  const assembler = new CallAssembler({ session: place.session, fileKey: place.path, loadCall: () => null, loadRun: place.loadRun });
  for (const offset of lines) {
    const line = lineAt(fd, offset);
    if (line === null) return null;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return null;
    }
    if (event === null || typeof event !== "object") return null;
    assembler.add(event as Record<string, unknown>, offset);
  }
  const call = assembler.changed.get(place.callId);
  return call ? { call, lines } : null;
}

/** Open a record file for reading, or null when it is gone. */
export function openRecord(path: string): number | null {
  try {
    return openSync(path, "r");
  } catch {
    return null;
  }
}

export { closeSync };
