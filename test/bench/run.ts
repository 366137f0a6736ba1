/**
 * `bun run bench` (`--quick` for a shorter run): what `thoughtgate shim` costs, measured in one run
 * against the same server reached directly (the baseline) and through a byte relay that parses
 * nothing (the floor any stdio proxy built on Bun pays); then what governing a call costs, with
 * the engine in the shim and in `thoughtgate serve`, and one Cedar evaluation alone; then what
 * `thoughtgate wrap` adds before the agent runs, and what rewriting a 1 MB `~/.claude.json` takes;
 * how long `thoughtgate arbiter` makes a codecli wait for a decision; what secret scanning adds
 * to a result's round trip; and what an agent's own tool call waits for `thoughtgate hook`
 * (`--only PHASE` runs one phase alone, plan.ts; `--against OLD_BINARY` measures an older build
 * beside ours in the same run).
 * Prints the machine and the tables to stdout, progress to stderr. Pipes, and loopback HTTP and WebSocket
 * between the shim and the governance service only; every process it starts is reaped.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { cpus, loadavg, release } from "node:os";
import { join } from "node:path";
import { BINARY, ROOT, processesWith, requireBinary, tempDir } from "../support/harness.ts";
import { measureArbiter } from "./arbiter.ts";
import { cedarNotes, measureCedar, runCedarAlone, writePolicySet, type CedarFigures } from "./cedar-eval.ts";
import { measureGoverned, type GovernedFigures } from "./governed.ts";
import { BenchClient } from "./bench-client.ts";
import { wallTimes } from "./measure.ts";
import { ALL_PARTS, measureShimPhase, partsOf, pickRuns } from "./shim-phase.ts";
import { measureWrapLaunch } from "./wrap-launch.ts";
import { hourChecks, hourSection, measureHour } from "./hour.ts";
import { hookRows, measureHook, type HookFigures } from "./hook.ts";
import { measureShimMemory } from "./shim-memory.ts";
import { AGAINST_TOLERANCE, againstRows, PREVIOUS } from "./against.ts";
import { measureRemote } from "./remote.ts";
import { measurePins, type PinsFigures } from "./pins.ts";
import { measureRewrite } from "./wrap-rewrite.ts";
import { measureSecrets, secretsRows } from "./secrets.ts";
import { measureScanner, scannerRows, type ScannerFigures } from "./secret-scan.ts";
import { logRows, measureLog, type LogFigures } from "./log.ts";
import {
  AGAINST,
  ARBITER_PLAN,
  CEDAR_PLAN,
  CONCURRENT_PROXIES,
  GOVERNANCE_TARGET,
  INITIALIZE,
  GOVERNED_PIPELINED,
  HOOK_PLAN,
  ONLY,
  PINS_TOOL_COUNT,
  PIPELINE_WINDOW,
  PLAN,
  QUICK,
  WRAP_PLAN,
  type Config,
  type ConfigName,
  type SessionFigures,
} from "./plan.ts";
import { median, progress, renderTable, residentKb, type Row } from "./report.ts";
import { measureFramingChecks, renderFramingChecks } from "./framing-checks.ts";
import { arbiterRows, binaryRows, cedarRows, decisionRateRows, latencyRows, serviceMemoryRows, startupRows, throughputRows, wrapRows } from "./rows.ts";

function configurations(server: string[], relay: string, parseRelay: string, eventsDir: string): Config[] {
  const shim = [BINARY, "shim", "--server-id", "bench"];
  const against = AGAINST;
  return [
    { name: "direct", command: () => server },
    { name: "relay", command: () => [relay, "--", ...server] },
    { name: "parse relay", command: () => [parseRelay, "--", ...server] },
    { name: "shim", command: () => [...shim, "--events", "none", "--", ...server] },
    // With --against, the older build's shim in the same sessions (against.ts).
    ...(against === null ? [] : [{ name: PREVIOUS, command: () => [against, "shim", "--server-id", "bench", "--events", "none", "--", ...server] } satisfies Config]),
    { name: "shim+events", command: (tag) => [...shim, "--events", eventsPath(eventsDir, tag), "--", ...server] },
  ];
}

/** The shim phase's table, and with `--against` ours beside the older build's as ratios. */
function shimTables(phase: Awaited<ReturnType<typeof measureShimPhase>>): string {
  const against = phase.sessions ? againstRows(phase.sessions) : [];
  if (!AGAINST || against.length === 0) return renderTable(phase.rows);
  const version = Bun.spawnSync([AGAINST, "--version"]).stdout.toString().trim();
  return [
    renderTable(phase.rows),
    "",
    `### shim against --against (${AGAINST}, ${version}), same sessions, same blocks`,
    "",
    `- judged "no worse" within ${Math.round(AGAINST_TOLERANCE * 100)} %, a band for noise: on a shared machine one binary against itself can differ by more, so a MISS counts when it repeats across runs`,
    "",
    renderTable(against),
  ].join("\n");
}

function eventsPath(dir: string, tag: string): string {
  return join(dir, `events-${tag}.jsonl`);
}

/** A helper of the bench compiled like our binary (`source` in test/bench/). */
async function compile(source: string, outfile: string): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, source)],
    minify: true,
    sourcemap: "none",
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`could not compile test/bench/${source}`);
  }
  return outfile;
}

/** What the `--events` session wrote: events, tool calls seen, calls whose end was recorded, events lost. */
function eventsWritten(path: string): { events: number; calls: number; ended: number; dropped: number | null } {
  const events = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { type?: string; summary?: { calls_total?: number; events_dropped?: number } });
  const summary = events.find((event) => event.type === "run_end")?.summary;
  const ended = events.filter((event) => event.type === "tool_call_end").length;
  return { events: events.length, calls: summary?.calls_total ?? 0, ended, dropped: summary?.events_dropped ?? null };
}

/** The commit the binary was built from, and whether src/ differed from it (others may be editing). */
function sourceRevision(): string {
  const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: ROOT, stderr: "ignore" }).stdout.toString().trim();
  const commit = git("rev-parse", "--short", "HEAD");
  if (commit === "") return "an unknown revision (no git)";
  return git("status", "--porcelain", "--", "src") === "" ? `commit ${commit}` : `commit ${commit} plus uncommitted changes in src/`;
}

function pick(sessions: Map<ConfigName, SessionFigures>, key: "ping" | "call"): Map<ConfigName, number[]> {
  return new Map([...sessions].map(([name, figures]) => [name, figures[key]]));
}

function governanceRows(governed: GovernedFigures, cedar: CedarFigures | null, relayIdleRssKb: number): Row[] {
  const calls = pick(governed.sessions, "call");
  return [
    ...latencyRows("governed tools/call round trip p50", calls, 0.5, null),
    ...latencyRows("governed tools/call round trip p99", calls, 0.99, GOVERNANCE_TARGET.addedP99Ms),
    ...throughputRows(`governed pipelined tools/call, ≤ ${PIPELINE_WINDOW} in flight`, pickRuns(governed.sessions, "windowed"), "direct", null),
    ...startupRows(governed.startup),
    ...decisionRateRows(`decisions by the service, pipelined, ≤ ${PIPELINE_WINDOW} in flight`, pickRuns(governed.sessions, "windowed"), "shim+service", GOVERNANCE_TARGET.decisionsPerSecond),
    ...(cedar ? cedarRows(cedar) : []),
    ...serviceMemoryRows(governed.service, relayIdleRssKb),
  ];
}

function pinsSection(figures: PinsFigures): string {
  return [
    "## Pinned definitions",
    "",
    `- server: \`bun test/bench/bench-server.ts --tools ${PINS_TOOL_COUNT}\` (a ${PINS_TOOL_COUNT}-tool list); shims: \`thoughtgate shim --server-id bench --events none --thoughtgate-config FILE\` with \`pins: { mode: off }\` and \`{ mode: strict }\` (each list compared with the pins, digests of the ${PINS_TOOL_COUNT} definitions, the poisoning checks for what is new)`,
    `- plan: ${count(PLAN.iterations)} sequential tools/list and as many tools/call per configuration after ${count(PLAN.warmup)} of each, in ${PLAN.blocks} interleaved blocks`,
    "",
    renderTable([
      ...latencyRows("tools/list round trip p50", figures.list, 0.5, null),
      ...latencyRows("tools/list round trip p99", figures.list, 0.99, null),
      ...latencyRows("tools/call round trip p50", figures.call, 0.5, null),
      ...latencyRows("tools/call round trip p99", figures.call, 0.99, null),
    ]),
  ].join("\n");
}

/** `--only governed`: the governed sessions and the service's memory (not Cedar alone), against an idle relay's RSS. */
async function governedOnly(server: string[], relay: string, dir: string, runId: string, env: Record<string, string>): Promise<string> {
  const relayIdleRssKb = await (async () => {
    await using client = BenchClient.spawn([relay, "--", ...server], env);
    await client.roundTrip(INITIALIZE);
    return residentKb(client.pid);
  })();
  const governed = await measureGoverned(server, dir, runId, writePolicySet(dir), env);
  const decisions = [...governed.decisions].map(([decision, n]) => `${count(n)} ${decision}`).join(", ") || "none";
  return [renderTable(governanceRows(governed, null, relayIdleRssKb)), "", `- service decisions (its /metrics): ${decisions}`].join("\n");
}

function count(value: number): string {
  return value.toLocaleString("en-US");
}

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  // A THOUGHTGATE_EVENTS in the caller's environment would turn auditing on for the plain `shim` runs.
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  }
  return env;
}

const SECRETS_NOTE =
  "- tools/call through `thoughtgate shim --server-id bench --events none --thoughtgate-config FILE`, FILE `secrets: {scan: off}` (scan off) or nothing but `schema: 1` (scan on, the default); the 10 MiB results are `blob`'s text (source code and prose, the largest line the shim accepts), once without credentials and once with 480 fake ones (a GitHub token, a .env password, a database URL every 64 KiB), which the scanning shim redacts (checked after timing); one session per configuration, interleaved in blocks; the shims' CPU time per call is read from /proc around every block (judged: it does not grow when other processes compete for the cores, round trips do); the scanner alone is timed by its CPU time in the bench process";

function secretsSection(figures: Awaited<ReturnType<typeof measureSecrets>>, scanner: ScannerFigures): string[] {
  return ["## Secret scanning", "", SECRETS_NOTE, "", renderTable(secretsRows(figures)), "", renderTable(scannerRows(scanner))];
}

const LOG_NOTE =
  "- audit: tools/call through `thoughtgate shim --server-id bench --events FILE --thoughtgate-config FILE`, FILE `audit: { arguments: hash }` (the hash-only audit, baseline) or `schema: 1` (arguments recorded, redacted: the default), one session each, interleaved in blocks; CPU per call from /proc around every block. log: `thoughtgate log --since 30d --server srv3` through the binary over a record written by test/bench/log-records.ts (sessions of 5,000 calls each over 60 days, ten servers, a tenth denied); the first run builds the index, the warm runs answer from it (and must answer the same), the last after one more session was appended. audit export: two \`thoughtgate wrap\` sessions whose user policy has \`telemetry.otlp\` (spans and the audit's OTLP log records), one collector answering (a loopback receiver in the bench process), one whose port is closed; the bench's client talks to each session's shim through the agent's stdio (test/bench/wrap-exec-agent.ts), round trips interleaved in blocks; the down session's /metrics read at the end";

function logSection(figures: LogFigures): string[] {
  return ["## The readable record (`thoughtgate log`)", "", LOG_NOTE, "", renderTable(logRows(figures)), "", `- the answer's last line: ${figures.answer}`];
}

/** `--only log`: the record's phase alone, for working on it. */
async function onlyLog(): Promise<void> {
  requireBinary();
  using work = tempDir("thoughtgate-bench-");
  const runId = Bun.randomUUIDv7();
  const server = [process.execPath, join(import.meta.dir, "bench-server.ts"), `--bench-run=${runId}`];
  const loadAtStart = loadavg()[0] ?? 0;
  const figures = await measureLog(server, work.path, runId, childEnv());
  const leftovers = processesWith(runId);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}`;
  const load = `1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`;
  console.log([`# thoughtgate benchmark: the readable record only${QUICK ? " (--quick)" : ""}`, "", `- date: ${new Date().toISOString()}`, `- machine: ${machine}; ${load}`, `- binary: dist/thoughtgate from ${sourceRevision()}`, "", ...logSection(figures)].join("\n"));
  if (leftovers.length > 0) process.exitCode = 1;
}

/** `--only secrets`: the secret scanning phase alone, for working on it. */
async function onlySecrets(): Promise<void> {
  requireBinary();
  const loadAtStart = loadavg()[0] ?? 0;
  using work = tempDir("thoughtgate-bench-");
  const runId = Bun.randomUUIDv7();
  const server = [process.execPath, join(import.meta.dir, "bench-server.ts"), `--bench-run=${runId}`];
  const figures = await measureSecrets(server, work.path, runId, childEnv());
  const scanner = measureScanner();
  const leftovers = processesWith(runId);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}`;
  const load = `1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`;
  const header = [`# thoughtgate shim benchmark: secret scanning only${QUICK ? " (--quick)" : ""}`, "", `- date: ${new Date().toISOString()}`, `- machine: ${machine}; ${load}`, `- binary: dist/thoughtgate from ${sourceRevision()}`];
  console.log([...header, "", ...secretsSection(figures, scanner)].join("\n"));
  if (leftovers.length > 0) process.exitCode = 1;
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  requireBinary();
  using work = tempDir("thoughtgate-bench-");
  const relay = await compile("byte-relay.ts", join(work.path, "byte-relay"));
  const parseRelay = await compile("parse-relay.ts", join(work.path, "parse-relay"));
  const agent = await compile("launch-agent.ts", join(work.path, "launch-agent"));
  const decider = await compile("echo-decider.ts", join(work.path, "echo-decider"));
  // Every server and wrapped agent (so every wrap too) carries the run id in a marker argument, and
  // the governance service in its policy file's name, so anything left behind can be found at the end.
  const runId = Bun.randomUUIDv7();
  const marker = `--bench-run=${runId}`;
  const server = [process.execPath, join(import.meta.dir, "bench-server.ts"), marker];
  const configs = configurations(server, relay, parseRelay, work.path);
  const env = childEnv();

  const version = Bun.spawnSync([BINARY, "--version"]).stdout.toString().trim();
  const build = sourceRevision();
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}, ${version}`;
  progress(`${machine}${QUICK ? " (quick run)" : ""}`);

  const pins = ONLY === null || ONLY === "pins" ? pinsSection(await measurePins(server, work.path, runId, env)) : "";
  if (ONLY === "pins") {
    console.log([`# thoughtgate shim benchmark, pinning phase only${QUICK ? " (--quick)" : ""}`, "", `- machine: ${machine}`, "", pins].join("\n"));
    return;
  }

  if (ONLY !== null && ONLY !== "remote" && ONLY !== "secrets" && ONLY !== "log") {
    const sections = ONLY === "governed" ? await governedOnly(server, relay, work.path, runId, env) : shimTables(await measureShimPhase(configs, env, partsOf(ONLY)));
    const leftovers = processesWith(runId);
    for (const pid of leftovers) process.kill(pid, "SIGKILL");
    console.log(
      [
        `# thoughtgate shim benchmark, ${ONLY} phase only${QUICK ? " (--quick)" : ""}`,
        "",
        `- date: ${new Date().toISOString()}`,
        `- machine: ${machine}; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
        `- binary: dist/thoughtgate built by \`bun run build.ts\` from ${build}`,
        "",
        sections,
        "",
        `- processes left behind: ${leftovers.length === 0 ? "none" : `${leftovers.length} (killed: ${leftovers.join(", ")})`}`,
      ].join("\n"),
    );
    if (leftovers.length > 0) process.exitCode = 1;
    return;
  }

  const remote = ONLY === null || ONLY === "remote" ? await measureRemote(marker, env) : new Map<ConfigName, number[]>();
  const remoteSection = (): string => [
    "## Remote servers (`shim --url`)",
    "",
    `- server: \`bun test/bench/bench-server.ts --http\` (Streamable HTTP on loopback, one JSON body per answer, no session); direct: the bench POSTs each tools/call itself (keep-alive \`fetch\`, the headers the shim sends); shim --url: \`thoughtgate shim --server-id bench --events none --url URL\` on stdio, the bench client writing its lines`,
    `- plan: ${count(PLAN.iterations)} sequential tools/call per figure after ${count(PLAN.warmup)} warm-up, in ${PLAN.blocks} interleaved blocks`,
    "",
    renderTable([...latencyRows("tools/call round trip p50", remote, 0.5, null), ...latencyRows("tools/call round trip p99", remote, 0.99, null)]),
  ].join("\n");
  if (ONLY === "remote") {
    console.log([`# thoughtgate shim benchmark, remote phase only${QUICK ? " (--quick)" : ""}`, "", `- machine: ${machine}`, "", remoteSection()].join("\n"));
    return;
  }

  const shimPhase = await measureShimPhase(configs, env, ALL_PARTS);
  const { sessions, memory } = shimPhase;
  if (!sessions || !memory) throw new Error("the shim phase ran without its sessions or memory");
  const events = eventsWritten(eventsPath(work.path, "session"));

  progress(`binary: --version × ${PLAN.versionRuns}`);
  const versionMs = median(wallTimes([BINARY, "--version"], PLAN.versionRuns));
  // The relay without arguments prints its usage and exits: a compiled Bun binary's bare start-up.
  const relayStartMs = median(wallTimes([relay], PLAN.versionRuns));

  const launch = await measureWrapLaunch(work.path, agent, marker, env);
  progress(`wrap rewrite: discover + rewrite of a 1 MB ~/.claude.json × ${WRAP_PLAN.rewrites + 1}, then restoreOwnedKeys`);
  const rewrite = measureRewrite(work.path, realpathSync(BINARY));

  const arbiter = await measureArbiter(work.path, decider, marker, env);

  progress("framing checks: validateLine and its duplicate-key/nesting scan, in the bench process");
  const framing = measureFramingChecks(QUICK);

  const governed = await measureGoverned(server, work.path, runId, writePolicySet(work.path), env);
  const secrets = await measureSecrets(server, work.path, runId, env);
  const scanner = measureScanner();
  const logFigures = await measureLog(server, work.path, runId, env);
  const hour = await measureHour();
  const hook = await measureHook(work.path, await compile("noop-hook.ts", join(work.path, "noop-hook")), marker, env);
  // Last: it loads Cedar's wasm into the bench process itself.
  const cedar = await measureCedar(work.path);

  const leftovers = processesWith(runId);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");

  const relayMemory = memory.get("relay");
  if (!relayMemory) throw new Error("no memory figures for the relay");
  const governance = governanceRows(governed, cedar, relayMemory.idle.rssKb);
  const decisions = [...governed.decisions].map(([decision, n]) => `${count(n)} ${decision}`).join(", ") || "none";
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
      "- direct: the client talks to `bun test/bench/bench-server.ts` itself; relay: compiled `test/bench/byte-relay.ts` (no parsing); shim: `thoughtgate shim --server-id bench --events none` (no audit); shim+events: the same with `--events FILE` (the audit every shim writes by default)",
      "",
      shimTables(shimPhase),
      "",
      renderTable(binary),
      "",
      `- shim+events session: ${events.events.toLocaleString("en-US")} events written for ${events.calls.toLocaleString("en-US")} tool calls; tool_call_end recorded for ${events.ended.toLocaleString("en-US")} of them (${events.ended === events.calls ? "every call answered is in the audit: PASS" : "MISS: calls missing from the audit"}); events lost to write errors: ${events.dropped?.toLocaleString("en-US") ?? "unknown"}`,
      "",
      "## Governance",
      "",
      `- governed sessions: a policy file whose first rule, \`ok\`, forwards \`echo\`, whose second sends every other tool to the ${CEDAR_PLAN.policies} Cedar policies below (so the engine loads them), and whose default denies; shim+engine: \`thoughtgate shim --server-id bench --thoughtgate-config FILE\` (the engine in the shim); shim+service: \`thoughtgate shim --server-id bench --governance-endpoint URL\` asking \`thoughtgate serve --thoughtgate-config FILE\` over its channel (one loopback WebSocket per shim); shim+session: \`thoughtgate shim --server-id bench -- SERVER\` (the entry wrap writes) with THOUGHTGATE_SESSION naming a session whose descriptor names that service (its lookup paid once, at start); start-up of these two against direct, ${PLAN.spawns} spawns each, interleaved`,
      `- plan: ${count(PLAN.iterations)} sequential tools/call per latency figure after ${count(PLAN.warmup)} warm-up, in ${PLAN.blocks} interleaved blocks; median of ${PLAN.throughputRounds} × ${count(GOVERNED_PIPELINED)} pipelined tools/call with at most ${PIPELINE_WINDOW} unanswered; Cedar: \`CedarPolicies.evaluate\` in the bench process, against the request's slice and against the whole set in ${CEDAR_PLAN.blocks} interleaved blocks after ${count(CEDAR_PLAN.warmup)} warm-up, ${CEDAR_PLAN.sizes.map((size) => `${count(size.evaluations)} and ${count(size.fullEvaluations)} evaluations at ${count(size.policies)} policies`).join(", ")}; service RSS is VmRSS, its baseline the relay's idle RSS`,
      "",
      renderTable(governance),
      "",
      `- service decisions (its /metrics): ${decisions}`,
      ...cedarNotes(cedar),
      "",
      ...secretsSection(secrets, scanner),
      "",
      ...logSection(logFigures),
      "",
      "## Wrap",
      "",
      `- start-up: \`thoughtgate wrap --agent-type custom --config-path mcp.json -- AGENT\` (three stdio servers, ${count(launch.configs[0]?.bytes ?? 0)} bytes) and \`thoughtgate wrap --agent-type claude-code -- AGENT\` (the 1 MB ~/.claude.json below) with the embedded default policy, against AGENT alone; AGENT: compiled \`test/bench/launch-agent.ts\`, which writes a line to the bench's pipe first thing and exits; ${WRAP_PLAN.launches} launches per configuration after one uncounted round, interleaved`,
      `- rewrite: \`discover("claude-code")\` + \`rewrite\` in the bench process on a generated ${count(rewrite.bytes)}-byte ~/.claude.json (${rewrite.projects} projects, 3 stdio servers and 1 remote at the top level; ${rewrite.owned} owned keys), a fresh text for each of ${WRAP_PLAN.rewrites} iterations after the first call; \`restoreOwnedKeys\` of the same file after the agent saved it (start count, a history item, the session id)`,
      "",
      renderTable(wrapRows(launch, rewrite)),
      "",
      `- configs after ${launch.runs} wrap runs: byte-identical to the originals, no backup or lock left (checked after each run)`,
      "",
      remoteSection(),
      "",
      pins,
      "",
      "## Arbiter",
      "",
      "- child: `bun test/bench/arbiter-codecli.ts`, a codecli that prints a line of output and then a `tool.request` (`requires_policy: true`) per step and times, on its own clock, from handing the request to its stdout to reading the matching `policy.decision` on its stdin",
      "- echo decider: compiled `test/bench/echo-decider.ts`, which splits the child's stdout into lines, passes output through and answers every request with allow at once (no engine, schema or audit); arbiter: `thoughtgate arbiter --thoughtgate-config FILE` with a rules-only policy whose first rule forwards the child's tool (default deny); arbiter+events: the same with `--events FILE`",
      `- plan: ${count(ARBITER_PLAN.decisions)} decisions per configuration in ${ARBITER_PLAN.blocks} blocks, one fresh session per block and configuration, in turn, each after ${count(ARBITER_PLAN.warmup)} uncounted decisions; every session must pass all its output lines through`,
      "",
      renderTable(arbiterRows(arbiter)),
      "",
      "## Framing checks",
      "",
      "- what each line's validation costs in the shim (src/stdio/validate-line.ts: UTF-8, JSON.parse, JSON-RPC shape) and how much of it is the scan that refuses duplicate names and deep nesting (src/stdio/json-shape.ts); median of many runs in the bench process",
      "",
      ...renderFramingChecks(framing),
      "",
      hourSection(hour),
      "",
      ...hookSection(hook),
      "",
      `- processes left behind: ${leftovers.length === 0 ? "none" : `${leftovers.length} (killed: ${leftovers.join(", ")})`}`,
      `- bench wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join("\n"),
  );
  if (leftovers.length > 0 || hourChecks(hour).length > 0) process.exitCode = 1;
}

const HOOK_NOTE =
  "- `thoughtgate hook claude-code` spawned by the bench with a PreToolUse JSON on stdin, timed from spawn to exit with the answer read (what the agent waits before each call), every answer checked; outside a session: HOME and XDG dirs in the bench's temp dir, the embedded default policy loaded and decided in the hook's process; in a wrap session: `thoughtgate wrap --agent-type custom` whose agent waits, the hook given its `THOUGHTGATE_SESSION`, the session's governance service deciding; baselines: `/bin/cat` as the hook, compiled test/bench/noop-hook.ts (reads the input, allows), `thoughtgate --version`";

function hookSection(figures: HookFigures): string[] {
  const rank = Math.ceil(0.99 * HOOK_PLAN.calls);
  const plan = `- plan: ${HOOK_PLAN.calls} spawns per configuration after ${HOOK_PLAN.warmup} uncounted, in interleaved rounds; p99 is nearest-rank (${rank === HOOK_PLAN.calls ? `of ${HOOK_PLAN.calls}, the slowest` : `the ${rank}th of ${HOOK_PLAN.calls}`})`;
  const against = AGAINST ? [`- --against: ${AGAINST} (${Bun.spawnSync([AGAINST, "--version"]).stdout.toString().trim()}), its own wrap session`] : [];
  return ["## An agent's own tool calls (`thoughtgate hook`)", "", HOOK_NOTE, plan, ...against, "", renderTable(hookRows(figures))];
}

/** `--only hook`: the hook's phase alone. */
async function onlyHook(): Promise<void> {
  requireBinary();
  const loadAtStart = loadavg()[0] ?? 0;
  using work = tempDir("thoughtgate-bench-");
  const runId = Bun.randomUUIDv7();
  const noop = await compile("noop-hook.ts", join(work.path, "noop-hook"));
  const figures = await measureHook(work.path, noop, `--bench-run=${runId}`, childEnv());
  const leftovers = processesWith(runId);
  for (const pid of leftovers) process.kill(pid, "SIGKILL");
  console.log([...phaseHeader("an agent's own tool calls only", loadAtStart), "", ...hookSection(figures)].join("\n"));
  if (leftovers.length > 0) process.exitCode = 1;
}

/** `--only shim-memory`: the shim's private dirty memory up to 120,000 calls (with `--against`, beside that binary's). */
async function onlyShimMemory(): Promise<void> {
  requireBinary();
  const loadAtStart = loadavg()[0] ?? 0;
  const section = await measureShimMemory();
  console.log([...phaseHeader("shim memory only", loadAtStart), "", ...section].join("\n"));
}

function phaseHeader(what: string, loadAtStart: number): string[] {
  const cpu = cpus();
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), Linux ${release()}, bun ${Bun.version}`;
  const load = `1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`;
  return [`# thoughtgate benchmark: ${what}${QUICK ? " (--quick)" : ""}`, "", `- date: ${new Date().toISOString()}`, `- machine: ${machine}; ${load}`, `- binary: dist/thoughtgate from ${sourceRevision()}`];
}

/** `--only hour`: the scripted hour alone. */
async function onlyHour(): Promise<void> {
  requireBinary();
  const figures = await measureHour();
  console.log([`# thoughtgate benchmark: the scripted hour only`, "", `- date: ${new Date().toISOString()}`, `- binary: dist/thoughtgate from ${sourceRevision()}`, "", hourSection(figures)].join("\n"));
  if (hourChecks(figures).length > 0) process.exitCode = 1;
}

// plan.ts refuses a phase it does not know.
if (ONLY === "secrets") await onlySecrets();
else if (ONLY === "log") await onlyLog();
else if (ONLY === "hour") await onlyHour();
else if (ONLY === "hook") await onlyHook();
else if (ONLY === "shim-memory") await onlyShimMemory();
else if (ONLY === "cedar") await runCedarAlone();
else await main();
