/**
 * The shim's own phase of the bench, whole or in parts (`--only shim|startup|memory|throughput`):
 * latency and pipelined throughput in long-lived sessions, spawn → first response, and the memory
 * of concurrent proxies, for every configuration, turned into table rows. Throughput is judged
 * against both relays: the byte relay (what any Bun proxy pays) and the parse relay (what any
 * proxy that reads every message pays).
 */
import type { Throughput } from "./bench-client.ts";
import { EVERYTHING, measureMemory, measureSessions, measureStartup } from "./measure.ts";
import { CONCURRENT_PROXIES, PIPELINE_WINDOW, PLAN, TARGET, type Config, type ConfigName, type MemoryFigures, type SessionFigures } from "./plan.ts";
import { progress, type Row } from "./report.ts";
import { latencyRows, memoryRows, startupRows, throughputRows } from "./rows.ts";

export type ShimParts = { latency: boolean; throughput: boolean; startup: boolean; memory: boolean };
export const ALL_PARTS: ShimParts = { latency: true, throughput: true, startup: true, memory: true };

export type ShimFigures = {
  rows: Row[];
  /** Null when the sessions did not run. */
  sessions: Map<ConfigName, SessionFigures> | null;
  memory: Map<ConfigName, MemoryFigures> | null;
};

export function partsOf(only: string | null): ShimParts {
  if (only === null || only === "shim") return ALL_PARTS;
  return { latency: false, throughput: only === "throughput", startup: only === "startup", memory: only === "memory" };
}

export async function measureShimPhase(configs: Config[], env: Record<string, string>, parts: ShimParts): Promise<ShimFigures> {
  const rows: Row[] = [];
  let sessions: Map<ConfigName, SessionFigures> | null = null;
  if (parts.latency || parts.throughput) {
    sessions = await measureSessions(configs, env, { ...EVERYTHING, sequential: parts.latency });
    if (parts.latency) rows.push(...latencyTable(sessions));
    rows.push(...throughputTable(sessions));
  }
  if (parts.startup) {
    progress(`start-up: ${PLAN.spawns} spawns per configuration`);
    rows.push(...startupRows(await measureStartup(configs, env)));
  }
  let memory: Map<ConfigName, MemoryFigures> | null = null;
  if (parts.memory) {
    progress(`memory: ${CONCURRENT_PROXIES} concurrent proxies per configuration`);
    memory = new Map();
    for (const config of configs) {
      if (config.name !== "direct") memory.set(config.name, await measureMemory(config, env));
    }
    rows.push(...memoryRows(memory));
  }
  return { rows, sessions, memory };
}

function pick(sessions: Map<ConfigName, SessionFigures>, key: "ping" | "call"): Map<ConfigName, number[]> {
  return new Map([...sessions].map(([name, figures]) => [name, figures[key]]));
}

export function pickRuns(sessions: Map<ConfigName, SessionFigures>, key: "windowed" | "unbounded"): Map<ConfigName, Throughput[]> {
  return new Map([...sessions].map(([name, figures]) => [name, figures[key]]));
}

function latencyTable(sessions: Map<ConfigName, SessionFigures>): Row[] {
  return [
    ...latencyRows("ping round trip p50", pick(sessions, "ping"), 0.5, TARGET.addedP50Ms),
    ...latencyRows("ping round trip p99", pick(sessions, "ping"), 0.99, TARGET.addedP99Ms),
    ...latencyRows("tools/call round trip p50", pick(sessions, "call"), 0.5, TARGET.addedP50Ms),
    ...latencyRows("tools/call round trip p99", pick(sessions, "call"), 0.99, TARGET.addedP99Ms),
  ];
}

/**
 * CPU time per pipelined call of each proxy process (the server's own for direct), against the parse
 * relay's: what the proxy spends per call, which hardly moves when other processes compete for the
 * cores, where responses per second do. No target: the targets are on throughput.
 */
function cpuTable(sessions: Map<ConfigName, SessionFigures>): Row[] {
  const figure = "CPU per pipelined tools/call, over every round";
  const perCall = ({ cpu }: SessionFigures) => (cpu.calls > 0 ? (cpu.ms * 1000) / cpu.calls : Number.NaN);
  const parse = sessions.get("parse relay");
  const base = parse ? perCall(parse) : Number.NaN;
  return [...sessions].map(([config, figures]): Row => {
    const value = perCall(figures);
    const us = (n: number) => `${n.toFixed(2)} µs`;
    if (config === "parse relay") return { figure, config, value: us(value), baseline: "(baseline)", delta: "", target: "", result: "" };
    return { figure, config, value: us(value), baseline: us(base), delta: `${(value / base).toFixed(2)}× parse relay`, target: "", result: "" };
  });
}

function throughputTable(sessions: Map<ConfigName, SessionFigures>): Row[] {
  const proxies = (config: ConfigName) => config !== "direct" && config !== "relay";
  const rows: Row[] = [...cpuTable(sessions)];
  for (const [figure, key] of [[`pipelined tools/call, ≤ ${PIPELINE_WINDOW} in flight`, "windowed"], ["pipelined tools/call, unbounded", "unbounded"]] as const) {
    const runs = pickRuns(sessions, key);
    rows.push(...throughputRows(figure, runs, "relay", TARGET.throughputVsRelay));
    rows.push(...throughputRows(`${figure}, against the parse floor`, runs, "parse relay", TARGET.throughputVsParseRelay, proxies));
  }
  return rows;
}
