/**
 * `bun run bench` (`--quick` for a shorter run): what `thoughtgate shim` costs, measured in one run
 * against the same server reached directly (the baseline) and through a byte relay that parses
 * nothing (the floor any stdio proxy built on Bun pays). Prints the machine and the tables to
 * stdout, progress to stderr. Pipes only, no network; every process it starts is reaped.
 */
import { readFileSync, statSync } from "node:fs";
import { cpus, loadavg, release } from "node:os";
import { join } from "node:path";
import { BINARY, ROOT, processesWith, requireBinary, tempDir } from "../support/harness.ts";
import { measureMemory, measureSessions, measureStartup, wallTimes } from "./measure.ts";
import { CONCURRENT_PROXIES, PIPELINE_WINDOW, PLAN, QUICK, TARGET, type Config, type ConfigName, type MemoryFigures } from "./plan.ts";
import { median, progress, renderTable } from "./report.ts";
import { binaryRows, latencyRows, memoryRows, startupRows, throughputRows } from "./rows.ts";

function configurations(server: string[], relay: string, eventsDir: string): Config[] {
  const shim = [BINARY, "shim", "--server-id", "bench"];
  return [
    { name: "direct", command: () => server },
    { name: "relay", command: () => [relay, "--", ...server] },
    { name: "shim", command: () => [...shim, "--", ...server] },
    { name: "shim+events", command: (tag) => [...shim, "--events", eventsPath(eventsDir, tag), "--", ...server] },
  ];
}

function eventsPath(dir: string, tag: string): string {
  return join(dir, `events-${tag}.jsonl`);
}

async function compileRelay(outfile: string): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "byte-relay.ts")],
    minify: true,
    sourcemap: "none",
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error("could not compile test/bench/byte-relay.ts");
  }
  return outfile;
}

/** What the `--events` session wrote: events, tool calls seen, and events the shim dropped. */
function eventsWritten(path: string): { events: number; calls: number; dropped: number | null } {
  const events = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { type?: string; summary?: { calls_total?: number; events_dropped?: number } });
  const summary = events.find((event) => event.type === "run_end")?.summary;
  return { events: events.length, calls: summary?.calls_total ?? 0, dropped: summary?.events_dropped ?? null };
}

/** The commit the binary was built from, and whether src/ differed from it (others may be editing). */
function sourceRevision(): string {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: ROOT, stderr: "ignore" }).stdout.toString().trim();
  const commit = git("rev-parse", "--short", "HEAD");
  if (commit === "") return "an unknown revision (no git)";
  return git("status", "--porcelain", "--", "src") === "" ? `commit ${commit}` : `commit ${commit} plus uncommitted changes in src/`;
}

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  // A THOUGHTGATE_EVENTS in the caller's environment would turn auditing on for the plain `shim` runs.
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  }
  return env;
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  requireBinary();
  using work = tempDir("thoughtgate-bench-");
  const relay = await compileRelay(join(work.path, "byte-relay"));
  // Every server carries this marker, so anything left behind can be found at the end.
  const marker = `--bench-run=${Bun.randomUUIDv7()}`;
  const server = [process.execPath, join(import.meta.dir, "bench-server.ts"), marker];
  const configs = configurations(server, relay, work.path);
  const env = childEnv();

  const version = Bun.spawnSync([BINARY, "--version"]).stdout.toString().trim();
  const build = sourceRevision();
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}, ${version}`;
  progress(`${machine}${QUICK ? " (quick run)" : ""}`);

  const sessions = await measureSessions(configs, env);
  const events = eventsWritten(eventsPath(work.path, "session"));

  progress(`start-up: ${PLAN.spawns} spawns per configuration`);
  const startup = await measureStartup(configs, env);

  progress(`memory: ${CONCURRENT_PROXIES} concurrent proxies per configuration`);
  const memory = new Map<ConfigName, MemoryFigures>();
  for (const config of configs) {
    if (config.name !== "direct") memory.set(config.name, await measureMemory(config, env));
  }

  progress(`binary: --version × ${PLAN.versionRuns}`);
  const versionMs = median(wallTimes([BINARY, "--version"], PLAN.versionRuns));
  // The relay without arguments prints its usage and exits: a compiled Bun binary's bare start-up.
  const relayStartMs = median(wallTimes([relay], PLAN.versionRuns));

  const leftovers = processesWith(marker);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");

  const pick = (key: "ping" | "call") => new Map([...sessions].map(([name, figures]) => [name, figures[key]]));
  const pickRuns = (key: "windowed" | "unbounded") => new Map([...sessions].map(([name, figures]) => [name, figures[key]]));
  const rows = [
    ...latencyRows("ping round trip p50", pick("ping"), 0.5, TARGET.addedP50Ms),
    ...latencyRows("ping round trip p99", pick("ping"), 0.99, TARGET.addedP99Ms),
    ...latencyRows("tools/call round trip p50", pick("call"), 0.5, TARGET.addedP50Ms),
    ...latencyRows("tools/call round trip p99", pick("call"), 0.99, TARGET.addedP99Ms),
    ...throughputRows(`pipelined tools/call, ≤ ${PIPELINE_WINDOW} in flight`, pickRuns("windowed")),
    ...throughputRows("pipelined tools/call, unbounded", pickRuns("unbounded")),
    ...startupRows(startup),
    ...memoryRows(memory),
  ];
  const binary = binaryRows(
    { bytes: statSync(BINARY).size, versionMs },
    { bytes: statSync(relay).size, startMs: relayStartMs },
  );

  const loadAtEnd = loadavg()[0] ?? 0;
  console.log(
    [
      `# thoughtgate shim benchmark${QUICK ? " (--quick)" : ""}`,
      "",
      `- date: ${new Date().toISOString()}`,
      `- machine: ${machine}; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${loadAtEnd.toFixed(2)} at the end`,
      // At the end the average includes the bench's own three busy processes; at the start it does not.
      ...(loadAtStart > cpu.length
        ? [`- warning: the load average was above ${cpu.length} before the bench started: other processes compete for the cores, and the p99 figures include their interference`]
        : []),
      `- binary: dist/thoughtgate built by \`bun run build.ts\` from ${build}`,
      `- plan: ${PLAN.iterations.toLocaleString("en-US")} sequential round trips per latency figure after ${PLAN.warmup.toLocaleString("en-US")} warm-up, in ${PLAN.blocks} interleaved blocks; median of ${PLAN.throughputRounds} × ${PLAN.pipelined.toLocaleString("en-US")} pipelined tools/call (responses per second), once with at most ${PIPELINE_WINDOW} unanswered and once unbounded; median of ${PLAN.spawns} spawns; ${CONCURRENT_PROXIES} concurrent proxies for memory`,
      "- direct: the client talks to `bun test/bench/bench-server.ts` itself; relay: compiled `test/bench/byte-relay.ts` (no parsing); shim: `thoughtgate shim --server-id bench`; shim+events: the same with `--events FILE`",
      "",
      renderTable(rows),
      "",
      renderTable(binary),
      "",
      `- shim+events session: ${events.events.toLocaleString("en-US")} events written for ${events.calls.toLocaleString("en-US")} tool calls, ${events.dropped?.toLocaleString("en-US") ?? "unknown"} dropped by the shim's queue limit`,
      `- processes left behind: ${leftovers.length === 0 ? "none" : `${leftovers.length} (killed: ${leftovers.join(", ")})`}`,
      `- bench wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join("\n"),
  );
  if (leftovers.length > 0) process.exitCode = 1;
}

await main();
