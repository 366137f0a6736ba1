import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { readProcStat } from "../../core/proc-stat.ts";

/**
 * Which local process is at the other end of a loopback connection to the service, read from Linux
 * `/proc` (the only place it can be read without help from the kernel's socket options, which Bun
 * does not expose on a `Bun.serve` request): the connection's socket is found in `/proc/net/tcp`
 * (or `tcp6`) by its two ports, with the uid that owns it, and its holders by scanning every
 * process's file descriptors for that socket. Measured on a 2-core box with ~120 processes: 2–11 ms
 * for the table, 50–90 ms for the scan; it runs only for a person's decision, never for a shim's call.
 */
export type Peer = {
  /** The uid that owns the connecting socket. */
  uid: number;
  /** Every process holding it (one, unless it was inherited or passed on). */
  pids: number[];
};

/** Null: not Linux, or the connection is not in the table (it closed while we looked). */
export function findPeer(clientPort: number, serverPort: number): Peer | null {
  if (process.platform !== "linux") return null;
  const socket = socketOf(clientPort, serverPort);
  return socket ? { uid: socket.uid, pids: holdersOf(socket.inode) } : null;
}

/** The client side's line: local port = the client's, remote port = ours. */
function socketOf(clientPort: number, serverPort: number): { inode: string; uid: number } | null {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (portOf(fields[1]) === clientPort && portOf(fields[2]) === serverPort) return { inode: fields[9] ?? "", uid: Number(fields[7]) };
    }
  }
  return null;
}

function portOf(address: string | undefined): number {
  return Number.parseInt(address?.slice(address.lastIndexOf(":") + 1) ?? "", 16);
}

function holdersOf(inode: string): number[] {
  const wanted = `socket:[${inode}]`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const code = entry.charCodeAt(0);
    if (code < 0x30 || code > 0x39) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target === wanted) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

/** Whether `pid` is `ancestor` or runs below it (a parent chain read from /proc). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  let current = pid;
  for (let depth = 0; depth < 4096 && current > 1; depth++) {
    if (current === ancestor) return true;
    const stat = readProcStat(current);
    if (!stat) return false;
    current = stat.ppid;
  }
  return current === ancestor;
}

/** Whether `pid` has a controlling terminal and is in the group in its foreground (what a person typing there runs). */
export function inForegroundOfTerminal(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && stat.ttyNr !== 0 && stat.tpgid > 0 && stat.tpgid === stat.pgrp;
}
