/**
 * Attack: a server that reads every request and answers none (stuck, or hostile). Each request the
 * shim forwards waits for its answer, and the shim held every one: 300,000 unanswered ids grew it
 * to 240-350 MB, and ids of 1 MiB each grew it by a MiB per request (265 MB for 200). Now what may
 * wait is bounded, in number and in the characters its ids and names hold, and a request past it
 * gets a clear error at once instead of joining the wait (docs/governance.md, "Error codes": -31003).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import { RawAgent, type Received } from "../../support/raw-agent.ts";

requireBinary();

/** A server that reads everything and never writes a line. */
const SILENT_SERVER = ["--server-id", "silent", "--", "sh", "-c", "exec cat > /dev/null"];
const MAX_PENDING_REQUESTS = 10_000;

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:")) ?? "";
  return Number(line.split(/\s+/)[1] ?? 0) / 1024;
}

/** Send pings with ids `from` to `to` (exclusive), in batches the pipe takes at once. */
function pings(agent: RawAgent, from: number, to: number, id: (n: number) => number | string = (n) => n): void {
  for (let start = from; start < to; start += 1000) {
    let batch = "";
    for (let n = start; n < Math.min(to, start + 1000); n += 1) batch += `${JSON.stringify({ jsonrpc: "2.0", id: id(n), method: "ping" })}\n`;
    agent.write(batch);
  }
}

describe("a server that never answers", () => {
  test("300,000 unanswered requests: past 10,000 waiting each is refused at once with a clear error, and the shim stays small", async () => {
    const agent = new RawAgent(SILENT_SERVER);
    try {
      pings(agent, 0, MAX_PENDING_REQUESTS);
      // One more than may wait: refused at once, naming the server that does not answer.
      agent.send({ jsonrpc: "2.0", id: "one-too-many", method: "ping" });
      const refused = await agent.next(60_000);
      expect(refused).toEqual({
        jsonrpc: "2.0",
        id: "one-too-many",
        error: {
          code: -31003,
          message: `ThoughtGate refused the request: ${MAX_PENDING_REQUESTS} requests are already waiting for an answer from MCP server "silent"; answer or cancel some first`,
          data: { gate: "transport", server_id: "silent", reason: `${MAX_PENDING_REQUESTS} requests are already waiting for an answer from MCP server "silent"` },
        },
      });
      // None of the first 10,000 was answered (they wait on the server); the rest of 300,000 are refused one by one.
      pings(agent, MAX_PENDING_REQUESTS, 300_000);
      let answered: Received | undefined;
      for (let n = MAX_PENDING_REQUESTS; n < 300_000; n += 1) {
        answered = await agent.next(60_000);
        if (answered.id !== n || answered.error?.code !== -31003) break;
      }
      expect(answered).toMatchObject({ id: 299_999, error: { code: -31003 } });
      expect(agent.remaining()).toEqual([]);
      // The security check's line for a shim under this attack (docs/benchmarks.md has the figure),
      // once the collector has had the garbage of parsing the flood.
      await waitFor(() => rssMiB(agent.proc.pid) < 200, "the shim to settle under 200 MB", 30_000);
      // Logged once, not once per refusal.
      expect(agent.stderr.split("refusing agent to server requests").length - 1).toBeLessThanOrEqual(1);
    } finally {
      agent.proc.kill();
      await agent.exit();
    }
  }, 180_000);

  test("ids of 1 MiB each: the ids waiting are bounded too (16 MiB), the rest refused, so the shim does not grow by a MiB per request", async () => {
    const agent = new RawAgent(SILENT_SERVER);
    try {
      const pad = "x".repeat(1024 * 1024);
      pings(agent, 0, 200, (n) => `${n}-${pad}`);
      const refused: number[] = [];
      for (;;) {
        const answer = await agent.next(60_000);
        expect(answer.error?.code).toBe(-31003);
        expect(answer.error?.message).toContain("of ids and names");
        refused.push(Number.parseInt(String(answer.id), 10));
        if (refused.at(-1) === 199) break;
      }
      // The first 15 wait for the server (15 MiB of ids); every later one was refused.
      expect(refused).toEqual(Array.from({ length: 185 }, (_, i) => i + 15));
      await waitFor(() => rssMiB(agent.proc.pid) < 200, "the shim to settle under 200 MB", 30_000);
    } finally {
      agent.proc.kill();
      await agent.exit();
    }
  }, 180_000);

  test("the other way: a server that asks the agent 10,001 questions nobody answers gets the error for the last one, and the agent only 10,000", async () => {
    using dir = tempDir();
    const heard = join(dir.path, "server-stdin.jsonl");
    // The server writes its requests (roots/list, as a server may ask the agent) and records what comes back.
    const server = `i=0; while [ $i -le ${MAX_PENDING_REQUESTS} ]; do echo '{"jsonrpc":"2.0","id":'$i',"method":"roots/list"}'; i=$((i+1)); done; exec cat > "$0"`;
    const agent = new RawAgent(["--server-id", "asker", "--", "sh", "-c", server, heard]);
    try {
      const asked: Received[] = [];
      while (asked.length < MAX_PENDING_REQUESTS) asked.push(await agent.next(60_000));
      expect(asked.every((request, n) => request.method === "roots/list" && request.id === n)).toBe(true);
      const refusal = await waitFor(() => (existsSync(heard) && readFileSync(heard, "utf8").trim()) || null, "the server to hear back");
      expect(JSON.parse(refusal)).toEqual({
        jsonrpc: "2.0",
        id: MAX_PENDING_REQUESTS,
        error: {
          code: -31003,
          message: `ThoughtGate refused the request: ${MAX_PENDING_REQUESTS} requests are already waiting for an answer from the agent; answer or cancel some first`,
          data: { gate: "transport", server_id: "asker", reason: `${MAX_PENDING_REQUESTS} requests are already waiting for an answer from the agent` },
        },
      });
      expect(agent.remaining()).toEqual([]);
    } finally {
      agent.proc.kill();
      await agent.exit();
    }
  }, 120_000);
});
