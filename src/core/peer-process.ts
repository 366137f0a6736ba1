import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";

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

const LOOPBACK_HEX = "0100007F";
const LISTEN = "0A";
const ESTABLISHED = "01";

/**
 * The pid among `candidates` that holds the connection from 127.0.0.1:`fromPort` to
 * 127.0.0.1:`toPort` (the peer's end, as the side at `toPort` sees it), or null.
 */
export function pidOfConnection(fromPort: number, toPort: number, candidates: readonly number[]): number | null {
  const inode = socketInode((local, remote, state) => state === ESTABLISHED && local === endpoint(fromPort) && remote === endpoint(toPort));
  return inode === null ? null : holderOf(inode, candidates);
}

/** The pid among `candidates` listening on 127.0.0.1:`port`, or null. */
export function pidListeningOn(port: number, candidates: readonly number[]): number | null {
  const inode = socketInode((local, _remote, state) => state === LISTEN && local === endpoint(port));
  return inode === null ? null : holderOf(inode, candidates);
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

/** `0100007F:1F90` for 127.0.0.1:8080, as /proc/net/tcp writes it. */
function endpoint(port: number): string {
  return `${LOOPBACK_HEX}:${port.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The inode of the first IPv4 socket `matches` accepts (local, remote, state as /proc/net/tcp has them). */
function socketInode(matches: (local: string, remote: string, state: string) => boolean): string | null {
  let table: string;
  try {
    table = readFileSync("/proc/net/tcp", "latin1");
  } catch {
    return null;
  }
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [, local, remote, state] = fields;
    const inode = fields[9];
    if (local && remote && state && inode && inode !== "0" && matches(local, remote, state)) return inode;
  }
  return null;
}

/** Which of `candidates` has the socket `inode` open. */
function holderOf(inode: string, candidates: readonly number[]): number | null {
  const target = `socket:[${inode}]`;
  for (const pid of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // Closed while we looked.
      }
    }
  }
  return null;
}
