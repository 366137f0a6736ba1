/**
 * Replace this process with another program (execve): same pid, same stdin, stdout and stderr, so
 * the agent that started a shim never sees the switch. A shim of a wrap session that runs another
 * version than this binary becomes that session's own binary this way (docs/architecture.md, "How a
 * shim finds its session"). Bun has no exec; libc's is called through `bun:ffi`, loaded only here.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { closeSync, constants, fstatSync, openSync, statSync } from "node:fs";
import { dirname, normalize } from "node:path";
import { messageOf, ThoughtGateError } from "./errors.ts";
import { notOwnDirectory, stateDirOf } from "./user-environment.ts";

/**
 * Replace this process with a thoughtgate binary of the user's state directory `stateDir` (the
 * shim path or a session's pin: wrap/shim-path.ts), and nothing else (docs/architecture.md,
 * decision 14). Its path must be one of those two places, every directory of it the user's own,
 * the file a regular file (no link) writable by no one else; the file run is the one checked, by
 * device and inode: on Linux execve runs the open file itself (`/proc/self/fd/N`), elsewhere the
 * path must still name the same device and inode just before. Throws one line saying why not.
 */
export function replaceWithStateBinary(path: string, stateDir: string, argv: readonly string[], env: NodeJS.ProcessEnv): never {
  const refuse = (why: string) => new ThoughtGateError("CONFIG", `refusing to run ${path}: ${why}`);
  if (normalize(path) !== path || stateDirOf(path) !== stateDir) throw refuse(`it is not a thoughtgate binary of your state directory ${stateDir}/bin`);
  for (let dir = dirname(path); dir !== stateDir; dir = dirname(dir)) {
    const problem = notOwnDirectory(dir);
    if (problem) throw refuse(`${dir} ${problem}`);
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(messageOf(error));
  }
  try {
    const file = fstatSync(fd);
    const uid = process.getuid?.() ?? -1;
    if (!file.isFile()) throw refuse("it is not a regular file");
    if (file.uid !== uid && file.uid !== 0) throw refuse(`it belongs to uid ${file.uid}, neither this user nor root`);
    if ((file.mode & 0o022) !== 0) throw refuse(`others can write it (mode ${(file.mode & 0o777).toString(8)})`);
    if (process.platform === "linux") replaceProcess(`/proc/self/fd/${fd}`, argv, env);
    const now = statSync(path);
    if (now.dev !== file.dev || now.ino !== file.ino) throw refuse("it was replaced while being checked");
    replaceProcess(path, argv, env);
  } finally {
    closeSync(fd);
  }
}

/** Never returns: throws IO when the exec fails (the file is gone, not executable, …). */
function replaceProcess(path: string, argv: readonly string[], env: NodeJS.ProcessEnv): never {
  const lib = dlopen(process.platform === "darwin" ? "libSystem.B.dylib" : "libc.so.6", {
    execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  });
  const file = cString(path);
  const args = cStrings(argv);
  const vars = cStrings(Object.entries(env).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${value}`])));
  lib.symbols.execve(ptr(file), ptr(args.table), ptr(vars.table));
  // Only reached when execve failed; the strings above were kept alive until here.
  throw new ThoughtGateError("IO", `cannot run ${path} (execve failed)`);
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`, "utf8");
}

/** A NULL-terminated array of C strings; `strings` keeps their memory alive while `table` points at it. */
function cStrings(items: readonly string[]): { table: BigUint64Array; strings: Buffer[] } {
  const strings = items.map(cString);
  const table = new BigUint64Array(strings.length + 1);
  strings.forEach((bytes, i) => {
    table[i] = BigInt(ptr(bytes));
  });
  return { table, strings };
}
