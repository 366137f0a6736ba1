/**
 * The shim's memory under requests a server never answers (docs/benchmarks.md, "Requests a server
 * never answers"): `bun test/bench/unanswered-fixture.ts <thoughtgate> [count] [method] [id-bytes]`
 * sends `count` requests (300,000 pings by default; with `id-bytes`, string ids that long) to a shim whose server reads and never answers,
 * and prints the shim's VmRSS and VmHWM, and how many it answered itself.
 */
import { readFileSync } from "node:fs";

const [binary = "dist/thoughtgate", countText = "300000", method = "ping", idBytes] = process.argv.slice(2);
const count = Number(countText);
const pad = idBytes === undefined ? null : "x".repeat(Number(idBytes));
const proc = Bun.spawn([binary, "shim", "--server-id", "silent", "--", "sh", "-c", "exec cat > /dev/null"], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
let answered = 0;
const reading = (async () => {
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) answered += decoder.decode(chunk).split("\n").length - 1;
})();
const perBatch = pad === null ? 1000 : 1;
for (let start = 0; start < count; start += perBatch) {
  let batch = "";
  for (let id = start; id < Math.min(count, start + perBatch); id += 1) batch += `${JSON.stringify({ jsonrpc: "2.0", id: pad === null ? id : `${id}-${pad}`, method })}\n`;
  proc.stdin.write(batch);
  await proc.stdin.flush();
}
// Settled: nothing more comes back for a while (the shim answered all it will).
let last = -1;
while (last !== answered) {
  last = answered;
  await Bun.sleep(500);
}
const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
console.log(JSON.stringify({ requests: count, method, vmrss_mb: mb("VmRSS"), vmhwm_mb: mb("VmHWM"), answered }));
proc.stdin.end();
proc.kill();
await proc.exited;
await reading;
