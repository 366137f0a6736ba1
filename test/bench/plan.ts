/**
 * What the bench runs and what it holds the shim to: iteration counts (`--quick` for a shorter
 * run), the issue's targets, the requests, and the configurations' names.
 */
import type { Call, Throughput } from "./bench-client.ts";
import type { Memory } from "./report.ts";

export const QUICK = process.argv.includes("--quick");
export const PLAN = QUICK
  ? { warmup: 200, iterations: 1_000, blocks: 10, pipelined: 10_000, throughputRounds: 2, spawns: 5, versionRuns: 10 }
  : { warmup: 1_000, iterations: 5_000, blocks: 25, pipelined: 50_000, throughputRounds: 3, spawns: 20, versionRuns: 20 };
export const CONCURRENT_PROXIES = 5;
/** Pipelined calls each proxy carries before its memory is read: a warm, working proxy, not an idle one. */
export const MEMORY_WARMUP_CALLS = 2_000;
/**
 * The bounded pipelined run keeps at most this many requests unanswered (~55 KB of responses),
 * less than one pipe buffer, so it measures throughput even where an unbounded run deadlocks.
 */
export const PIPELINE_WINDOW = 256;

/** The targets for the shim, added to the direct figures or relative to the relay. */
export const TARGET = { addedP50Ms: 0.15, addedP99Ms: 1, throughputVsRelay: 0.85, pssKb: 12 * 1024 };

export const INITIALIZE: Call = {
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "thoughtgate-bench", version: "1.0.0" } },
};
export const PING: Call = { method: "ping", params: {} };
export const ECHO_CALL: Call = {
  method: "tools/call",
  params: { name: "echo", arguments: { message: "hello from the benchmark", count: 3 } },
};

export type ConfigName = "direct" | "relay" | "shim" | "shim+events";
/** `tag` names the event file of a `--events` run. */
export type Config = { name: ConfigName; command: (tag: string) => string[] };
export type SessionFigures = { ping: number[]; call: number[]; windowed: Throughput[]; unbounded: Throughput[] };

export type MemoryFigures = { idle: Memory; working: Memory };
