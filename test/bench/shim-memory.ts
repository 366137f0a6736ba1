/**
 * `bun run test/bench/shim-memory.ts [--against OTHER_BINARY] [--quick]`: the private dirty memory
 * of a working shim as calls accumulate, the part of a shim no other process shares (its heap, its
 * stacks, what it wrote into its own pages), read from `/proc/<pid>/smaps_rollup` every
 * `MEMORY_STEP_CALLS` pipelined tools/call up to `MEMORY_TOTAL_CALLS`, at once and after
 * `MEMORY_SETTLE_MS` of quiet. With `--against`, the same run drives that binary's shims side by
 * side with dist/thoughtgate's (step by step in turn), so a slow spell of the machine lands on both:
 * a release against the one before it. Each shim runs `--events none` in front of its own
 * `bench-server.ts`, under a temporary HOME. Prints a Markdown table to stdout, progress to stderr.
 */
import { readFileSync } from "node:fs";
import { cpus, release } from "node:os";
import { join } from "node:path";
import { BINARY, processesWith, requireBinary, tempDir } from "../support/harness.ts";
import { BenchClient } from "./bench-client.ts";
import { AGAINST, ECHO_CALL, INITIALIZE, MEMORY_SETTLE_MS, PIPELINE_WINDOW, QUICK } from "./plan.ts";
import { progress, renderTable, verdict, type Row } from "./report.ts";

/** Shims per binary, each with its own server. */
const SHIMS = 3;
const MEMORY_STEP_CALLS = QUICK ? 5_000 : 20_000;
const MEMORY_TOTAL_CALLS = QUICK ? 30_000 : 120_000;
/** The line the shims are held to: ≤ 15 MB private dirty each, and no growth from the first step on. */
const TARGET_KB = 15 * 1024;
/** What "flat" allows between settled readings: the allocator's noise, not growth with the calls. */
const FLAT_KB = 1024;
/** Flat from here on; before it a shim is still warming up (its JIT and the engine's collector budget). */
const FLAT_FROM_CALLS = 20_000;

/** The pages only this process has written (`Private_Dirty:` in /proc/<pid>/smaps_rollup), in kB. */
export function privateDirtyKb(pid: number): number {
  const match = /^Private_Dirty:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
  if (!match) throw new Error(`no Private_Dirty in /proc/${pid}/smaps_rollup`);
  return Number(match[1]);
}

type Build = { name: string; binary: string; clients: BenchClient[]; readings: Map<string, number[]> };

function read(build: Build, label: string): void {
  build.readings.set(label, build.clients.map((client) => privateDirtyKb(client.pid)));
}

function range(readings: number[]): string {
  const mb = (kb: number) => (kb / 1024).toFixed(1);
  const low = Math.min(...readings);
  const high = Math.max(...readings);
  return low === high ? `${mb(low)} MB` : `${mb(low)} – ${mb(high)} MB`;
}

/** The table and its notes (Markdown lines); exit code 1 when a process of the run was left behind. */
export async function measureShimMemory(): Promise<string[]> {
  requireBinary();
  const against = AGAINST;
  using home = tempDir("thoughtgate-bench-memory-");
  const runId = Bun.randomUUIDv7();
  const server = [process.execPath, join(import.meta.dir, "bench-server.ts"), `--bench-run=${runId}`];
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("THOUGHTGATE_") && !key.startsWith("XDG_")) env[key] = value;
  }
  env.HOME = home.path;

  await using stack = new AsyncDisposableStack();
  const spawn = (name: string, binary: string): Build => ({
    name,
    binary,
    clients: Array.from({ length: SHIMS }, () => stack.use(BenchClient.spawn([binary, "shim", "--server-id", "bench", "--events", "none", "--", ...server], env))),
    readings: new Map(),
  });
  const builds = [spawn("dist/thoughtgate", BINARY), ...(against ? [spawn(against, against)] : [])];
  for (const build of builds) await Promise.all(build.clients.map((client) => client.roundTrip(INITIALIZE)));
  for (const build of builds) read(build, "idle");

  const labels = ["idle"];
  const settledAt: Array<[number, string]> = [];
  for (let done = MEMORY_STEP_CALLS; done <= MEMORY_TOTAL_CALLS; done += MEMORY_STEP_CALLS) {
    progress(`${done.toLocaleString("en-US")} calls per shim`);
    for (const build of builds) {
      const runs = await Promise.all(build.clients.map((client) => client.pipelined(ECHO_CALL, MEMORY_STEP_CALLS, PIPELINE_WINDOW)));
      if (runs.some((run) => !run.ok)) throw new Error(`${build.name}: a pipelined run stalled`);
      read(build, `after ${done.toLocaleString("en-US")} calls`);
    }
    labels.push(`after ${done.toLocaleString("en-US")} calls`);
    await Bun.sleep(MEMORY_SETTLE_MS);
    const settled = `after ${done.toLocaleString("en-US")} calls, ${MEMORY_SETTLE_MS / 1000} s later`;
    for (const build of builds) read(build, settled);
    labels.push(settled);
    settledAt.push([done, settled]);
  }

  const rows: Row[] = [];
  const last = `after ${MEMORY_TOTAL_CALLS.toLocaleString("en-US")} calls, ${MEMORY_SETTLE_MS / 1000} s later`;
  for (const label of labels) {
    for (const build of builds) {
      const readings = build.readings.get(label) ?? [];
      const judged = label === last && build.binary === BINARY;
      const result = judged ? verdict(Math.max(...readings) <= TARGET_KB) : "";
      rows.push({ figure: `private dirty per shim, ${label}`, config: build.name, value: range(readings), baseline: "", delta: "", target: judged ? "≤ 15.0 MB" : "", result });
    }
  }
  // Flat: every settled reading from `FLAT_FROM_CALLS` on within `FLAT_KB` of the first of them.
  const settledLabels = settledAt.filter(([done]) => done >= FLAT_FROM_CALLS).map(([, label]) => label);
  for (const build of builds) {
    const first = Math.max(...(build.readings.get(settledLabels[0] ?? "") ?? []));
    const highest = Math.max(...settledLabels.flatMap((label) => build.readings.get(label) ?? []));
    const judged = build.binary === BINARY;
    const growth = (highest - first) / 1024;
    rows.push({ figure: `private dirty per shim, ${MEMORY_SETTLE_MS / 1000} s after each step: highest from ${FLAT_FROM_CALLS.toLocaleString("en-US")} calls on, less the ${FLAT_FROM_CALLS.toLocaleString("en-US")} one`, config: build.name, value: `${growth >= 0 ? "+" : "−"}${Math.abs(growth).toFixed(1)} MB`, baseline: "", delta: "", target: judged ? `≤ +${(FLAT_KB / 1024).toFixed(1)} MB (flat)` : "", result: judged ? verdict(highest - first <= FLAT_KB) : "" });
  }
  await stack.disposeAsync();
  const leftovers = processesWith(runId);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");
  if (leftovers.length > 0) process.exitCode = 1;
  return [
      "## Shim memory as calls accumulate",
      "",
      `- ${SHIMS} shims per binary, \`shim --server-id bench --events none -- bun test/bench/bench-server.ts\`, ${MEMORY_STEP_CALLS.toLocaleString("en-US")} pipelined tools/call per step (≤ ${PIPELINE_WINDOW} unanswered), Private_Dirty of /proc/<pid>/smaps_rollup (lowest – highest of the shims)`,
      "",
      renderTable(rows, [["figure", "figure"], ["config", "binary"], ["value", "value"], ["target", "target"], ["result", "result"]]),
  ];
}

if (import.meta.main) {
  const cpu = cpus();
  const section = await measureShimMemory();
  console.log([`# thoughtgate shim memory${QUICK ? " (--quick)" : ""}`, "", `- machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}`, "", ...section].join("\n"));
}
