/**
 * Attack: a peer that sends requests the shim must answer, and never reads the answers. The
 * answers used to pile up in the shim's memory without bound (620 MB for the 48 MiB below; 857 MB
 * seen in a longer run). The shim now stops reading a sender that has left 16 MiB of answers
 * unread, so its memory stays bounded and the sender is slowed down instead.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir, waitFor } from "../../support/harness.ts";

const binary = requireBinary();

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`)) ?? "";
  return Number(line.split(/\s+/)[1] ?? 0);
}

/** Bytes the process has read so far (all its reads: here, almost all of them its stdin). */
function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
}

/** The main thread's scheduler state: `R` running or waiting for a core, `S` asleep (waiting for I/O). */
function state(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

const MiB = 1024 * 1024;
/** What a shim reads between two polls when it reads no input: far less than one chunk of a pipe. */
const HOUSEKEEPING_BYTES = 4096;

describe("answers nobody reads", () => {
  test("a flood of requests whose answers are never read: the shim stops reading and its memory stays bounded", async () => {
    using dir = tempDir();
    // Both of the shim's pipes are FIFOs: its stdout one the test holds open and never reads (a real
    // unread pipe), its stdin one fed by `cat` from a file of 48 MiB of requests, so what the shim
    // reads shows in its /proc/PID/io and `cat` ends only if the shim took everything.
    const out = join(dir.path, "shim-stdout");
    const input = join(dir.path, "shim-stdin");
    const flood = join(dir.path, "flood.jsonl");
    for (const fifo of [out, input]) expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    writeFileSync(flood, line.repeat(Math.floor((48 * MiB) / line.length)));
    const readEnd = openSync(out, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeEnd = openSync(out, constants.O_WRONLY);
    // A server that cannot start: the shim answers every request itself, without logging each one.
    const proc = Bun.spawn(["sh", "-c", 'exec "$0" shim --server-id gone -- /nonexistent/thoughtgate-test-server < "$1"', binary, input], {
      stdin: "ignore",
      stdout: writeEnd,
      stderr: "ignore",
    });
    closeSync(writeEnd);
    const feeder = Bun.spawn(["sh", "-c", 'exec cat "$0" > "$1"', flood, input], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    let tookEverything = false;
    void feeder.exited.then(() => {
      tookEverything = true;
    });
    try {
      // Stopped, not slow: poll after poll the shim sleeps (waiting for I/O, not for a core on a busy
      // machine) having read nothing more of its input (a few bytes of its own housekeeping aside).
      // A reader that is only slow is running, or reads on, or takes it all.
      let last = -1;
      let steady = 0;
      await waitFor(
        async () => {
          const read = bytesRead(proc.pid);
          const asleep = state(proc.pid) === "S";
          steady = last >= 0 && read - last < HOUSEKEEPING_BYTES && asleep ? steady + 1 : 0;
          last = read;
          await Bun.sleep(100);
          return tookEverything || steady >= 10;
        },
        "the shim to stop reading",
        60_000,
      );
      expect(tookEverything).toBe(false);
      // What it read is bounded by the answers it may leave unread (16 MiB, src/shim/pump.ts), far from all 48 MiB.
      expect(bytesRead(proc.pid) / MiB).toBeLessThan(24);
      expect(status(proc.pid, "VmHWM") / 1024).toBeLessThan(250);
    } finally {
      feeder.kill("SIGKILL");
      proc.kill("SIGKILL");
      await Promise.all([feeder.exited, proc.exited]);
      closeSync(readEnd);
    }
  }, 120_000);
});
