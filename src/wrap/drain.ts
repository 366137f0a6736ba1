import { appendFileSync } from "node:fs";
import { bestEffort } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { groupHasLiveMembers, isProcessRunning } from "../core/proc-stat.ts";
import type { Profile } from "../core/profile.ts";
import { readEvents, type Event } from "./session-record.ts";

/** What one shim of the session did, read back from the session record. */
type ShimRun = {
  pid: number;
  serverId: string;
  /** The MCP server's pid, which is also its process group (the shim starts it in a group of its own). */
  serverPid: number | null;
  ended: boolean;
  lastSeq: number;
  events: Event[];
};

export type DrainOptions = {
  eventsPath: string;
  runId: string;
  profile: Profile;
  /** How long live shims get to finish by themselves after the agent exited. */
  timeoutMs: number;
  /** How long a shim or server group gets after SIGTERM before SIGKILL. */
  killGraceMs: number;
};

export type DrainReport = {
  /** Shims that were gone without a run_end (an agent that SIGKILLs its servers): wrap wrote it for them. */
  endedForShim: number;
  /** Shims still running at the deadline, stopped by wrap. */
  stopped: number;
  /** Server process groups left running after their shim ended, ended by wrap. */
  serversEnded: number;
};

/**
 * The end of a wrap session. The agent has exited; each of its shims should see EOF, stop its
 * server and write its `run_end`. A shim that is already gone without one (an agent that SIGKILLs
 * its servers, as Copilot CLI does) is not waited for: wrap writes its `run_end` for it, marked
 * `written_by`. A shim still running at the deadline is stopped. Then any server process group still
 * alive is ended (SIGTERM, then SIGKILL), so the session leaves nothing behind.
 */
export async function drainShims(options: DrainOptions): Promise<DrainReport> {
  const report: DrainReport = { endedForShim: 0, stopped: 0, serversEnded: 0 };
  const deadline = performance.now() + options.timeoutMs;
  let stopSent = false;
  for (;;) {
    const runs = shimRuns(readEvents(options.eventsPath));
    const open = runs.filter((run) => !run.ended);
    const gone = open.filter((run) => !isProcessRunning(run.pid));
    // Read again before writing for a shim: its own run_end may have landed since.
    if (gone.length > 0) {
      const fresh = new Set(shimRuns(readEvents(options.eventsPath)).filter((run) => !run.ended).map((run) => run.pid));
      for (const run of gone) {
        if (!fresh.has(run.pid)) continue;
        writeRunEndFor(run, options, stopSent ? "stopped by wrap" : "gone without a run_end");
        report.endedForShim += 1;
      }
    }
    const live = open.filter((run) => isProcessRunning(run.pid));
    if (live.length === 0) {
      report.serversEnded = await endServerGroups(runs, options.killGraceMs);
      return report;
    }
    const now = performance.now();
    if (!stopSent && now > deadline) {
      log.warn(`${live.length} shim(s) still running ${options.timeoutMs} ms after the agent exited: stopping them`);
      for (const run of live) bestEffort(() => process.kill(run.pid, "SIGTERM"));
      report.stopped = live.length;
      stopSent = true;
    } else if (stopSent && now > deadline + options.killGraceMs * 4) {
      for (const run of live) bestEffort(() => process.kill(run.pid, "SIGKILL"));
    }
    await Bun.sleep(50);
  }
}

/** Pair every shim's events with its run: `run_start` and `run_end` carry the shim's pid; the rest its server id. */
function shimRuns(events: Event[]): ShimRun[] {
  const runs: ShimRun[] = [];
  const latest = new Map<string, ShimRun>();
  for (const event of events) {
    const serverId = String(event.server_id ?? "");
    if (event.type === "run_start" && typeof event.pid === "number") {
      const run: ShimRun = { pid: event.pid, serverId, serverPid: null, ended: false, lastSeq: Number(event.seq ?? 0), events: [event] };
      runs.push(run);
      latest.set(serverId, run);
      continue;
    }
    const run = typeof event.pid === "number" && event.type === "run_end" ? runs.find((r) => r.pid === event.pid && !r.ended) : latest.get(serverId);
    if (!run) continue;
    run.events.push(event);
    run.lastSeq = Math.max(run.lastSeq, Number(event.seq ?? 0));
    if (event.type === "server_state" && event.state === "running" && typeof event.pid === "number") run.serverPid = event.pid;
    if (event.type === "run_end") run.ended = true;
  }
  return runs;
}

/** The `run_end` a shim could not write, from what it did write. Counts of raw messages are not known (0). */
function writeRunEndFor(run: ShimRun, options: DrainOptions, why: string): void {
  const count = (type: string, match: (event: Event) => boolean = () => true) => run.events.filter((e) => e.type === type && match(e)).length;
  const summary = {
    calls_total: count("tool_call_start"),
    calls_forwarded: count("tool_call_decision", (e) => e.decision === "forward"),
    calls_denied: count("tool_call_decision", (e) => e.decision === "deny"),
    calls_errored: count("tool_call_end", (e) => e.status === "error" || e.status === "server_unavailable"),
    messages_agent_to_server: 0,
    messages_server_to_agent: 0,
    framing_errors: count("framing_error"),
    smuggling_attempts: count("framing_error", (e) => e.error === "SmugglingAttempt"),
    orphaned_requests: count("orphaned_request"),
    events_dropped: 0,
  };
  const now = new Date().toISOString();
  const event = {
    v: 1,
    type: "run_end",
    ts: now,
    run_id: options.runId,
    server_id: run.serverId,
    profile: options.profile,
    seq: run.lastSeq + 1,
    ended_at: now,
    status: "killed",
    exit_code: null,
    pid: run.pid,
    written_by: "thoughtgate wrap",
    detail: `the shim (pid ${run.pid}) ${why}; this run_end is reconstructed from its events`,
    summary,
  };
  appendFileSync(options.eventsPath, `${JSON.stringify(event)}\n`, { mode: 0o600 });
  run.ended = true;
}

/** End every server process group of the session that is still alive; how many there were. */
async function endServerGroups(runs: ShimRun[], graceMs: number): Promise<number> {
  const alive = [...new Set(runs.map((run) => run.serverPid).filter((pid): pid is number => pid !== null))].filter(groupHasLiveMembers);
  if (alive.length === 0) return 0;
  log.warn(`${alive.length} MCP server process group(s) outlived their shim: ending them`);
  for (const pgid of alive) bestEffort(() => process.kill(-pgid, "SIGTERM"));
  const deadline = performance.now() + graceMs;
  while (alive.some(groupHasLiveMembers) && performance.now() < deadline) await Bun.sleep(25);
  for (const pgid of alive) if (groupHasLiveMembers(pgid)) bestEffort(() => process.kill(-pgid, "SIGKILL"));
  return alive.length;
}
