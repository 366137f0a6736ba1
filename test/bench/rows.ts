/**
 * The figures as table rows: each configuration's value next to its baseline (direct for latency
 * and start-up, the relay for throughput and memory), the added cost or ratio, and the verdict
 * for the shim rows. The relay's latency rows say "floor": it is what any Bun proxy pays.
 */
import { STALL_MS, type Throughput } from "./bench-client.ts";
import { CONCURRENT_PROXIES, MEMORY_WARMUP_CALLS, PLAN, TARGET, type ConfigName, type MemoryFigures } from "./plan.ts";
import { mb, median, ms, percentile, perSecond, signedMs, verdict, type Row } from "./report.ts";

function get<T>(map: Map<ConfigName, T>, name: ConfigName): T {
  const value = map.get(name);
  if (value === undefined) throw new Error(`no figures for ${name}`);
  return value;
}

const JUDGED: ReadonlySet<ConfigName> = new Set(["shim", "shim+events"]);

export function latencyRows(figure: string, samples: Map<ConfigName, number[]>, q: number, targetAddedMs: number): Row[] {
  const base = percentile(get(samples, "direct"), q);
  return [...samples].map(([config, values]): Row => {
    const value = percentile(values, q);
    if (config === "direct") return { figure, config, value: ms(value), baseline: "(baseline)", delta: "", target: "", result: "" };
    const added = value - base;
    return {
      figure,
      config,
      value: ms(value),
      baseline: ms(base),
      delta: signedMs(added),
      target: `≤ +${targetAddedMs} ms`,
      result: JUDGED.has(config) ? verdict(added <= targetAddedMs) : "floor",
    };
  });
}

function rate(outcome: Throughput): number {
  return outcome.ok ? PLAN.pipelined / (outcome.elapsedMs / 1000) : 0;
}

export function throughputRows(figure: string, runs: Map<ConfigName, Throughput[]>): Row[] {
  const relayRuns = get(runs, "relay");
  const relay = relayRuns.every((run) => run.ok) ? median(relayRuns.map(rate)) : null;
  return [...runs].map(([config, outcomes]): Row => {
    const target = JUDGED.has(config) ? `≥ ${TARGET.throughputVsRelay}× relay` : "";
    const stall = outcomes.find((outcome) => !outcome.ok);
    if (stall && !stall.ok) {
      const value = `stalled after ${stall.received.toLocaleString("en-US")} of ${PLAN.pipelined.toLocaleString("en-US")}`;
      const ran = `no response for ${STALL_MS / 1000} s`;
      return { figure, config, value, baseline: relay === null ? "—" : perSecond(relay), delta: ran, target, result: "MISS" };
    }
    const value = median(outcomes.map(rate));
    if (config === "relay" || relay === null) {
      return { figure, config, value: perSecond(value), baseline: config === "relay" ? "(baseline)" : "—", delta: "", target: "", result: "" };
    }
    const ratio = value / relay;
    return {
      figure,
      config,
      value: perSecond(value),
      baseline: perSecond(relay),
      delta: `${ratio.toFixed(2)}× relay`,
      target,
      result: JUDGED.has(config) ? verdict(ratio >= TARGET.throughputVsRelay) : "",
    };
  });
}

export function startupRows(samples: Map<ConfigName, number[]>): Row[] {
  const figure = "spawn → initialize response";
  const base = median(get(samples, "direct"));
  return [...samples].map(([config, values]): Row => {
    const value = median(values);
    if (config === "direct") return { figure, config, value: ms(value), baseline: "(baseline)", delta: "", target: "", result: "" };
    return { figure, config, value: ms(value), baseline: ms(base), delta: signedMs(value - base), target: "", result: "" };
  });
}

export function memoryRows(memory: Map<ConfigName, MemoryFigures>): Row[] {
  const rows: Row[] = [];
  const states = [["idle", "idle"], ["working", `after ${MEMORY_WARMUP_CALLS.toLocaleString("en-US")} calls`]] as const;
  const figures = [["pssKb", "PSS"], ["rssKb", "RSS"]] as const;
  for (const [key, label] of figures) {
    for (const [state, when] of states) {
      const figure = `${label} per proxy, ${when} (${CONCURRENT_PROXIES} running)`;
      const relay = get(memory, "relay")[state][key];
      for (const [config, readings] of memory) {
        const value = readings[state][key];
        if (config === "relay") {
          rows.push({ figure, config, value: mb(value), baseline: "(baseline)", delta: "", target: "", result: "" });
          continue;
        }
        // The target is on PSS, the memory a shim really adds when several run side by side.
        const judged = key === "pssKb";
        rows.push({
          figure,
          config,
          value: mb(value),
          baseline: mb(relay),
          delta: `${value >= relay ? "+" : "−"}${mb(Math.abs(value - relay))}`,
          target: judged ? `≤ ${mb(TARGET.pssKb)}` : "",
          result: judged ? verdict(value <= TARGET.pssKb) : "",
        });
      }
    }
  }
  return rows;
}

/** The binary itself next to the compiled relay: size, and `--version` against the relay's bare start and exit. */
export function binaryRows(
  shim: { bytes: number; versionMs: number },
  relay: { bytes: number; startMs: number },
): Row[] {
  return [
    {
      figure: "binary size",
      config: "dist/thoughtgate",
      value: mb(shim.bytes / 1024),
      baseline: mb(relay.bytes / 1024),
      delta: `${mb((shim.bytes - relay.bytes) / 1024)} more than the relay`,
      target: "",
      result: "",
    },
    {
      figure: `wall time, median of ${PLAN.versionRuns}`,
      config: "thoughtgate --version",
      value: ms(shim.versionMs),
      baseline: ms(relay.startMs),
      delta: `${signedMs(shim.versionMs - relay.startMs)} vs relay start+exit`,
      target: "",
      result: "",
    },
  ];
}
