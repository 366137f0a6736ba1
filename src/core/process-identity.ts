/**
 * A pid plus when that process started. The journal records both, so after a reboot or pid reuse a
 * stranger that happens to have the dead wrap's pid is not mistaken for it (and does not block
 * `unwrap` forever).
 */
import { readFileSync } from "node:fs";
import { isRunning, readProcStat } from "./proc-stat.ts";

/**
 * An opaque start stamp for a running process, or null when there is no such process (or only its
 * zombie). Linux: the boot id plus field 22 of /proc/<pid>/stat (start time in clock ticks since
 * boot). macOS: `ps -o lstart` (whole seconds, absolute, so it survives a reboot's reuse too).
 */
export function processStartId(pid: number): string | null {
  return process.platform === "linux" ? linuxStartId(pid) : psStartId(pid);
}

let ownStartId: string | null | undefined;

/**
 * This process's stamp, computed once (macOS pays for a `ps`). Read as any other process reads it:
 * under qemu's user-mode emulation (the linux-arm64 build tested on x86_64) `/proc/self/stat` and
 * `/proc/<own pid>/stat` are answered by qemu with a start time of its own making, and another
 * process would read the kernel's, so the stamp would never match; qemu does not recognise
 * `/proc//<pid>/stat`, which the kernel reads as the same file (measured with qemu-aarch64-static).
 */
export function ownProcessStartId(): string | null {
  if (ownStartId === undefined) ownStartId = process.platform === "linux" ? linuxStartId(`/${process.pid}`) : psStartId(process.pid);
  return ownStartId;
}

/** `run_start`'s `start_id`: this process's stamp, or nothing when it cannot be read. */
export function startIdField(): { start_id?: string } {
  const startId = ownProcessStartId();
  return startId === null ? {} : { start_id: startId };
}

/**
 * Whether the process that recorded `startId` still runs. Without a stamp there is nothing to tell
 * it from any other process that has the pid now (pid 1 always runs), so it never counts as the
 * same: a session, a service or a holder is trusted only by a stamp that matches.
 */
export function isSameProcessRunning(pid: number, startId: string | null): boolean {
  if (startId === null) return false;
  return processStartId(pid) === startId;
}

/**
 * Whether the process that recorded `startId` may still run: with no stamp, any live process with
 * the pid. Only for holding back a repair (the journal's holders): refusing to restore a config
 * under what may be a live wrap is the safe side there, never for trusting what a process wrote.
 */
export function mayStillRun(pid: number, startId: string | null): boolean {
  const now = processStartId(pid);
  if (now === null) return false;
  return startId === null || now === startId;
}

let bootId: string | undefined;

function linuxStartId(pid: number | string): string | null {
  const stat = readProcStat(pid);
  if (!isRunning(stat)) return null;
  bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  return `${bootId}:${stat.startTime}`;
}

function psStartId(pid: number): string | null {
  const ps = Bun.spawnSync(["ps", "-o", "stat=", "-o", "lstart=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore", env: { PATH: "/bin:/usr/bin", LC_ALL: "C" } });
  const line = ps.stdout.toString().trim();
  if (ps.exitCode !== 0 || line === "" || line.startsWith("Z")) return null;
  return line.slice(line.indexOf(" ") + 1).trim();
}
