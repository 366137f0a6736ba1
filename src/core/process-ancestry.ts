/**
 * The processes a process descends from, nearest first: how a shim whose agent passes it no
 * environment finds the `thoughtgate wrap` it runs under (docs/architecture.md, "How a shim finds
 * its session"). Linux reads each parent from `/proc/<pid>/stat` (a few small reads); macOS has no
 * /proc, so one `ps` lists every process's parent at once (a few milliseconds, paid only when a
 * wrap is running and the agent passed no session).
 */
import { readProcStat } from "./proc-stat.ts";

/** More ancestors than any agent's chain of launchers; guards against a cycle in a racing `ps`. */
const MAX_DEPTH = 64;

/** The ancestors of `pid`, its parent first, up to (and without) pid 1. Empty when none can be read. */
export function ancestorsOf(pid: number): number[] {
  const parentOf = process.platform === "linux" ? linuxParent : psParents();
  const chain: number[] = [];
  let current = pid;
  while (chain.length < MAX_DEPTH) {
    const parent = parentOf(current);
    if (parent === null || parent <= 1 || chain.includes(parent)) break;
    chain.push(parent);
    current = parent;
  }
  return chain;
}

function linuxParent(pid: number): number | null {
  const stat = readProcStat(pid);
  return stat === null || !Number.isInteger(stat.ppid) ? null : stat.ppid;
}

/** Every process's parent, read once with `ps` (macOS and other systems without /proc). */
function psParents(): (pid: number) => number | null {
  const ps = Bun.spawnSync(["ps", "-A", "-o", "pid=", "-o", "ppid="], { stdout: "pipe", stderr: "ignore", env: { PATH: "/bin:/usr/bin", LC_ALL: "C" } });
  const parents = new Map<number, number>();
  if (ps.exitCode === 0) {
    for (const line of ps.stdout.toString().split("\n")) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (Number.isInteger(pid) && Number.isInteger(ppid)) parents.set(pid as number, ppid as number);
    }
  }
  return (pid) => parents.get(pid) ?? null;
}
