import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { ThoughtGateError } from "../errors.ts";

/** The largest policy file (thoughtgate.yaml, a Cedar policy or schema) read: 1 MiB. */
export const MAX_POLICY_FILE_BYTES = 1024 * 1024;

/**
 * Read a policy file, never more than `MAX_POLICY_FILE_BYTES` (+1 to tell that it is larger).
 * A cloned repository can hold `thoughtgate.yaml -> /dev/zero` or a multi-gigabyte file, so the
 * read is bounded and only regular files are read: opening with O_NONBLOCK keeps a FIFO from
 * blocking the open itself, and the fstat after the open refuses devices, FIFOs and directories.
 * Text must be UTF-8: a replacement character silently standing in for bad bytes would change a
 * rule's glob. Throws CONFIG errors that name the file.
 */
export function readPolicyFile(file: string, what = "policy file"): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new ThoughtGateError("CONFIG", `${file}: cannot read the ${what}: ${(error as Error).message}`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new ThoughtGateError("CONFIG", `${file}: the ${what} is not a regular file`);
    const buffer = Buffer.allocUnsafe(MAX_POLICY_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > MAX_POLICY_FILE_BYTES) {
      throw new ThoughtGateError("CONFIG", `${file}: the ${what} is larger than ${MAX_POLICY_FILE_BYTES / 1024 / 1024} MiB, the most ThoughtGate reads`);
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      throw new ThoughtGateError("CONFIG", `${file}: the ${what} is not valid UTF-8`);
    }
  } catch (error) {
    if (error instanceof ThoughtGateError) throw error;
    throw new ThoughtGateError("CONFIG", `${file}: cannot read the ${what}: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
}
