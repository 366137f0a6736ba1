/**
 * Cedar alone: `CedarPolicies.load` and `.evaluate` from src/governance/engine/cedar.ts, called in the
 * bench process, each evaluation timed on its own, at each size of `CEDAR_PLAN.sizes`: against the
 * request's slice (what the gate does) and against the whole set (the baseline), in the same
 * interleaved blocks. The policy sets are generated: permits and forbids whose scopes name one tool
 * on one server, and `MATCH_ALL.length` policies whose scopes match every request. The governed
 * sessions load the `CEDAR_PLAN.policies` set, so the service's memory includes its Cedar engine.
 *
 * `bun run bench --only cedar` or `bun test/bench/cedar-eval.ts [--quick]` runs this part alone.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import type { CedarRequest } from "../../src/governance/engine/cedar.ts";
import { tempDir } from "../support/harness.ts";
import { CEDAR_PLAN, QUICK } from "./plan.ts";
import { progress, renderTable } from "./report.ts";
import { threadCpuMs } from "./thread-cpu.ts";

const SERVERS = ["github", "filesystem", "bench"] as const;
const TOOL_CALL = 'action == ThoughtGate::Action::"tools/call"';
const uid = (server: string, tool: string) => `ThoughtGate::ToolCall::"${server}/${tool}"`;

/** Guards every call goes through whatever its tool; an index cannot leave them out. */
const MATCH_ALL = [
  `@id("any-forbid-etc")
forbid (principal, action, resource)
when { resource has arguments && resource.arguments has path && resource.arguments.path like "/etc/*" };`,
  `@id("any-forbid-force")
forbid (principal, ${TOOL_CALL}, resource)
when { resource.arguments has force && resource.arguments.force == true };`,
  `@id("any-forbid-frozen")
forbid (principal, action, resource)
when { context.policy_id == "frozen" };`,
  `@id("any-permit-list")
permit (principal, ${TOOL_CALL}, resource)
when { resource.name like "list_*" };`,
  `@id("any-permit-methods")
permit (principal, action == ThoughtGate::Action::"mcp/method", resource);`,
];

/**
 * `MATCH_ALL`, then four policies per family `k` (on server `home(k)`), until there are `count`:
 * - permit `tool_<k>` with a `limit` of at most 10,000; forbid it with a `limit` above `100·(k+1)`;
 * - permit `files_<k>` to read under `/srv/<k>/`; forbid it to read `/srv/<k>/secret*`.
 */
export function generatePolicies(count: number): string[] {
  const policies = [...MATCH_ALL];
  for (let i = 0; policies.length < count; i++) {
    const k = Math.floor(i / 4);
    const server = home(k);
    const scope = (tool: string) => `(principal, ${TOOL_CALL}, resource == ${uid(server, tool)})`;
    const policy = [
      `@id("permit-tool-${k}")\npermit ${scope(`tool_${k}`)}\nwhen { resource.arguments has limit && resource.arguments.limit <= 10000 };`,
      `@id("forbid-limit-${k}")\nforbid ${scope(`tool_${k}`)}\nwhen { resource.arguments has limit && resource.arguments.limit > ${100 * (k + 1)} };`,
      `@id("permit-read-${k}")\npermit ${scope(`files_${k}`)}\nwhen { resource.arguments has path && resource.arguments.path like "/srv/${k}/*" };`,
      `@id("forbid-secret-${k}")\nforbid ${scope(`files_${k}`)}\nwhen { resource.arguments has path && resource.arguments.path like "/srv/${k}/secret*" };`,
    ][i % 4];
    policies.push(policy as string);
  }
  return policies;
}

function home(k: number): string {
  return SERVERS[k % SERVERS.length] as string;
}

/** A policy file holds at most 1 MiB (docs/governance.md): a larger set is split over several. */
const POLICIES_PER_FILE = 1_000;

/** The argument types the generated policies read (cedar-schema.ts: tool arguments have no shape until declared). */
const ARGUMENTS_SCHEMA = "namespace ThoughtGate { type Arguments = { path?: String, limit?: Long, force?: Bool }; }\n";

export type PolicySet = { policies: string[]; schema: string };

/** Write a `count`-policy set into `dir`, and the schema of the arguments it reads; returns the files' paths. */
export function writePolicySet(dir: string, count = CEDAR_PLAN.policies): PolicySet {
  const policies = generatePolicies(count);
  const schema = join(dir, "bench-arguments.cedarschema");
  writeFileSync(schema, ARGUMENTS_SCHEMA);
  const files: string[] = [];
  for (let start = 0; start < policies.length; start += POLICIES_PER_FILE) {
    const file = join(dir, `bench-${count}-${files.length}.cedar`);
    writeFileSync(file, `${policies.slice(start, start + POLICIES_PER_FILE).join("\n\n")}\n`);
    files.push(file);
  }
  return { policies: files, schema };
}

/**
 * Eight requests for each of `REQUESTED_FAMILIES` families spread over the set: a tool on its own
 * server with a small and a large `limit` (permitted, forbidden) and on another server (no permit:
 * only the match-all policies apply), files inside and outside the permitted tree, a secret on its
 * server and on another, and a `list_*` tool no family names.
 */
const REQUESTED_FAMILIES = 12;

export function requests(policies: number): CedarRequest[] {
  const families = Math.ceil((policies - MATCH_ALL.length) / 4);
  const out: CedarRequest[] = [];
  const base = { user: "bench", method: "tools/call", policyId: null, project: "/srv/project", cwd: "/srv/project" } as const;
  for (let j = 0; j < Math.min(REQUESTED_FAMILIES, families); j++) {
    // Whole families only: the last one may be cut short.
    const k = Math.floor((j * (families - 1)) / REQUESTED_FAMILIES);
    const own = home(k);
    const other = home(k + 1);
    const query = { query: `issues labelled bug ${k}`, options: { recursive: true, depth: k, tags: ["a", "b"] } };
    out.push(
      { ...base, serverId: own, name: `tool_${k}`, arguments: { ...query, limit: 50 } },
      { ...base, serverId: own, name: `tool_${k}`, arguments: { ...query, limit: 100 * (k + 1) + 1 } },
      { ...base, serverId: other, name: `tool_${k}`, arguments: { ...query, limit: 50 } },
      { ...base, serverId: own, name: `files_${k}`, arguments: { path: `/srv/${k}/notes.txt`, encoding: "utf8" } },
      { ...base, serverId: own, name: `files_${k}`, arguments: { path: `/srv/${k}/secret.key`, encoding: "utf8" } },
      { ...base, serverId: own, name: `files_${k}`, arguments: { path: "/etc/passwd" } },
      { ...base, serverId: other, name: `files_${k}`, arguments: { path: `/srv/${k}/secret.key` } },
      { ...base, serverId: own, name: "list_issues", arguments: query },
    );
  }
  return out;
}

export type CedarRun = {
  policies: number;
  /** Milliseconds per evaluation, against the request's slice and against the whole set: wall clock, and this thread's CPU time. */
  sliced: number[];
  full: number[];
  slicedCpu: number[];
  fullCpu: number[];
  requests: number;
  allowed: number;
  /** Denials no forbid decided: no permit matched (Cedar is default-deny). */
  deniedByDefault: number;
  deniedByForbid: number;
  /** How many policies decided at least one request. */
  policiesDeciding: number;
};

/** `control`: a fixed computation timed in the same blocks (`fixedWork`). */
export type CedarFigures = { runs: CedarRun[]; control: { wall: number[]; cpu: number[] } };

export async function measureCedar(dir: string): Promise<CedarFigures> {
  // Imported here, not at the top: the wasm engine (tens of MB) stays out of the bench process
  // until every process measurement is done.
  const { CedarPolicies } = await import("../../src/governance/engine/cedar.ts");
  const runs: CedarRun[] = [];
  const control = { wall: [] as number[], cpu: [] as number[] };
  for (let i = 0; i < CEDAR_PLAN.warmup; i++) fixedWork();
  for (const size of CEDAR_PLAN.sizes) {
    progress(`Cedar: ${size.policies} policies, ${size.evaluations} evaluations sliced and ${size.fullEvaluations} of the whole set`);
    const policies = CedarPolicies.load(writePolicySet(dir, size.policies));
    if (policies.policyIds.length !== size.policies) throw new Error(`expected ${size.policies} Cedar policies, loaded ${policies.policyIds.length}`);
    const variants = requests(size.policies);
    const run: CedarRun = { policies: size.policies, sliced: [], full: [], slicedCpu: [], fullCpu: [], requests: variants.length, allowed: 0, deniedByDefault: 0, deniedByForbid: 0, policiesDeciding: 0 };
    const deciding = new Set<string>();
    for (const request of variants) {
      const verdict = policies.evaluate(request);
      // An error would mean a policy failed to evaluate: the figures would time the wrong path.
      if (verdict.decision === "error") throw new Error(`Cedar evaluation failed for ${request.name}: ${verdict.reason}`);
      const full = policies.evaluate(request, "full");
      if (!Bun.deepEquals(verdict, full)) throw new Error(`the slice and the whole set disagree on ${JSON.stringify(request)}: ${JSON.stringify([verdict, full])}`);
      if (verdict.decision === "allow") run.allowed += 1;
      else if (verdict.policies.length === 0) run.deniedByDefault += 1;
      else run.deniedByForbid += 1;
      for (const id of verdict.policies) deciding.add(id);
    }
    run.policiesDeciding = deciding.size;

    for (let i = 0; i < CEDAR_PLAN.warmup; i++) {
      const request = variants[i % variants.length] as CedarRequest;
      policies.evaluate(request);
      if (i < size.fullEvaluations / 10) policies.evaluate(request, "full");
    }
    for (let block = 0; block < CEDAR_PLAN.blocks; block++) {
      for (const [over, count, wall, cpu] of [
        ["sliced", size.evaluations, run.sliced, run.slicedCpu],
        ["full", size.fullEvaluations, run.full, run.fullCpu],
      ] as const) {
        // Each part of a block starts from a collected heap, so it pays for its own garbage and not
        // for the other's (the whole set's, or the earlier phases' pipe chunks and samples).
        Bun.gc(true);
        for (let i = 0; i < count / CEDAR_PLAN.blocks; i++) {
          const request = variants[(block * count + i) % variants.length] as CedarRequest;
          timed(wall, cpu, () => policies.evaluate(request, over));
        }
      }
      Bun.gc(true);
      for (let i = 0; i < size.evaluations / CEDAR_PLAN.blocks; i++) timed(control.wall, control.cpu, fixedWork);
    }
    runs.push(run);
  }
  return { runs, control };
}

function timed(wall: number[], cpu: number[], work: () => unknown): void {
  const cpuStarted = threadCpuMs();
  const started = performance.now();
  work();
  wall.push(performance.now() - started);
  cpu.push(threadCpuMs() - cpuStarted);
}

const CONTROL_DATA = Float64Array.from({ length: 4_096 }, (_, i) => i);

/**
 * The control: the same arithmetic every time (~0.05 ms here), timed like an evaluation in the same
 * blocks. Its spread is the machine's, so a p99 far above its p50 says how much of Cedar's tail the
 * machine adds.
 */
function fixedWork(): number {
  let sum = 0;
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < CONTROL_DATA.length; i++) sum += (CONTROL_DATA[i] as number) * 1.0001;
  }
  return sum;
}

/** `bun run bench --only cedar`, or `bun test/bench/cedar-eval.ts`: this part alone, with its own header. */
export async function runCedarAlone(): Promise<void> {
  const { cedarRows } = await import("./rows.ts");
  using work = tempDir("thoughtgate-bench-cedar-");
  const loadAtStart = loadavg()[0] ?? 0;
  const started = performance.now();
  const figures = await measureCedar(work.path);
  const cpu = cpus();
  console.log(
    [
      `# Cedar evaluation${QUICK ? " (--quick)" : ""}`,
      "",
      `- date: ${new Date().toISOString()}`,
      `- machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), bun ${Bun.version}; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
      "",
      renderTable(cedarRows(figures)),
      "",
      ...cedarNotes(figures),
      `- wall time: ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join("\n"),
  );
}

if (import.meta.main) await runCedarAlone();

export function cedarNotes(figures: CedarFigures): string[] {
  return figures.runs.map(
    (run) =>
      `- Cedar, ${run.policies.toLocaleString("en-US")} policies: ${run.requests} distinct requests in turn: ${run.allowed} allowed, ${run.deniedByForbid} forbidden, ${run.deniedByDefault} with no permit matching; ${run.policiesDeciding} policies decided at least one; the slice and the whole set agreed on every one`,
  );
}
