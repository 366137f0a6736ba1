/**
 * Replace this process with another program (execve): same pid, same stdin, stdout and stderr, so
 * the agent that started a shim never sees the switch. A shim of a wrap session that runs another
 * version than this binary becomes that session's own binary this way (docs/architecture.md, "How a
 * shim finds its session"). Bun has no exec; libc's is called through `bun:ffi`, loaded only here.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { ThoughtGateError } from "./errors.ts";

/** Never returns: throws IO when the exec fails (the file is gone, not executable, …). */
export function replaceProcess(path: string, argv: readonly string[], env: NodeJS.ProcessEnv): never {
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
