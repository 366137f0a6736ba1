/**
 * Attack: a peer that sends requests the shim must answer, and never reads the answers. The
 * answers used to pile up in the shim's memory without bound (620 MB for the 48 MiB below; 857 MB
 * seen in a longer run). The shim now stops reading a sender that has left 16 MiB of answers
 * unread, so its memory stays bounded and the sender is slowed down instead.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir, waitFor } from "../../support/harness.ts";

const binary = requireBinary();

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`)) ?? "";
  return Number(line.split(/\s+/)[1] ?? 0);
}

describe("answers nobody reads", () => {
  test("a flood of requests whose answers are never read: the shim stops reading and its memory stays bounded", async () => {
    using dir = tempDir();
    // The shim's stdout is a FIFO the test holds open and never reads: a real unread pipe (a
    // `stdout: "pipe"` of Bun.spawn would be drained by this process).
    const out = join(dir.path, "shim-stdout");
    expect(Bun.spawnSync(["mkfifo", out]).exitCode).toBe(0);
    const readEnd = openSync(out, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeEnd = openSync(out, constants.O_WRONLY);
    // A server that cannot start: the shim answers every request itself, without logging each one.
    const proc = Bun.spawn([binary, "shim", "--server-id", "gone", "--", "/nonexistent/thoughtgate-test-server"], {
      stdin: "pipe",
      stdout: writeEnd,
      stderr: "ignore",
    });
    closeSync(writeEnd);
    try {
      const line = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
      const chunk = line.repeat(Math.floor((1024 * 1024) / line.length));
      for (let i = 0; i < 48; i++) proc.stdin.write(chunk);
      // All 48 MiB reach the shim only if it keeps reading a peer that never reads its answers.
      let tookEverything = false;
      void Promise.resolve(proc.stdin.flush()).then(
        () => {
          tookEverything = true;
        },
        () => {},
      );
      // Wait until the shim's memory stops changing: it stopped reading, or it took everything.
      let last = 0;
      let steady = 0;
      await waitFor(
        async () => {
          const rss = status(proc.pid, "VmRSS");
          steady = Math.abs(rss - last) < 2048 ? steady + 1 : 0;
          last = rss;
          await Bun.sleep(250);
          return steady >= 6;
        },
        "the shim's memory to settle",
        60_000,
      );
      expect(tookEverything).toBe(false);
      expect(status(proc.pid, "VmHWM") / 1024).toBeLessThan(250);
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
      closeSync(readEnd);
    }
  }, 120_000);
});
