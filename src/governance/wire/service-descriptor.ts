import { lstatSync, mkdirSync, chmodSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { bestEffort, messageOf, ThoughtGateError, usageError } from "../../core/errors.ts";
import { stateDir } from "../../core/paths.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV } from "./env.ts";

/**
 * How `thoughtgate tasks|approve|deny` find a running service without the user copying keys:
 * `wrap` and `serve` each write `<state dir>/services/<pid>.json` (directory 0700, file 0600) with
 * the endpoint, their pid and the CLI key, and remove it when they exit. It is not in the session
 * directory, whose secret file's path is in every shim's argv, and it never holds the page key or
 * the session secret. A process running as the same user can read it; docs/governance.md says so.
 */
const descriptorSchema = v.object({
  endpoint: v.pipe(v.string(), v.regex(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}$/, "expected a loopback http URL")),
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** When that pid started (opaque): a reused pid is not taken for the service. */
  start_id: v.nullable(v.string()),
  kind: v.picklist(["wrap", "serve"]),
  cli_key: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "expected 64 hex characters")),
  started_at: v.string(),
  /** The session's agent (`claude`) and project directory, so a person can tell sessions apart (`thoughtgate approvals`). */
  agent: v.optional(v.string()),
  project: v.optional(v.string()),
});
export type ServiceDescriptor = v.InferOutput<typeof descriptorSchema>;

/** Whether the process that wrote a descriptor still runs (src/core/process-identity.ts has the real check). */
export type IsAlive = (pid: number, startId: string | null) => boolean;

export function servicesDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "services");
}

/** Write this process's descriptor; the returned function removes it (idempotent). */
export function publishService(descriptor: ServiceDescriptor, env: NodeJS.ProcessEnv = process.env): () => void {
  const dir = servicesDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const path = join(dir, `${descriptor.pid}.json`);
  const temp = `${path}.tmp`;
  rmSync(temp, { force: true });
  writeFileSync(temp, `${JSON.stringify(descriptor)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temp, path);
  return () => void bestEffort(() => rmSync(path, { force: true }));
}

/**
 * The descriptors of services that still run. A descriptor whose process is gone (killed, rebooted)
 * is removed; one that is not a regular file of ours with mode 0600, or does not parse, is skipped
 * and reported in `ignored` (one line each).
 */
export function findServices(isAlive: IsAlive, env: NodeJS.ProcessEnv = process.env): { live: ServiceDescriptor[]; ignored: string[] } {
  const dir = servicesDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return { live: [], ignored: [] };
  }
  const live: ServiceDescriptor[] = [];
  const ignored: string[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    const problem = unsafe(path);
    if (problem) {
      ignored.push(`${path}: ${problem}`);
      continue;
    }
    let parsed: v.SafeParseResult<typeof descriptorSchema>;
    try {
      parsed = v.safeParse(descriptorSchema, JSON.parse(readFileSync(path, "utf8")));
    } catch (error) {
      ignored.push(`${path}: ${messageOf(error)}`);
      continue;
    }
    if (!parsed.success) {
      ignored.push(`${path}: ${v.getDotPath(parsed.issues[0]) ?? "(file)"}: ${parsed.issues[0].message}`);
      continue;
    }
    if (isAlive(parsed.output.pid, parsed.output.start_id)) live.push(parsed.output);
    else bestEffort(() => rmSync(path, { force: true }));
  }
  return { live, ignored };
}

function unsafe(path: string): string | null {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return "gone";
  if (!stat.isFile()) return "not a regular file";
  if (process.getuid && stat.uid !== process.getuid()) return `owned by uid ${stat.uid}, not you`;
  if ((stat.mode & 0o077) !== 0) return `mode ${(stat.mode & 0o777).toString(8)}: readable by others, not used`;
  return null;
}

/** The live services other than this process (a Slack click on another session's message is handed on to one of them). */
export function siblingServices(isAlive: IsAlive, env: NodeJS.ProcessEnv = process.env): Array<{ endpoint: string; pid: number }> {
  return findServices(isAlive, env)
    .live.filter((d) => d.pid !== process.pid)
    .map((d) => ({ endpoint: d.endpoint, pid: d.pid }));
}

export type ApprovalTarget = { endpoint: string; key: string };

/** What names a session to a person: its agent, its project directory, its start; a serve's pid. */
export type SessionNaming = Pick<ServiceDescriptor, "kind" | "started_at" | "agent" | "project"> & { pid?: number };

/** `claude in /home/ada/site, started 2026-11-29 08:01 UTC (thoughtgate wrap, pid 4242)`. */
export function sessionName(session: SessionNaming): string {
  const who = session.agent ?? `thoughtgate ${session.kind}`;
  const where = session.project ? ` in ${session.project}` : "";
  const when = `${session.started_at.slice(0, 16).replace("T", " ")} UTC`;
  const how = [session.agent ? `thoughtgate ${session.kind}` : null, session.pid !== undefined ? `pid ${session.pid}` : null].filter((part) => part !== null);
  return `${who}${where}, started ${when}${how.length > 0 ? ` (${how.join(", ")})` : ""}`;
}

/** A session the CLI may ask, with its descriptor when it was found by one (null: given by flags alone). */
export type SessionTarget = { target: ApprovalTarget; descriptor: ServiceDescriptor | null };

/**
 * The sessions `thoughtgate tasks|approve|deny` look in: the one that `--endpoint`/`--key` or their
 * environment variables name (an override), else every live one (a task id is unique, so the one
 * that holds it is found by asking each).
 */
export function approvalTargets(given: { endpoint: string | undefined; key: string | undefined }, isAlive: IsAlive, env: NodeJS.ProcessEnv = process.env): SessionTarget[] {
  const { live, ignored } = findServices(isAlive, env);
  if (given.endpoint !== undefined || given.key !== undefined || env[ENDPOINT_ENV] || env[APPROVAL_KEY_ENV]) {
    const target = resolveApprovalTarget(given, isAlive, env);
    return [{ target, descriptor: live.find((d) => d.endpoint === target.endpoint && d.cli_key === target.key) ?? null }];
  }
  if (live.length === 0) {
    const skipped = ignored.length > 0 ? ` (skipped: ${ignored.join("; ")})` : "";
    throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `no running governance service found${skipped}: start \`thoughtgate wrap\` or \`thoughtgate serve\`, or pass --endpoint and --key (or set ${ENDPOINT_ENV} and ${APPROVAL_KEY_ENV})`);
  }
  return live.map((descriptor) => ({ target: { endpoint: descriptor.endpoint, key: descriptor.cli_key }, descriptor }));
}

/**
 * Where `thoughtgate tasks|approve|deny` go: `--endpoint`/`--key` or their environment variables
 * when given; what is missing comes from the one live service's descriptor (the one at that
 * endpoint, when an endpoint was given). Several live services and no endpoint: ask for one.
 */
export function resolveApprovalTarget(given: { endpoint: string | undefined; key: string | undefined }, isAlive: IsAlive, env: NodeJS.ProcessEnv = process.env): ApprovalTarget {
  const endpoint = trimSlashes(given.endpoint ?? env[ENDPOINT_ENV]);
  const key = given.key ?? env[APPROVAL_KEY_ENV];
  if (endpoint && key) return { endpoint, key };
  const { live, ignored } = findServices(isAlive, env);
  const describe = (d: ServiceDescriptor) => `${d.endpoint} (${d.kind}, pid ${d.pid})`;
  if (endpoint) {
    const found = live.find((d) => d.endpoint === endpoint);
    // No running service here that we know of: unavailable (exit 1), as when none runs at all.
    if (!found) throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `no running governance service found at ${endpoint} to take its approval key from: pass --key or set ${APPROVAL_KEY_ENV} (the service printed it)`);
    return { endpoint, key: found.cli_key };
  }
  const candidates = key ? live.filter((d) => d.cli_key === key) : live;
  const only = candidates.length === 1 ? candidates[0] : key && live.length === 1 ? live[0] : undefined;
  if (only) return { endpoint: only.endpoint, key: key ?? only.cli_key };
  if (live.length === 0) {
    const skipped = ignored.length > 0 ? ` (skipped: ${ignored.join("; ")})` : "";
    throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `no running governance service found${skipped}: start \`thoughtgate wrap\` or \`thoughtgate serve\`, or pass --endpoint and --key (or set ${ENDPOINT_ENV} and ${APPROVAL_KEY_ENV})`);
  }
  throw usageError(`${live.length} governance services are running: ${live.map(describe).join(", ")}; pass --endpoint URL to choose one`);
}

function trimSlashes(url: string | undefined): string | undefined {
  return url ? url.replace(/\/+$/, "") : undefined;
}
