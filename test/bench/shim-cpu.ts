/**
 * One shim's CPU time over N pipelined `tools/call` (at most 256 in flight) through the bench's
 * server, for each binary given, in turn: `bun run test/bench/shim-cpu.ts N BINARY...`. With
 * `BUN_OPTIONS="--cpu-prof --cpu-prof-dir=DIR"` in the environment each process (the shim among
 * them) writes a CPU profile of the compiled binary, which is where the shim's per-call costs are
 * found (docs/benchmarks.md, "Shim against the previous release"). Every process it starts is reaped.
 */
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";

const [countArg, ...binaries] = process.argv.slice(2);
const count = Number(countArg);
if (!Number.isInteger(count) || count <= 0 || binaries.length === 0) {
  console.error("usage: bun run test/bench/shim-cpu.ts N BINARY...");
  process.exit(2);
}
const server = [process.execPath, join(import.meta.dir, "bench-server.ts")];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

for (const binary of binaries) {
  using home = tempDir("thoughtgate-bench-cpu-");
  const env = { ...process.env, HOME: home.path, XDG_STATE_HOME: join(home.path, "state"), XDG_CONFIG_HOME: join(home.path, "config") };
  const shim = Bun.spawn([binary, "shim", "--server-id", "bench", "--events", "none", "--", ...server], { stdin: "pipe", stdout: "pipe", stderr: "inherit", env });
  const send = (message: unknown) => shim.stdin.write(encoder.encode(`${JSON.stringify(message)}\n`));
  send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  let sent = 0;
  let answered = 0;
  let ready = false;
  let pending = "";
  const startedAt = performance.now();
  const reader = shim.stdout.getReader();
  while (answered < count) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
      const id = (JSON.parse(pending.slice(0, end)) as { id?: unknown }).id;
      pending = pending.slice(end + 1);
      if (id === 0) ready = true;
      else if (typeof id === "number") answered += 1;
    }
    while (ready && sent < count && sent - answered < 256) {
      sent += 1;
      send({ jsonrpc: "2.0", id: sent, method: "tools/call", params: { name: "echo", arguments: { text: "hello", n: sent } } });
    }
    shim.stdin.flush();
  }
  const wall = performance.now() - startedAt;
  shim.stdin.end();
  await shim.exited;
  const usage = shim.resourceUsage();
  const cpuMs = usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000 : Number.NaN;
  console.log(`${binary}: ${answered} calls, ${wall.toFixed(0)} ms wall, shim CPU ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / answered).toFixed(2)} µs per call)`);
}
