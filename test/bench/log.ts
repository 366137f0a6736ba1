/**
 * What the readable record costs (`thoughtgate log`, docs/events.md), in one run:
 *
 * - the audit per call: tools/call round trips and the shim's CPU time per call through
 *   `thoughtgate shim --events FILE` with the arguments recorded (redacted, the default) and with
 *   `audit: { arguments: hash }` (the hash-only audit the record kept before), one long-lived session
 *   each, interleaved in blocks, for a small call and for one with a path and 1 KiB of content;
 * - the index: `thoughtgate log --since 30d --server srv3` over a record of a million calls
 *   (log-records.ts) run through the binary: the first run builds the index (its rate), the next
 *   runs answer from it (warm, the target: ≤ 1 s), then once more after a session of new calls was
 *   appended (indexed on the way).
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { BenchClient, type Call } from "./bench-client.ts";
import { INITIALIZE, LOG_PLAN } from "./plan.ts";
import { writeRecord } from "./log-records.ts";
import { measureCollectorDown, type ExportFigures } from "./audit-export.ts";
import { cpuMs, median, ms, percentile, perSecond, progress, signedMs, verdict, type Row } from "./report.ts";

type AuditConfig = "hash only" | "arguments";
type Shape = "small" | "1 KiB";

export type LogFigures = {
  wall: Map<AuditConfig, Record<Shape, number[]>>;
  cpu: Map<AuditConfig, Record<Shape, number>>;
  record: { calls: number; bytes: number; files: number };
  buildMs: number;
  indexBytes: number;
  warmMs: number[];
  appended: { calls: number; ms: number };
  answer: string;
  collector: ExportFigures;
};

const CALLS: Record<Shape, Call> = {
  small: { method: "tools/call", params: { name: "echo", arguments: { message: "hello from the benchmark", count: 3 } } },
  "1 KiB": { method: "tools/call", params: { name: "echo", arguments: { path: "/home/user/projects/site/src/components/header.tsx", content: "export const x = 1;\n".repeat(52) } } },
};

export async function measureLog(server: string[], dir: string, runId: string, env: Record<string, string>): Promise<LogFigures> {
  const audit = await measureAudit(server, dir, runId, env);
  const collector = await measureCollectorDown(server, dir, runId, env);
  const home = join(dir, `log-home-${runId}`);
  mkdirSync(home, { recursive: true });
  progress(`log: writing a record of ${LOG_PLAN.sessions * LOG_PLAN.callsPerSession} calls`);
  const record = writeRecord(home, { sessions: LOG_PLAN.sessions, callsPerSession: LOG_PLAN.callsPerSession, days: 60 });
  const logEnv = { ...env, HOME: home, XDG_STATE_HOME: home };
  const question = [BINARY, "log", "--since", "30d", "--server", "srv3"];
  progress("log: the first query (builds the index)");
  const first = timed(question, logEnv);
  progress(`log: ${LOG_PLAN.warmRuns} warm queries`);
  const warm: number[] = [];
  let answer = first.stdout;
  // The rows must be the same every time; the count under them may not: "30d" moves with the
  // clock, and calls near its start leave it while the bench runs.
  const rows = (text: string) => text.split("\n").slice(0, -2).join("\n");
  for (let i = 0; i < LOG_PLAN.warmRuns; i++) {
    const run = timed(question, logEnv);
    if (rows(run.stdout) !== rows(answer)) throw new Error("a warm query answered differently from the first");
    warm.push(run.ms);
    answer = run.stdout;
  }
  progress("log: one more session appended, then the query again");
  const more = writeRecord(home, { sessions: 1, callsPerSession: LOG_PLAN.callsPerSession, days: 1 });
  const appended = timed(question, logEnv);
  return {
    ...audit,
    record: { calls: record.calls, bytes: record.bytes, files: LOG_PLAN.sessions },
    buildMs: first.ms,
    indexBytes: statSync(join(home, "thoughtgate", "log-index.sqlite")).size,
    warmMs: warm,
    appended: { calls: more.calls, ms: appended.ms },
    answer: answer.split("\n").at(-2) ?? "",
    collector,
  };
}

function timed(command: string[], env: Record<string, string>): { ms: number; stdout: string } {
  const started = performance.now();
  const run = Bun.spawnSync(command, { env, stdout: "pipe", stderr: "pipe" });
  const elapsed = performance.now() - started;
  if (run.exitCode !== 0) throw new Error(`${command.join(" ")} failed: ${run.stderr.toString()}`);
  return { ms: elapsed, stdout: run.stdout.toString() };
}

async function measureAudit(server: string[], dir: string, runId: string, env: Record<string, string>): Promise<Pick<LogFigures, "wall" | "cpu">> {
  const hashOnly = join(dir, `audit-hash-${runId}.yaml`);
  const redacted = join(dir, `audit-arguments-${runId}.yaml`);
  writeFileSync(hashOnly, "schema: 1\naudit: { arguments: hash }\n");
  writeFileSync(redacted, "schema: 1\n");
  const shim = (policy: string, tag: string) => [BINARY, "shim", "--server-id", "bench", "--events", join(dir, `audit-${tag}-${runId}.jsonl`), "--thoughtgate-config", policy, "--", ...server];
  const configs: Array<[AuditConfig, string[]]> = [
    ["hash only", shim(hashOnly, "hash")],
    ["arguments", shim(redacted, "arguments")],
  ];
  await using stack = new AsyncDisposableStack();
  const sessions = configs.map(([name, command]) => ({ name, client: stack.use(BenchClient.spawn(command, env)) }));
  for (const { client } of sessions) await client.roundTrip(INITIALIZE);
  const wall: LogFigures["wall"] = new Map(configs.map(([name]) => [name, { small: [], "1 KiB": [] }]));
  const cpu: LogFigures["cpu"] = new Map(configs.map(([name]) => [name, { small: 0, "1 KiB": 0 }]));
  for (const shape of ["small", "1 KiB"] as const) {
    progress(`log: the audit, ${LOG_PLAN.warmup} + ${LOG_PLAN.calls} ${shape} calls per configuration`);
    for (const { client } of sessions) for (let i = 0; i < LOG_PLAN.warmup; i++) await client.roundTrip(CALLS[shape]);
    const perBlock = Math.ceil(LOG_PLAN.calls / LOG_PLAN.blocks);
    for (let block = 0; block < LOG_PLAN.blocks; block++) {
      for (const { name, client } of sessions) {
        const before = cpuMs(client.pid);
        for (let i = 0; i < perBlock; i++) wall.get(name)?.[shape].push(await client.roundTrip(CALLS[shape]));
        const used = cpu.get(name);
        if (used) used[shape] += (cpuMs(client.pid) - before) / (perBlock * LOG_PLAN.blocks);
      }
    }
  }
  return { wall, cpu };
}

export function logRows(figures: LogFigures): Row[] {
  const rows: Row[] = [];
  for (const shape of ["small", "1 KiB"] as const) {
    const hash = figures.wall.get("hash only")?.[shape] ?? [];
    const args = figures.wall.get("arguments")?.[shape] ?? [];
    const cpuHash = figures.cpu.get("hash only")?.[shape] ?? 0;
    const cpuArgs = figures.cpu.get("arguments")?.[shape] ?? 0;
    rows.push(
      { figure: `audited tools/call round trip p50, ${shape} arguments`, config: "arguments recorded", value: ms(median(args)), baseline: ms(median(hash)), delta: signedMs(median(args) - median(hash)), target: "", result: "" },
      { figure: `audited tools/call round trip p99, ${shape} arguments`, config: "arguments recorded", value: ms(percentile(args, 0.99)), baseline: ms(percentile(hash, 0.99)), delta: signedMs(percentile(args, 0.99) - percentile(hash, 0.99)), target: "", result: "" },
      { figure: `shim CPU per call, ${shape} arguments`, config: "arguments recorded", value: ms(cpuArgs), baseline: ms(cpuHash), delta: signedMs(cpuArgs - cpuHash), target: "", result: "" },
    );
  }
  const up = figures.collector.wall.get("collector up") ?? [];
  const down = figures.collector.wall.get("collector down") ?? [];
  rows.push(
    { figure: "governed tools/call through wrap p50, audit exported", config: "collector down", value: ms(median(down)), baseline: ms(median(up)), delta: signedMs(median(down) - median(up)), target: "", result: "" },
    { figure: "governed tools/call through wrap p99, audit exported", config: "collector down", value: ms(percentile(down, 0.99)), baseline: ms(percentile(up, 0.99)), delta: signedMs(percentile(down, 0.99) - percentile(up, 0.99)), target: "", result: "" },
    {
      figure: `records counted as not exported (/metrics), of ${figures.collector.calls.toLocaleString("en-US")} calls`,
      config: "collector down",
      value: figures.collector.counted ? figures.collector.counted.dropped.toLocaleString("en-US") : "unknown",
      baseline: "",
      delta: "",
      target: `${figures.collector.calls.toLocaleString("en-US")}`,
      result: verdict((figures.collector.counted?.dropped ?? 0) >= figures.collector.calls && (figures.collector.counted?.exported ?? 1) === 0),
    },
  );
  const warm = median(figures.warmMs);
  const worst = Math.max(...figures.warmMs);
  rows.push(
    { figure: `log: first query, builds the index of ${figures.record.calls.toLocaleString("en-US")} calls`, config: "thoughtgate log", value: `${(figures.buildMs / 1000).toFixed(1)} s`, baseline: "", delta: perSecond(figures.record.calls / (figures.buildMs / 1000)), target: "", result: "" },
    { figure: "log --since 30d --server X, warm (median, worst)", config: "thoughtgate log", value: `${warm.toFixed(0)} ms, ${worst.toFixed(0)} ms`, baseline: "", delta: "", target: "≤ 1000 ms", result: verdict(worst <= 1000) },
    { figure: `log after ${figures.appended.calls.toLocaleString("en-US")} new calls (indexed on the way)`, config: "thoughtgate log", value: `${figures.appended.ms.toFixed(0)} ms`, baseline: "", delta: "", target: "", result: "" },
    { figure: "index size", config: "log-index.sqlite", value: `${(figures.indexBytes / 1024 / 1024).toFixed(0)} MB`, baseline: `${(figures.record.bytes / 1024 / 1024).toFixed(0)} MB of JSONL`, delta: "", target: "", result: "" },
  );
  return rows;
}
