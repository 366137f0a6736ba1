import { readdirSync, readFileSync } from "node:fs";
import { bestEffort } from "./errors.ts";

/** The fields of Linux `/proc/<pid>/stat` that ThoughtGate reads. */
export type ProcStat = {
  /** R, S, D, Z (zombie), X (dead), … */
  state: string;
  ppid: number;
  pgrp: number;
  /** Field 7: the controlling terminal's device number (0: none). */
  ttyNr: number;
  /** Field 8: the process group in the foreground of that terminal (-1: none). */
  tpgid: number;
  /** Field 22: start time in clock ticks since boot. */
  startTime: string;
};

/**
 * Read `/proc/<pid>/stat` (Linux only); null when the process is gone. The command name in
 * parentheses may hold spaces and parentheses, so fields are counted after its last `)`.
 */
export function readProcStat(pid: number | string): ProcStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  // After ") ": field 3 (state) is fields[0], so field N is fields[N - 3].
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "?", ppid: Number(fields[1]), pgrp: Number(fields[2]), ttyNr: Number(fields[4]), tpgid: Number(fields[5]), startTime: fields[19] ?? "?" };
}

/** A zombie or dead entry is no running process. */
export function isRunning(stat: ProcStat | null): stat is ProcStat {
  return stat !== null && stat.state !== "Z" && stat.state !== "X";
}

/**
 * Whether any process of group `pgid` is still running. Signal 0 also counts zombies, and a
 * grandchild orphaned by the server stays a zombie forever where PID 1 does not reap (containers),
 * so on Linux we read /proc and skip them. The group id cannot be reused while any member exists.
 */
export function groupHasLiveMembers(pgid: number): boolean {
  if (!bestEffort(() => process.kill(-pgid, 0))) return false;
  if (process.platform !== "linux") return true;
  for (const entry of readdirSync("/proc")) {
    const code = entry.charCodeAt(0);
    if (code < 0x30 || code > 0x39) continue;
    const stat = readProcStat(entry); // null: exited while we looked
    if (isRunning(stat) && stat.pgrp === pgid) return true;
  }
  return false;
}


/** Whether process `pid` is running (not gone, not a zombie). */
export function isProcessRunning(pid: number): boolean {
  if (process.platform === "linux") return isRunning(readProcStat(pid));
  return bestEffort(() => process.kill(pid, 0));
}

/**
 * A process's command line from `/proc/<pid>/cmdline` (Linux only); null elsewhere, when the
 * process is gone, or when it is not ours to read.
 */
export function readProcCmdline(pid: number): string[] | null {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (words.at(-1) === "") words.pop();
    return words.length > 0 ? words : null;
  } catch {
    return null;
  }
}
