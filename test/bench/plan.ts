/**
 * What the bench runs and what it holds the shim to: iteration counts (`--quick` for a shorter
 * run), the targets each figure is held to (docs/benchmarks.md), the requests, and the configurations' names.
 */
import { existsSync, realpathSync } from "node:fs";
import type { Call, Throughput } from "./bench-client.ts";
import type { Memory } from "./report.ts";

export const QUICK = process.argv.includes("--quick");
/**
 * `--only PHASE`: run the one phase named (while working on it); the whole bench otherwise.
 * Phases: `remote`; `shim` (latency, throughput, start-up and memory of the proxies); `startup`,
 * `memory` and `throughput` (one part of `shim` each, throughput without the latency blocks);
 * `governed` (the governance section without Cedar alone); `pins` (pinned definitions); `secrets`
 * (secret scanning); `cedar` (one Cedar evaluation, sliced and whole, at 50 and 5,000 policies); `log` (the
 * audit's cost with arguments recorded, and `thoughtgate log` over a million recorded calls); `hour`
 * (the scripted hour: prompts a person sees in an ordinary hour of work, hour.ts); `hook` (an agent's own
 * tool call through `thoughtgate hook`, hook.ts); `shim-memory` (a shim's private dirty memory up to
 * 120,000 calls, shim-memory.ts).
 */
export const ONLY = process.argv.includes("--only") ? (process.argv[process.argv.indexOf("--only") + 1] ?? null) : null;
export const PHASES = ["remote", "shim", "startup", "memory", "throughput", "governed", "pins", "secrets", "cedar", "log", "hour", "hook", "shim-memory"] as const;
if (ONLY !== null && !(PHASES as readonly string[]).includes(ONLY)) throw new Error(`--only: unknown phase ${JSON.stringify(ONLY)} (one of ${PHASES.join(", ")})`);
/**
 * `--against OTHER_BINARY`: an older thoughtgate measured beside dist/thoughtgate in the same run
 * (the shim's sessions, the shim's memory, the hook), with the ratio of ours to it.
 */
export const AGAINST = againstBinary();
function againstBinary(): string | null {
  const at = process.argv.indexOf("--against");
  if (at === -1) return null;
  const binary = process.argv[at + 1];
  if (binary === undefined || !existsSync(binary)) throw new Error(`--against: no binary at ${JSON.stringify(binary)}`);
  return realpathSync(binary);
}
export const PLAN = QUICK
  ? { warmup: 200, iterations: 1_000, blocks: 10, pipelined: 10_000, throughputRounds: 2, spawns: 5, versionRuns: 10 }
  : { warmup: 1_000, iterations: 5_000, blocks: 25, pipelined: 50_000, throughputRounds: 3, spawns: 20, versionRuns: 20 };
/** Hook processes timed per configuration, after uncounted rounds (hook.ts); p99 of 60 is the second slowest. */
export const HOOK_PLAN = QUICK ? { calls: 15, warmup: 1 } : { calls: 60, warmup: 2 };
/** Pipelined calls per round in the governed sessions (the rest of their plan is `PLAN`'s). */
export const GOVERNED_PIPELINED = QUICK ? 4_000 : 20_000;
/**
 * Cedar alone: evaluations timed one by one in the bench process, after a warm-up, at each size,
 * against the request's slice and against the whole set in turn over `blocks` blocks. The whole
 * set of 5,000 takes ~10 ms an evaluation, hence fewer of them. `policies`: the set the governed
 * sessions load.
 */
export const CEDAR_PLAN = QUICK
  ? {
      policies: 50,
      warmup: 5_000,
      blocks: 5,
      sizes: [
        { policies: 50, evaluations: 2_000, fullEvaluations: 2_000 },
        { policies: 5_000, evaluations: 2_000, fullEvaluations: 100 },
      ],
    }
  : {
      policies: 50,
      warmup: 20_000,
      blocks: 10,
      sizes: [
        { policies: 50, evaluations: 10_000, fullEvaluations: 10_000 },
        { policies: 5_000, evaluations: 10_000, fullEvaluations: 500 },
      ],
    };
/**
 * wrap: launches of the agent per configuration, after one uncounted round; and
 * discover + rewrite of the 1 MB `~/.claude.json` in the bench process, after one first call.
 */
export const WRAP_PLAN = QUICK ? { launches: 7, rewrites: 20 } : { launches: 15, rewrites: 50 };
/**
 * arbiter: decisions timed per configuration, split into blocks of one fresh session
 * each (in turn across configurations), each session warming up first.
 */
export const ARBITER_PLAN = QUICK ? { decisions: 2_000, blocks: 4, warmup: 200 } : { decisions: 10_000, blocks: 10, warmup: 300 };
/**
 * Secret scanning (secrets.ts): sequential round trips per configuration, in blocks, for a small
 * result and for each kind of 10 MiB result, after a warm-up.
 */
export const SECRETS_PLAN = QUICK
  ? { small: 1_000, big: 10, blocks: 5, warmupSmall: 200, warmupBig: 2 }
  : { small: 5_000, big: 40, blocks: 10, warmupSmall: 1_000, warmupBig: 3 };
/**
 * The readable record (log.ts): audited calls per configuration and shape, in blocks, after a
 * warm-up; the record `log` is asked over (sessions × calls each: a million), and its warm runs.
 */
export const LOG_PLAN = QUICK
  ? { calls: 1_000, blocks: 5, warmup: 200, sessions: 20, callsPerSession: 5_000, warmRuns: 5 }
  : { calls: 5_000, blocks: 10, warmup: 1_000, sessions: 200, callsPerSession: 5_000, warmRuns: 10 };
/** The line size of the big results: the largest the shim accepts (its 10 MiB cap), less the newline. */
export const BIG_RESULT_BYTES = 10 * 1024 * 1024 - 1;
export const CONCURRENT_PROXIES = 5;
/** Pipelined calls each proxy carries before its memory is read: a warm, working proxy, not an idle one. */
export const MEMORY_WARMUP_CALLS = 2_000;
/** Calls in all after which memory is read again: it must not grow with the number of calls. */
export const MEMORY_LONG_CALLS = 20_000;
/**
 * After each working figure, the proxies are left quiet this long and read again: a shim gives
 * back what a burst left behind once it has been quiet for a second (src/core/idle-collector.ts).
 */
export const MEMORY_SETTLE_MS = 2_500;
/**
 * The bounded pipelined run keeps at most this many requests unanswered (~55 KB of responses),
 * less than one pipe buffer, so it measures throughput even where an unbounded run deadlocks.
 */
export const PIPELINE_WINDOW = 256;

/**
 * The shim's targets, added to the direct figures or relative to the relays; PSS idle, after
 * `MEMORY_WARMUP_CALLS`, and after `MEMORY_LONG_CALLS` at most `flatPssKb` above the working figure
 * (no growth with the number of calls: what is left is the allocator's noise).
 */
export const TARGET = {
  addedP50Ms: 0.15,
  addedP99Ms: 1,
  throughputVsRelay: 0.85,
  throughputVsParseRelay: 0.95,
  pssKb: 12 * 1024,
  workingPssKb: 15 * 1024,
  flatPssKb: 1024,
  /** Spawn → first response, as a multiple of the server's own. */
  startupVsDirect: 2,
};
/**
 * Governance's targets: a governed call's added p99, one Cedar evaluation's p99 at 50
 * policies and at 5,000 against 50, the service's RSS.
 */
export const GOVERNANCE_TARGET = { addedP99Ms: 1, decisionsPerSecond: 50_000, cedarP99Ms: 0.2, cedarP99GrowthAt5000: 2, serviceRssKb: 80 * 1024 };
/** Wrap's targets: command → agent launched, added to launching it directly; rewriting a 1 MB `~/.claude.json`. */
export const WRAP_TARGET = { addedLaunchMs: 150, rewriteMs: 20 };
/**
 * Secret scanning's targets: a small result stays within the shim's own target (TARGET, added to
 * direct); a 10 MiB result costs the shim at most this much more CPU time with scanning on than
 * off (no figure in the specification: 2.5 ms per MiB, less than half of what the shim already
 * spends reading and validating such a line).
 */
export const SECRETS_TARGET = { bigAddedCpuMs: 25 };
/** The arbiter's target: what `thoughtgate arbiter` adds to a decision's p99 over the echo decider. */
export const ARBITER_TARGET = { addedP99Ms: 1 };

export const INITIALIZE: Call = {
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "thoughtgate-bench", version: "1.0.0" } },
};
export const PING: Call = { method: "ping", params: {} };
export const TOOLS_LIST: Call = { method: "tools/list", params: {} };
/** The pinning phase's list: as many tools as a filesystem or GitHub server serves. */
export const PINS_TOOL_COUNT = 40;
export const ECHO_CALL: Call = {
  method: "tools/call",
  params: { name: "echo", arguments: { message: "hello from the benchmark", count: 3 } },
};

export type ConfigName = "direct" | "relay" | "parse relay" | "shim" | "shim, --against" | "shim+events" | "shim+engine" | "shim+service" | "shim+session" | "shim --url" | "shim, pin: off" | "shim, pin: strict";
/** `tag` names the event file of a `--events` run; `env` is added to the bench's child environment. */
export type Config = { name: ConfigName; command: (tag: string) => string[]; env?: Record<string, string> };
/** `cpu`: the proxy process's CPU time (user + system) over every pipelined round that completed, and their calls. */
export type SessionFigures = { ping: number[]; call: number[]; windowed: Throughput[]; unbounded: Throughput[]; cpu: { ms: number; calls: number } };

/**
 * Per proxy: idle after `initialize`, at once after `MEMORY_WARMUP_CALLS` and after
 * `MEMORY_LONG_CALLS` calls, and each of those again after `MEMORY_SETTLE_MS` of quiet.
 */
export type MemoryFigures = { idle: Memory; working: Memory; workingSettled: Memory; long: Memory; longSettled: Memory };
