/**
 * The figures as table rows: each configuration's value next to its baseline (direct for latency
 * and start-up, the relay for throughput and memory; direct for governed throughput), the added
 * cost or ratio, and the verdict for the shim rows. The relay's latency rows say "floor": it is
 * what any Bun proxy pays.
 */
import { STALL_MS, type Throughput } from "./bench-client.ts";
import type { ArbiterFigures } from "./arbiter.ts";
import type { CedarFigures } from "./cedar-eval.ts";
import type { ServiceMemory } from "./governed.ts";
import { ARBITER_TARGET, CEDAR_PLAN, CONCURRENT_PROXIES, GOVERNANCE_TARGET, MEMORY_LONG_CALLS, MEMORY_SETTLE_MS, MEMORY_WARMUP_CALLS, PLAN, TARGET, WRAP_PLAN, WRAP_TARGET, type ConfigName, type MemoryFigures } from "./plan.ts";
import { mb, median, ms, percentile, perSecond, signedMs, verdict, type Row } from "./report.ts";
import type { LaunchFigures } from "./wrap-launch.ts";
import type { RewriteFigures } from "./wrap-rewrite.ts";

function get<K extends string, T>(map: Map<K, T>, name: K): T {
  const value = map.get(name);
  if (value === undefined) throw new Error(`no figures for ${name}`);
  return value;
}

/** The proxies the targets apply to; the relay is only a reference. */
const JUDGED: ReadonlySet<ConfigName> = new Set(["shim", "shim+events", "shim+engine", "shim+service", "shim+session"]);

/** What any proxy pays: shown against the targets as "floor", never judged. */
const FLOORS: ReadonlySet<string> = new Set(["relay", "parse relay"]);

/** The row a baseline configuration gets: its own value, nothing to compare. */
function baselineMsRow(figure: string, config: string, value: number): Row {
  return { figure, config, value: ms(value), baseline: "(baseline)", delta: "", target: "", result: "" };
}

/** A latency row against a baseline: the added time, judged against `targetAddedMs` when there is one. */
function addedMsRow(figure: string, config: string, value: number, base: number, targetAddedMs: number | null, judged = true): Row {
  const added = value - base;
  return {
    figure,
    config,
    value: ms(value),
    baseline: ms(base),
    delta: signedMs(added),
    target: targetAddedMs === null ? "" : `≤ +${targetAddedMs} ms`,
    result: targetAddedMs === null ? "" : judged ? verdict(added <= targetAddedMs) : FLOORS.has(config) ? "floor" : "",
  };
}

export function latencyRows(figure: string, samples: Map<ConfigName, number[]>, q: number, targetAddedMs: number | null): Row[] {
  const base = percentile(get(samples, "direct"), q);
  return [...samples].map(([config, values]): Row => {
    const value = percentile(values, q);
    if (config === "direct") return baselineMsRow(figure, config, value);
    return addedMsRow(figure, config, value, base, targetAddedMs, JUDGED.has(config));
  });
}

function rate(outcome: Throughput): number {
  return outcome.ok ? outcome.count / (outcome.elapsedMs / 1000) : 0;
}

/**
 * Median responses per second against `baseline`'s; `targetRatio` null: no target for this figure.
 * `shown`: the configurations that get a row (all by default).
 */
export function throughputRows(
  figure: string,
  runs: Map<ConfigName, Throughput[]>,
  baseline: ConfigName,
  targetRatio: number | null,
  shown: (config: ConfigName) => boolean = () => true,
): Row[] {
  const baseRuns = get(runs, baseline);
  const base = baseRuns.every((run) => run.ok) ? median(baseRuns.map(rate)) : null;
  return [...runs].filter(([config]) => shown(config)).map(([config, outcomes]): Row => {
    const judged = targetRatio !== null && JUDGED.has(config);
    const target = judged ? `≥ ${targetRatio}× ${baseline}` : "";
    const stall = outcomes.find((outcome) => !outcome.ok);
    if (stall && !stall.ok) {
      const value = `stalled after ${stall.received.toLocaleString("en-US")} of ${stall.count.toLocaleString("en-US")}`;
      const ran = `no response for ${STALL_MS / 1000} s`;
      return { figure, config, value, baseline: base === null ? "—" : perSecond(base), delta: ran, target, result: judged ? "MISS" : "" };
    }
    const value = median(outcomes.map(rate));
    if (config === baseline || base === null) {
      return { figure, config, value: perSecond(value), baseline: config === baseline ? "(baseline)" : "—", delta: "", target: "", result: "" };
    }
    const ratio = value / base;
    return {
      figure,
      config,
      value: perSecond(value),
      baseline: perSecond(base),
      delta: `${ratio.toFixed(2)}× ${baseline}`,
      target,
      result: judged ? verdict(ratio >= targetRatio) : "",
    };
  });
}

/**
 * Decisions per second the service gave one shim in the pipelined runs (every call is one decision),
 * against an absolute floor: the target is a rate, not a ratio.
 */
export function decisionRateRows(figure: string, runs: Map<ConfigName, Throughput[]>, config: ConfigName, floor: number): Row[] {
  const outcomes = get(runs, config);
  const target = `≥ ${perSecond(floor)}`;
  if (!outcomes.every((outcome) => outcome.ok)) return [{ figure, config, value: "stalled", baseline: "—", delta: "", target, result: "MISS" }];
  const value = median(outcomes.map(rate));
  return [{ figure, config, value: perSecond(value), baseline: "—", delta: "", target, result: verdict(value >= floor) }];
}

/** Median spawn → first response against the server's own; the target is on the shims' ratio. */
export function startupRows(samples: Map<ConfigName, number[]>): Row[] {
  const figure = `spawn → initialize response, median of ${PLAN.spawns}`;
  const base = median(get(samples, "direct"));
  return [...samples].map(([config, values]): Row => {
    const value = median(values);
    if (config === "direct") return baselineMsRow(figure, config, value);
    const judged = JUDGED.has(config);
    return {
      ...addedMsRow(figure, config, value, base, null),
      delta: `${signedMs(value - base)}, ${(value / base).toFixed(2)}× direct`,
      target: judged ? `≤ ${TARGET.startupVsDirect}× direct` : "",
      result: judged ? verdict(value <= TARGET.startupVsDirect * base) : "",
    };
  });
}

/**
 * PSS and RSS per proxy, idle and after each number of calls (at once, and settled after a quiet
 * spell), against the byte relay's. The targets are on PSS, the memory a shim really adds when
 * several run side by side: a ceiling idle and at once after `MEMORY_WARMUP_CALLS`, and no growth
 * from there to `MEMORY_LONG_CALLS`, judged at once and settled alike.
 */
export function memoryRows(memory: Map<ConfigName, MemoryFigures>): Row[] {
  const rows: Row[] = [];
  const calls = (n: number) => `after ${n.toLocaleString("en-US")} calls`;
  const quiet = `${MEMORY_SETTLE_MS / 1000} s later`;
  const states = [
    ["idle", "idle", null],
    ["working", calls(MEMORY_WARMUP_CALLS), null],
    ["long", calls(MEMORY_LONG_CALLS), "working"],
    ["workingSettled", `${calls(MEMORY_WARMUP_CALLS)}, ${quiet}`, null],
    ["longSettled", `${calls(MEMORY_LONG_CALLS)}, ${quiet}`, "workingSettled"],
  ] as const;
  const figures = [["pssKb", "PSS"], ["rssKb", "RSS"]] as const;
  for (const [key, label] of figures) {
    for (const [state, when, flatAgainst] of states) {
      const figure = `${label} per proxy, ${when} (${CONCURRENT_PROXIES} running)`;
      const relay = get(memory, "relay")[state][key];
      for (const [config, readings] of memory) {
        const value = readings[state][key];
        if (config === "relay") {
          rows.push({ figure, config, value: mb(value), baseline: "(baseline)", delta: "", target: "", result: "" });
          continue;
        }
        // Judged: the ceilings idle and after the first calls, and no growth after that.
        const ceiling = flatAgainst ? readings[flatAgainst].pssKb + TARGET.flatPssKb : state === "idle" ? TARGET.pssKb : state === "working" ? TARGET.workingPssKb : null;
        const judged = key === "pssKb" && JUDGED.has(config) && ceiling !== null;
        rows.push({
          figure,
          config,
          value: mb(value),
          baseline: mb(relay),
          delta: `${value >= relay ? "+" : "−"}${mb(Math.abs(value - relay))}`,
          target: judged && ceiling !== null ? `≤ ${mb(ceiling)}${flatAgainst ? " (flat)" : ""}` : "",
          result: judged && ceiling !== null ? verdict(value <= ceiling) : "",
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

/**
 * One evaluation's time at each size: the whole set's as the baseline of the slice's. Targets: the
 * slice's p99 at the smallest size, and at each larger size its p99 against the smallest's. The
 * on-CPU p99 (this thread's CPU time) is shown with the same targets but not judged: it leaves out
 * the time other processes held the core.
 */
export function cedarRows(cedar: CedarFigures): Row[] {
  const [first] = cedar.runs;
  if (!first) return [];
  const rows: Row[] = [];
  for (const run of cedar.runs) {
    const policies = `${run.policies.toLocaleString("en-US")} policies`;
    for (const [label, q, sliced, full, firstSliced, judged] of [
      ["p50", 0.5, run.sliced, run.full, first.sliced, false],
      ["p99", 0.99, run.sliced, run.full, first.sliced, true],
      ["p99 on-CPU", 0.99, run.slicedCpu, run.fullCpu, first.slicedCpu, false],
    ] as const) {
      const figure = `Cedar evaluation ${label}, ${policies}`;
      const whole = percentile(full, q);
      const value = percentile(sliced, q);
      rows.push({ figure, config: "whole set", value: ms(whole), baseline: "(baseline)", delta: "", target: "", result: "" });
      const row: Row = { figure, config: "slice", value: ms(value), baseline: ms(whole), delta: `${(value / whole).toPrecision(2)}× whole set`, target: "", result: "" };
      if (q === 0.99 && run === first) {
        row.target = `≤ ${GOVERNANCE_TARGET.cedarP99Ms} ms`;
        row.result = judged ? verdict(value <= GOVERNANCE_TARGET.cedarP99Ms) : "";
      } else if (q === 0.99) {
        const limit = GOVERNANCE_TARGET.cedarP99GrowthAt5000;
        const base = percentile(firstSliced, q);
        row.delta += `; ${(value / base).toPrecision(2)}× slice at ${first.policies}`;
        row.target = `≤ ${limit}× slice at ${first.policies}`;
        row.result = judged ? verdict(value <= limit * base) : "";
      }
      rows.push(row);
    }
  }
  const config = "fixed computation (control)";
  for (const [label, samples, q] of [
    ["p50", cedar.control.wall, 0.5],
    ["p99", cedar.control.wall, 0.99],
    ["p99 on-CPU", cedar.control.cpu, 0.99],
  ] as const) {
    rows.push({ figure: `control ${label}`, config, value: ms(percentile(samples, q)), baseline: "", delta: "", target: "", result: "" });
  }
  return rows;
}

/** The service's RSS against the relay's (an idle compiled Bun program); the target is on the working figure. */
export function serviceMemoryRows(service: ServiceMemory, relayIdleRssKb: number): Row[] {
  const config = "thoughtgate serve";
  const row = (figure: string, kb: number, judged: boolean): Row => ({
    figure,
    config,
    value: mb(kb),
    baseline: mb(relayIdleRssKb),
    delta: `${kb >= relayIdleRssKb ? "+" : "−"}${mb(Math.abs(kb - relayIdleRssKb))} vs relay`,
    target: judged ? `≤ ${mb(GOVERNANCE_TARGET.serviceRssKb)}` : "",
    result: judged ? verdict(kb <= GOVERNANCE_TARGET.serviceRssKb) : "",
  });
  return [
    row("service RSS, idle, rules only", service.rulesOnlyIdleRssKb, false),
    row(`service RSS, idle, ${CEDAR_PLAN.policies} Cedar policies loaded`, service.idleRssKb, false),
    row("service RSS, after the governed runs", service.afterRssKb, true),
    row(`service RSS, after the governed runs, ${MEMORY_SETTLE_MS / 1000} s later`, service.settledRssKb, false),
  ];
}

/**
 * wrap's start-up against launching the agent directly (the target is on the added median;
 * p90 is shown against the same figure), its spawn-to-exit time, and the in-process rewrite
 * figures (the target on the median and p99 of discover + rewrite).
 */
export function wrapRows(launch: LaunchFigures, rewrite: RewriteFigures): Row[] {
  const rows: Row[] = [];
  const direct = get(launch.samples, "direct");
  const figures = [
    [`spawn → agent running, p50 of ${WRAP_PLAN.launches}`, 0.5, "launchedMs", WRAP_TARGET.addedLaunchMs],
    [`spawn → agent running, p90 of ${WRAP_PLAN.launches}`, 0.9, "launchedMs", WRAP_TARGET.addedLaunchMs],
    [`spawn → exit (config restored), p50 of ${WRAP_PLAN.launches}`, 0.5, "exitedMs", null],
  ] as const;
  for (const [figure, q, key, target] of figures) {
    const base = percentile(direct.map((sample) => sample[key]), q);
    for (const [config, samples] of launch.samples) {
      const value = percentile(samples.map((sample) => sample[key]), q);
      rows.push(config === "direct" ? baselineMsRow(figure, "agent alone", value) : addedMsRow(figure, config, value, base, target));
    }
  }
  const config = `${mb(rewrite.bytes / 1024)} ~/.claude.json`;
  const row = (figure: string, value: number, target: number | null): Row => ({
    figure,
    config,
    value: ms(value),
    baseline: "—",
    delta: "",
    target: target === null ? "" : `≤ ${target} ms`,
    result: target === null ? "" : verdict(value <= target),
  });
  const of = `of ${WRAP_PLAN.rewrites}`;
  rows.push(
    row(`discover("claude-code") p50 ${of}`, median(rewrite.discoverMs), null),
    row(`rewrite p50 ${of}`, median(rewrite.rewriteMs), null),
    row(`discover + rewrite p50 ${of}`, median(rewrite.totalMs), WRAP_TARGET.rewriteMs),
    row(`discover + rewrite p99 ${of}`, percentile(rewrite.totalMs, 0.99), WRAP_TARGET.rewriteMs),
    row("discover + rewrite, first call", rewrite.first.discoverMs + rewrite.first.rewriteMs, null),
    row(`restoreOwnedKeys, agent saved the file, p50 ${of}`, median(rewrite.restoreMs), null),
    row(`restoreOwnedKeys, agent saved the file, p99 ${of}`, percentile(rewrite.restoreMs, 0.99), null),
    row("restoreOwnedKeys, first call", rewrite.first.restoreMs, null),
  );
  return rows;
}

/**
 * The arbiter's decision wait (tool.request printed → policy.decision read) against the echo
 * decider's; the target is on the added p99.
 */
export function arbiterRows(arbiter: ArbiterFigures): Row[] {
  const rows: Row[] = [];
  const base = arbiter.samples.get("echo decider");
  if (!base) throw new Error("no figures for the echo decider");
  for (const [label, q, target] of [["p50", 0.5, null], ["p99", 0.99, ARBITER_TARGET.addedP99Ms]] as const) {
    const figure = `tool.request → policy.decision ${label}`;
    const baseline = percentile(base, q);
    for (const [config, samples] of arbiter.samples) {
      const value = percentile(samples, q);
      rows.push(config === "echo decider" ? baselineMsRow(figure, config, value) : addedMsRow(figure, config, value, baseline, target));
    }
  }
  return rows;
}
