/**
 * The bench's measurements, each over every configuration: long-lived sessions (latency, then
 * throughput), spawn-to-first-response, memory of concurrent proxies, and a short command's wall time.
 */
import { BenchClient, type Call } from "./bench-client.ts";
import {
  CONCURRENT_PROXIES,
  ECHO_CALL,
  INITIALIZE,
  MEMORY_LONG_CALLS,
  MEMORY_SETTLE_MS,
  MEMORY_WARMUP_CALLS,
  PING,
  PIPELINE_WINDOW,
  PLAN,
  type Config,
  type ConfigName,
  type MemoryFigures,
  type SessionFigures,
} from "./plan.ts";
import { cpuMs, memoryOf, progress, type Memory } from "./report.ts";

/** What a set of sessions measures besides the bounded pipelined run (`sequential`: the latency blocks of `tools/call`, and of `ping` with `ping`). */
export type SessionShape = { sequential: boolean; ping: boolean; unbounded: boolean; pipelined: number };
export const EVERYTHING: SessionShape = { sequential: true, ping: true, unbounded: true, pipelined: PLAN.pipelined };

/** One long-lived client per configuration: latency in interleaved blocks, then throughput rounds. */
export async function measureSessions(
  configs: Config[],
  env: Record<string, string>,
  shape: SessionShape = EVERYTHING,
): Promise<Map<ConfigName, SessionFigures>> {
  await using stack = new AsyncDisposableStack();
  const sessions = configs.map((config) => ({
    name: config.name,
    client: stack.use(BenchClient.spawn(config.command("session"), envFor(config, env))),
    figures: { ping: [], call: [], windowed: [], unbounded: [], cpu: { ms: 0, calls: 0 } } as SessionFigures,
  }));
  for (const { client } of sessions) await client.roundTrip(INITIALIZE);

  const kinds: Array<readonly [Call, "ping" | "call"]> = [[PING, "ping"], [ECHO_CALL, "call"]];
  const calls = kinds.filter(([, key]) => shape.sequential && (key === "call" || shape.ping));
  progress(`warm-up: ${[...calls.map(([call]) => `${PLAN.warmup} ${call.method}`), `${PLAN.warmup * 5} pipelined`].join(" + ")} per configuration`);
  for (const { client } of sessions) {
    for (let i = 0; i < PLAN.warmup; i++) {
      for (const [call] of calls) await client.roundTrip(call);
    }
    await client.pipelined(ECHO_CALL, PLAN.warmup * 5, PIPELINE_WINDOW);
  }

  // Interleaved blocks: a slow spell of the machine lands on every configuration, not on one.
  const perBlock = Math.ceil(PLAN.iterations / PLAN.blocks);
  for (const [call, key] of calls) {
    progress(`sequential ${call.method}: ${perBlock * PLAN.blocks} round trips per configuration`);
    for (let block = 0; block < PLAN.blocks; block++) {
      for (const { client, figures } of sessions) {
        for (let i = 0; i < perBlock; i++) figures[key].push(await client.roundTrip(call));
      }
    }
  }

  // Windowed rounds first: an unbounded run can leave a proxy stalled for good.
  const count = shape.pipelined.toLocaleString("en-US");
  const runs = shape.unbounded ? ([[PIPELINE_WINDOW, "windowed"], [Number.POSITIVE_INFINITY, "unbounded"]] as const) : ([[PIPELINE_WINDOW, "windowed"]] as const);
  for (const [window, key] of runs) {
    const shapeName = Number.isFinite(window) ? `at most ${window} in flight` : "unbounded";
    progress(`pipelined tools/call, ${shapeName}: ${PLAN.throughputRounds} × ${count} per configuration`);
    for (let round = 0; round < PLAN.throughputRounds; round++) {
      for (const { name, client, figures } of sessions) {
        if (!client.usable) continue;
        const cpuBefore = cpuMs(client.pid);
        const outcome = await client.pipelined(ECHO_CALL, shape.pipelined, window);
        figures[key].push(outcome);
        if (outcome.ok) {
          figures.cpu.ms += cpuMs(client.pid) - cpuBefore;
          figures.cpu.calls += shape.pipelined;
        }
        if (!outcome.ok) progress(`${name} stalled (${shapeName}) after ${outcome.received} of ${count} responses`);
      }
    }
  }

  await Promise.all(
    sessions.map(async ({ name, client }) => {
      const stalled = !client.usable;
      const code = await client.close();
      if (code !== 0 && !stalled) throw new Error(`${name} exited with code ${code}`);
    }),
  );
  return new Map(sessions.map(({ name, figures }) => [name, figures]));
}

function envFor(config: Config, env: Record<string, string>): Record<string, string> {
  return config.env ? { ...env, ...config.env } : env;
}

/** Spawn → `initialize` response received, each configuration in turn, `PLAN.spawns` times. */
export async function measureStartup(configs: Config[], env: Record<string, string>): Promise<Map<ConfigName, number[]>> {
  const samples = new Map<ConfigName, number[]>(configs.map((config) => [config.name, []]));
  for (let i = 0; i < PLAN.spawns; i++) {
    for (const config of configs) {
      const started = performance.now();
      await using client = BenchClient.spawn(config.command("startup"), envFor(config, env));
      await client.roundTrip(INITIALIZE);
      samples.get(config.name)?.push(performance.now() - started);
    }
  }
  return samples;
}

/**
 * `CONCURRENT_PROXIES` proxies at once, each with its own server: the proxies' PSS and RSS per
 * proxy, idle after `initialize`, again after `MEMORY_WARMUP_CALLS` tool calls each and after
 * `MEMORY_LONG_CALLS` in all, each of those read at once and after `MEMORY_SETTLE_MS` of quiet.
 */
export async function measureMemory(config: Config, env: Record<string, string>): Promise<MemoryFigures> {
  await using stack = new AsyncDisposableStack();
  const clients = Array.from({ length: CONCURRENT_PROXIES }, (_, i) =>
    stack.use(BenchClient.spawn(config.command(`memory-${i}`), envFor(config, env))),
  );
  await Promise.all(clients.map((client) => client.roundTrip(INITIALIZE)));
  const idle = perProxy(clients.map((client) => memoryOf(client.pid)));
  await Promise.all(clients.map((client) => client.pipelined(ECHO_CALL, MEMORY_WARMUP_CALLS, PIPELINE_WINDOW)));
  const working = perProxy(clients.map((client) => memoryOf(client.pid)));
  await Bun.sleep(MEMORY_SETTLE_MS);
  const workingSettled = perProxy(clients.map((client) => memoryOf(client.pid)));
  await Promise.all(clients.map((client) => client.pipelined(ECHO_CALL, MEMORY_LONG_CALLS - MEMORY_WARMUP_CALLS, PIPELINE_WINDOW)));
  const long = perProxy(clients.map((client) => memoryOf(client.pid)));
  await Bun.sleep(MEMORY_SETTLE_MS);
  const longSettled = perProxy(clients.map((client) => memoryOf(client.pid)));
  return { idle, working, workingSettled, long, longSettled };
}

function perProxy(readings: Memory[]): Memory {
  const total = readings.reduce((sum, reading) => ({ pssKb: sum.pssKb + reading.pssKb, rssKb: sum.rssKb + reading.rssKb }));
  return { pssKb: total.pssKb / readings.length, rssKb: total.rssKb / readings.length };
}

/** Wall time of a short-lived command, spawn to exit, `runs` times. */
export function wallTimes(command: string[], runs: number): number[] {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    Bun.spawnSync(command, { stdout: "ignore", stderr: "ignore" });
    samples.push(performance.now() - started);
  }
  return samples;
}
