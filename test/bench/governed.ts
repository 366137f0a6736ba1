/**
 * Governed `tools/call`: the bench server behind `thoughtgate shim` with a policy, decided by the
 * engine inside the shim (`--thoughtgate-config`) or by `thoughtgate serve` over the shim's channel (a loopback WebSocket),
 * found two ways: `--governance-endpoint` on the shim's command line (shim+service, the form wrap
 * wrote into agent configs before entries carried no session) and a session the shim looks up
 * (shim+session: the entry wrap writes now, `THOUGHTGATE_SESSION` naming a session whose descriptor
 * names the service), next to the server reached directly. Start-up is timed for the three. The policy forwards `echo` by
 * its first rule and denies what no rule takes, so every call answered with a result went through
 * the rules gate to `forward` (the client fails the run on any error response it checks). Its
 * second rule sends every other tool to Cedar, so the engine loads the bench's 50 policies, as a
 * real service with policies would: the service's memory includes its Cedar engine. The service
 * lives for this phase only; its RSS is read once idle, once after the runs and once more when it has been quiet, and a second
 * service with the rules alone is started briefly for its idle RSS.
 */
import type { PolicySet } from "./cedar-eval.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";
import { processStartId } from "../../src/core/process-identity.ts";
import { sessionPaths } from "../../src/core/session-file.ts";
import { measureSessions, measureStartup } from "./measure.ts";
import { GOVERNED_PIPELINED, MEMORY_SETTLE_MS, PLAN, type Config, type ConfigName, type SessionFigures } from "./plan.ts";
import { progress, residentKb } from "./report.ts";

const RULES = `schema: 1
governance:
  defaults: { action: deny }
  rules:
    - { id: ok, match: echo, action: forward }
`;

function withCedar(cedar: PolicySet): string {
  return `${RULES}    - { id: cedar, match: "*", action: policy }
cedar:
  policies: ${JSON.stringify(cedar.policies)}
  schema: ${JSON.stringify(cedar.schema)}
`;
}

export type ServiceMemory = { rulesOnlyIdleRssKb: number; idleRssKb: number; afterRssKb: number; settledRssKb: number };

export type GovernedFigures = {
  sessions: Map<ConfigName, SessionFigures>;
  /** spawn → initialize response: direct, shim+service, shim+session. */
  startup: Map<ConfigName, number[]>;
  service: ServiceMemory;
  /** The service's `thoughtgate_stdio_governance_decisions_total`, summed by decision. */
  decisions: Map<string, number>;
};

/**
 * `runId` goes into the policy files' names, which are on the services' command lines, so the
 * end-of-run check finds a service left behind as it finds a server. `cedar`: the bench's
 * Cedar policy set and the schema of the arguments it reads (cedar-eval.ts).
 */
export async function measureGoverned(
  server: string[],
  dir: string,
  runId: string,
  cedar: PolicySet,
  env: Record<string, string>,
): Promise<GovernedFigures> {
  const rulesOnly = join(dir, `rules-${runId}.yaml`);
  writeFileSync(rulesOnly, RULES);
  const rulesOnlyIdleRssKb = await idleServiceRss(rulesOnly, env);

  const policy = join(dir, `governance-${runId}.yaml`);
  writeFileSync(policy, withCedar(cedar));
  await using service = await ServeProcess.start(["--thoughtgate-config", policy], { env: withoutOwnVariables(env) });
  const idleRssKb = residentKb(service.proc.pid);

  // No audit: these rows price the decision; the audit's own cost is the shim+events row above.
  const shim = [BINARY, "shim", "--server-id", "bench", "--events", "none"];
  const sessionEnv = sessionFor(service, dir, runId);
  const configs: Config[] = [
    { name: "direct", command: () => server },
    { name: "shim+engine", command: () => [...shim, "--thoughtgate-config", policy, "--", ...server] },
    {
      name: "shim+service",
      command: () => [...shim, "--governance-endpoint", service.endpoint, "--", ...server],
      env: { THOUGHTGATE_GOVERNANCE_SECRET: service.secret },
    },
    { name: "shim+session", command: () => [...shim, "--", ...server], env: sessionEnv },
  ];
  progress("governed tools/call: direct, shim with the engine in-process, shim asking thoughtgate serve (by its endpoint flag, and as a session's shim)");
  const sessions = await measureSessions(configs, env, { sequential: true, ping: false, unbounded: false, pipelined: GOVERNED_PIPELINED });
  progress(`start-up of a governed shim: ${PLAN.spawns} spawns of direct, shim+service and shim+session`);
  const startup = await measureStartup(configs.filter((config) => config.name !== "shim+engine"), env);
  const afterRssKb = residentKb(service.proc.pid);
  // As for the shims: what the service keeps once it has been quiet (it collects after a second).
  await Bun.sleep(MEMORY_SETTLE_MS);
  const settledRssKb = residentKb(service.proc.pid);
  const decisions = await decisionCounts(service);
  return { sessions, startup, service: { rulesOnlyIdleRssKb, idleRssKb, afterRssKb, settledRssKb }, decisions };
}

/**
 * A wrap session in a state directory of the bench's own, whose service is `serve`: what a shim in
 * wrap's entry form looks up at its start (src/governance/deciders/find-session.ts). Its pid is serve's,
 * which stands for the wrap process; the session's version is this binary's, so no shim execs.
 */
function sessionFor(service: ServeProcess, dir: string, runId: string): Record<string, string> {
  const state = join(dir, `session-state-${runId}`);
  const env = { XDG_STATE_HOME: state };
  const id = Bun.randomUUIDv7();
  const paths = sessionPaths(id, env);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.secret, service.secret, { mode: 0o600 });
  const version = /^thoughtgate (\S+) \((\S+)\)/.exec(Bun.spawnSync([BINARY, "--version"]).stdout.toString());
  const pid = service.proc.pid;
  const descriptor = {
    version: version?.[1] ?? "",
    target: version?.[2] ?? "",
    pid,
    startId: processStartId(pid),
    binary: BINARY,
    shim: BINARY,
    startedAt: new Date().toISOString(),
    endpoint: service.endpoint,
    profile: "production",
    agent: { type: "custom", command: ["bench"], pid: null, startId: null },
    cwd: dir,
    project: dir,
  };
  writeFileSync(paths.descriptor, JSON.stringify(descriptor), { mode: 0o600 });
  return { ...env, THOUGHTGATE_SESSION: id };
}

async function idleServiceRss(policy: string, env: Record<string, string>): Promise<number> {
  await using service = await ServeProcess.start(["--thoughtgate-config", policy], { env: withoutOwnVariables(env) });
  return residentKb(service.proc.pid);
}

/**
 * ServeProcess starts from the bench's own environment; a THOUGHTGATE_* variable there (a log
 * level, a profile, a config) must not change the service, so each is unset for it.
 */
function withoutOwnVariables(env: Record<string, string>): Record<string, string | undefined> {
  const unset = Object.keys(process.env).filter((key) => key.startsWith("THOUGHTGATE_"));
  return { ...env, ...Object.fromEntries(unset.map((key) => [key, undefined])) };
}

async function decisionCounts(service: ServeProcess): Promise<Map<string, number>> {
  const response = await fetch(`${service.endpoint}/metrics`, { headers: { authorization: `Bearer ${service.secret}` } });
  if (!response.ok) throw new Error(`the service's /metrics answered ${response.status}`);
  const counts = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    const match = /^thoughtgate_stdio_governance_decisions_total\{.*decision="([^"]+)".*\} (\d+)$/.exec(line);
    if (match?.[1] !== undefined) counts.set(match[1], (counts.get(match[1]) ?? 0) + Number(match[2]));
  }
  return counts;
}
