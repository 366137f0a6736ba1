import { readFileSync } from "node:fs";

/** The fields of Linux `/proc/<pid>/stat` that ThoughtGate reads. */
export type ProcStat = {
  /** R, S, D, Z (zombie), X (dead), … */
  state: string;
  ppid: number;
  pgrp: number;
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
  return { state: fields[0] ?? "?", ppid: Number(fields[1]), pgrp: Number(fields[2]), startTime: fields[19] ?? "?" };
}

/** A zombie or dead entry is no running process. */
export function isRunning(stat: ProcStat | null): stat is ProcStat {
  return stat !== null && stat.state !== "Z" && stat.state !== "X";
}
