/**
 * `--against OTHER_BINARY`: our shim beside an older build's in the same sessions (measure.ts runs
 * them interleaved in the same blocks, so a slow spell of the machine lands on both), as ratios of
 * ours to the older one's: p50 and p99 round trips, CPU per pipelined call, pipelined responses per
 * second. "No worse" is judged with a band for the noise of a shared machine: latency and CPU at most
 * `AGAINST_TOLERANCE` above the older build's, throughput at most that much below.
 */
import type { Throughput } from "./bench-client.ts";
import { PIPELINE_WINDOW, type ConfigName, type SessionFigures } from "./plan.ts";
import { median, ms, percentile, perSecond, verdict, type Row } from "./report.ts";

export const PREVIOUS: ConfigName = "shim, --against";
/**
 * A band for noise, not a measured bound: on the shared 2-core VM one binary against itself has
 * differed by up to a fifth in CPU per call and throughput (docs/benchmarks.md), so a MISS means
 * something only when it repeats across runs.
 */
export const AGAINST_TOLERANCE = 0.1;

function rate(outcome: Throughput): number {
  return outcome.ok ? outcome.count / (outcome.elapsedMs / 1000) : 0;
}

/** Ours ("shim") against the older build's, figure by figure; empty when the older build did not run. */
export function againstRows(sessions: Map<ConfigName, SessionFigures>): Row[] {
  const ours = sessions.get("shim");
  const theirs = sessions.get(PREVIOUS);
  if (!ours || !theirs) return [];
  const rows: Row[] = [];
  const lower = (figure: string, value: number, base: number, show: (n: number) => string) => {
    const ratio = value / base;
    rows.push({ figure, config: "shim", value: show(value), baseline: show(base), delta: `${ratio.toFixed(2)}× --against`, target: `≤ ${(1 + AGAINST_TOLERANCE).toFixed(2)}×`, result: verdict(ratio <= 1 + AGAINST_TOLERANCE) });
  };
  const higher = (figure: string, value: number, base: number) => {
    const ratio = value / base;
    rows.push({ figure, config: "shim", value: perSecond(value), baseline: perSecond(base), delta: `${ratio.toFixed(2)}× --against`, target: `≥ ${(1 - AGAINST_TOLERANCE).toFixed(2)}×`, result: verdict(ratio >= 1 - AGAINST_TOLERANCE) });
  };
  for (const [key, method] of [["ping", "ping"], ["call", "tools/call"]] as const) {
    if (ours[key].length === 0 || theirs[key].length === 0) continue;
    for (const [q, name] of [[0.5, "p50"], [0.99, "p99"]] as const) lower(`${method} round trip ${name}`, percentile(ours[key], q), percentile(theirs[key], q), ms);
  }
  const perCall = ({ cpu }: SessionFigures) => (cpu.ms * 1000) / cpu.calls;
  if (ours.cpu.calls > 0 && theirs.cpu.calls > 0) lower("CPU per pipelined tools/call", perCall(ours), perCall(theirs), (n) => `${n.toFixed(2)} µs`);
  for (const [key, figure] of [["windowed", `pipelined tools/call, ≤ ${PIPELINE_WINDOW} in flight`], ["unbounded", "pipelined tools/call, unbounded"]] as const) {
    if (ours[key].length === 0 || theirs[key].length === 0) continue;
    if (![...ours[key], ...theirs[key]].every((run) => run.ok)) {
      rows.push({ figure, config: "shim", value: "a run stalled", baseline: "", delta: "", target: "", result: "" });
      continue;
    }
    higher(figure, median(ours[key].map(rate)), median(theirs[key].map(rate)));
  }
  return rows;
}
