import { defineCommand } from "citty";
import { resolve } from "node:path";
import { EXIT, ThoughtGateError, usageError } from "../core/errors.ts";
import { DECISION_FILTERS, type DecisionFilter } from "../record/log-call.ts";
import { parsePointInTime, type LogFilter } from "../record/log-filter.ts";
import { RecordIndex } from "../record/record-index.ts";
import { commonArgs, givenOrAbsent, rejectUnknownFlags } from "./_shared.ts";
import { renderCall, renderFollowHeader, renderFollowRow, renderJson, renderTable } from "./_log-render.ts";
import { repeated } from "./_shim-sides.ts";

const args = {
  since: { type: "string", description: "Calls from this long ago (2h, 7d) or this date (2026-11-01, 2026-11-01T14:30) on", valueHint: "WHEN" },
  until: { type: "string", description: "Calls up to this long ago or this date", valueHint: "WHEN" },
  server: { type: "string", description: "Calls to this server (its id: the name in the agent's config)", valueHint: "ID" },
  tool: { type: "string", description: "Calls of tools matching this glob (write_*, *file*)", valueHint: "GLOB" },
  decision: { type: "string", description: `Only ${DECISION_FILTERS.join("|")}; repeat or join with commas for any of them`, valueHint: "WHICH" },
  agent: { type: "string", description: "Calls of this agent (its program name: claude, codex; a glob)", valueHint: "NAME" },
  project: { type: "string", description: "Calls made in this project (its directory, or its folder name)", valueHint: "DIR" },
  session: { type: "string", description: "Calls of this wrap session (its id, or its first characters)", valueHint: "ID" },
  limit: { type: "string", description: "At most this many calls, newest first (default 100; 0: all)", valueHint: "N" },
  json: { type: "boolean", description: "One JSON object a line (with --show: the call as JSON)" },
  follow: { type: "boolean", description: "Print each matching call as it ends, until interrupted" },
  show: { type: "string", description: "One call whole: arguments, result size, secrets found, the gates' trail, who decided and why", valueHint: "CALL_ID" },
  prune: { type: "boolean", description: "Remove the record files (and index rows) whose newest entry is older than --older-than" },
  "older-than": { type: "string", description: "With --prune: how old (90d) or a date", valueHint: "WHEN" },
  ...commonArgs,
} as const;

const DEFAULT_LIMIT = 100;

export default defineCommand({
  meta: { name: "log", description: "What your agents did: every governed call of every session and standalone run, newest first" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    if (parsed.prune) return prune(parsed["older-than"], rawArgs);
    if (parsed["older-than"] !== undefined) throw usageError("--older-than goes with --prune");
    const filter = filterOf(parsed, rawArgs);
    const index = RecordIndex.open();
    try {
      index.update();
      if (parsed.show !== undefined) return show(index, givenOrAbsent(parsed.show, "--show") ?? "", parsed.json === true);
      if (parsed.follow) return await follow(index, filter, parsed.json === true);
      const limit = limitOf(parsed.limit);
      const { calls, total } = index.query(filter, limit === 0 ? Number.MAX_SAFE_INTEGER : limit);
      await Bun.write(Bun.stdout, parsed.json ? calls.map(renderJson).join("") : renderTable(calls, total));
      return EXIT.ok;
    } finally {
      index.close();
    }
  },
});

type Parsed = { since?: string; until?: string; server?: string; tool?: string; agent?: string; project?: string; session?: string };

function filterOf(parsed: Parsed, rawArgs: string[]): LogFilter {
  const now = Date.now();
  const filter: LogFilter = {};
  const since = givenOrAbsent(parsed.since, "--since");
  const until = givenOrAbsent(parsed.until, "--until");
  if (since !== undefined) filter.since = parsePointInTime(since, "--since", now);
  if (until !== undefined) filter.until = parsePointInTime(until, "--until", now);
  if (filter.since !== undefined && filter.until !== undefined && filter.since > filter.until) throw usageError("--since is after --until: no call can match");
  const server = givenOrAbsent(parsed.server, "--server");
  const tool = givenOrAbsent(parsed.tool, "--tool");
  const agent = givenOrAbsent(parsed.agent, "--agent");
  const project = givenOrAbsent(parsed.project, "--project");
  const session = givenOrAbsent(parsed.session, "--session");
  if (server !== undefined) filter.server = server;
  if (tool !== undefined) filter.tool = tool;
  if (agent !== undefined) filter.agent = agent;
  // A path given relative to here means the directory it names.
  if (project !== undefined) filter.project = project.includes("/") || project === "." || project === ".." ? resolve(project) : project;
  if (session !== undefined) filter.session = session;
  const decisions = repeated(rawArgs, "decision").flatMap((value) => value.split(",")).map((value) => value.trim());
  for (const decision of decisions) {
    if (!(DECISION_FILTERS as readonly string[]).includes(decision)) throw usageError(`--decision: expected ${DECISION_FILTERS.join("|")}, got ${JSON.stringify(decision)}`);
  }
  if (decisions.length > 0) filter.decisions = decisions as DecisionFilter[];
  return filter;
}

function limitOf(value: string | undefined): number {
  const given = givenOrAbsent(value, "--limit");
  if (given === undefined) return DEFAULT_LIMIT;
  if (!/^\d+$/.test(given)) throw usageError(`--limit: expected a number of calls, got ${JSON.stringify(given)}`);
  return Number(given);
}

async function show(index: RecordIndex, id: string, json: boolean): Promise<number> {
  const found = index.find(id);
  if (found.length === 0) throw new ThoughtGateError("IO", `no call ${JSON.stringify(id)} in the record (thoughtgate log lists them)`);
  if (found.length > 1 && found[0]?.call_id !== id) throw usageError(`--show ${id}: more than one call has an id that starts or ends with it; give more of the id`);
  const call = found[0];
  if (!call) return EXIT.error;
  await Bun.write(Bun.stdout, json ? renderJson(call) : renderCall(call));
  return EXIT.ok;
}

/** Until SIGINT or SIGTERM: each matching call as it ends. */
async function follow(index: RecordIndex, filter: LogFilter, json: boolean): Promise<number> {
  const { followCalls } = await import("../record/follow.ts");
  if (!json) process.stdout.write(renderFollowHeader());
  const follower = followCalls({ index, filter, onCall: (call) => process.stdout.write(json ? renderJson(call) : renderFollowRow(call)) });
  await new Promise<void>((done) => {
    process.once("SIGINT", () => done());
    process.once("SIGTERM", () => done());
  });
  follower.stop();
  return EXIT.ok;
}

async function prune(olderThan: string | undefined, rawArgs: string[]): Promise<number> {
  const given = givenOrAbsent(olderThan, "--older-than");
  if (given === undefined) throw usageError("--prune needs --older-than (e.g. --older-than 90d)");
  const others = ["since", "until", "server", "tool", "decision", "agent", "project", "session", "limit", "json", "follow", "show"].filter((flag) => rawArgs.some((arg) => arg === `--${flag}` || arg.startsWith(`--${flag}=`)));
  if (others.length > 0) throw usageError(`--prune removes whole files by age only: --${others[0]} does not go with it`);
  const cutoff = parsePointInTime(given, "--older-than");
  const { pruneRecord } = await import("../record/prune.ts");
  const index = RecordIndex.open();
  try {
    const result = pruneRecord(index, cutoff);
    const kept = result.kept.length > 0 ? ` (${result.kept.length} kept: still being written by a running wrap or shim)` : "";
    await Bun.write(Bun.stdout, `removed ${result.files} record file${result.files === 1 ? "" : "s"} (${result.calls} call${result.calls === 1 ? "" : "s"}) older than ${given}${kept}\n`);
    return EXIT.ok;
  } finally {
    index.close();
  }
}
