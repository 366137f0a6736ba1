/**
 * This thread's CPU time (Linux `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through bun:ffi): on a
 * shared machine a wall-clock p99 of a 0.1 ms call measures the scheduler handing the core to other
 * processes; the thread's own CPU time leaves that out. Reading it costs ~1 µs.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";

const CLOCK_THREAD_CPUTIME_ID = 3;
const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
const timespec = new BigInt64Array(2);
const timespecPtr = ptr(timespec);

/** Milliseconds of CPU this thread has used. */
export function threadCpuMs(): number {
  if (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, timespecPtr) !== 0) throw new Error("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
  return Number(timespec[0]) * 1e3 + Number(timespec[1]) / 1e6;
}
