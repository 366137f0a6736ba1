import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { readProcStat } from "./proc-stat.ts";

/**
 * Which process is at the other end of a loopback TCP connection, and whether it is a sibling:
 * this very ThoughtGate binary, running as this user, not being debugged, with nothing in its
 * environment that could change what it runs or whom it trusts over TLS. Linux only (`/proc`):
 * elsewhere nothing is a verified sibling, and callers refuse.
 *
 * Why: governance services side by side share one Slack app, and Slack hands each click to one of
 * the app's connections at random (docs/governance.md, Slack). A click that reached the wrong
 * session is handed on to the session that owns the task, and that session must know the click
 * came from a ThoughtGate that heard it from Slack, not from any process of the user's that found
 * the service (a prompt-injected agent's shell can read every file of the user's). A file or key
 * cannot prove that; the kernel can say which binary holds the other end of the socket.
 *
 * The same tables say which process asked the approvals API to decide a task, so the service can
 * tell a person's command from an agent's (governance/service/person-check.ts). Read from `/proc`
 * because Bun exposes no socket option that names a connection's peer.
 */

/**
 * Variables that change what a process loads or runs (a compiled Bun binary with BUN_BE_BUN runs
 * any script; BUN_INSPECT opens a debugger): a sibling runs with none.
 */
const UNTRUSTED_ENV = ["LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "BUN_OPTIONS", "NODE_OPTIONS", "BUN_BE_BUN", "BUN_INSPECT", "BUN_INSPECT_CONNECT_TO"];

/**
 * Variables that choose which TLS certificates a process trusts. Distributions set them to the
 * system's bundle (`/etc/ssl/certs/…`); one naming a file the user could write would let a process
 * of the user's trust its own certificate authority and put its own "Slack" in the middle. So each
 * must name a file or directory root owns and no one else may write, in a directory alike.
 */
const TRUST_ENV = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"];

const LISTEN = "0A";
const ESTABLISHED = "01";

/**
 * The pid among `candidates` that holds the loopback connection from port `fromPort` to port
 * `toPort` (the peer's end, as the side at `toPort` sees it), or null.
 */
export function pidOfConnection(fromPort: number, toPort: number, candidates: readonly number[]): number | null {
  const socket = findSocket((each) => each.state === ESTABLISHED && each.localLoopback && each.remoteLoopback && each.localPort === fromPort && each.remotePort === toPort);
  return socket === null ? null : (holdersOf(socket.inode, candidates)[0] ?? null);
}

/** The pid among `candidates` listening on loopback port `port`, or null. */
export function pidListeningOn(port: number, candidates: readonly number[]): number | null {
  const socket = findSocket((each) => each.state === LISTEN && each.localLoopback && each.localPort === port);
  return socket === null ? null : (holdersOf(socket.inode, candidates)[0] ?? null);
}

/** Who is at the other end of a connection to this process. */
export type Peer = {
  /** The uid that owns the connecting socket. */
  uid: number;
  /** Every process holding it (one, unless it was inherited or passed on). */
  pids: number[];
};

/**
 * Which local processes hold the client's end of a loopback connection to this process (its
 * ports: the client's and ours), with the uid that owns the socket. Measured on a 2-core box with
 * ~120 processes: 2–11 ms for the tables, 50–90 ms for the scan of every process; it runs only for
 * a person's decision, never for a shim's call. Null: not Linux, or the connection is not in the
 * tables (it closed while we looked).
 */
export function findPeer(clientPort: number, serverPort: number): Peer | null {
  const socket = findSocket((each) => each.localLoopback && each.remoteLoopback && each.localPort === clientPort && each.remotePort === serverPort);
  return socket === null ? null : { uid: socket.uid, pids: holdersOf(socket.inode, null) };
}

/** Why `pid` is not a sibling of this process, or null when it is (see above). */
export function notSibling(pid: number): string | null {
  if (process.platform !== "linux") return "processes can be verified on Linux only";
  try {
    const mine = statSync("/proc/self/exe");
    const theirs = statSync(`/proc/${pid}/exe`);
    if (mine.dev !== theirs.dev || mine.ino !== theirs.ino) return `pid ${pid} does not run this ThoughtGate binary`;
    if (process.getuid && statSync(`/proc/${pid}`).uid !== process.getuid()) return `pid ${pid} runs as another user`;
    const tracer = /^TracerPid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1];
    if (tracer !== "0") return `pid ${pid} is being traced`;
    const env = new Map(
      readFileSync(`/proc/${pid}/environ`, "latin1")
        .split("\0")
        .filter((entry) => entry.includes("="))
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)] as const),
    );
    const set = [...UNTRUSTED_ENV.filter((name) => env.has(name)), ...TRUST_ENV.filter((name) => env.has(name) && !rootsOnly(env.get(name) ?? ""))];
    if (set.length > 0) return `pid ${pid} runs with ${set.join(", ")} set`;
    return null;
  } catch (error) {
    return `pid ${pid} cannot be read (${(error as Error).message})`;
  }
}

/** Whether every path in `value` (colon-separated) is root's, writable by no one else, and so is the directory it is in. */
function rootsOnly(value: string): boolean {
  const paths = value.split(":").filter((path) => path !== "");
  return (
    paths.length > 0 &&
    paths.every((path) => {
      try {
        const real = realpathSync(path);
        return [real, dirname(real)].every((each) => {
          const stat = statSync(each);
          return stat.uid === 0 && (stat.mode & 0o022) === 0;
        });
      } catch {
        return false;
      }
    })
  );
}

/** One line of /proc/net/tcp or tcp6: its ends (port, and whether the address is loopback), its state, owner and inode. */
type Socket = { localPort: number; localLoopback: boolean; remotePort: number; remoteLoopback: boolean; state: string; uid: number; inode: string };

/**
 * The first TCP socket, IPv4 or IPv6, that `matches` accepts, or null (not Linux, or none). The
 * kernel's tables give the socket, not who holds it: that is `holdersOf`, by the inode.
 */
function findSocket(matches: (socket: Socket) => boolean): Socket | null {
  if (process.platform !== "linux") return null;
  for (const path of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let table: string;
    try {
      table = readFileSync(path, "latin1");
    } catch {
      continue;
    }
    for (const line of table.split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const [, local, remote, state, , , , uid, , inode] = line.trim().split(/\s+/);
      if (!local || !remote || !state || !uid || !inode || inode === "0") continue;
      const socket = { localPort: portOf(local), localLoopback: isLoopback(local), remotePort: portOf(remote), remoteLoopback: isLoopback(remote), state, uid: Number(uid), inode };
      if (matches(socket)) return socket;
    }
  }
  return null;
}

function portOf(endpoint: string): number {
  return Number.parseInt(endpoint.slice(endpoint.lastIndexOf(":") + 1), 16);
}

/**
 * Whether an address as /proc/net writes it (hex, each 32-bit word in the host's byte order, x86
 * and arm64 both little-endian) is loopback: 127.0.0.0/8 (`0100007F` is 127.0.0.1), `::1`, or
 * 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`).
 */
function isLoopback(endpoint: string): boolean {
  const address = endpoint.slice(0, endpoint.lastIndexOf(":"));
  if (address.length === 8) return address.endsWith("7F");
  if (address === "00000000000000000000000001000000") return true;
  return address.length === 32 && address.startsWith("0000000000000000FFFF0000") && address.endsWith("7F");
}

/** Which of `candidates` (every process we may read, when null) have the socket `inode` open. */
function holdersOf(inode: string, candidates: readonly number[] | null): number[] {
  const target = `socket:[${inode}]`;
  const pids = candidates ?? readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number);
  return pids.filter((pid) => {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      return false; // another user's process, or gone
    }
    return fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
      } catch {
        return false; // closed while we looked
      }
    });
  });
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
