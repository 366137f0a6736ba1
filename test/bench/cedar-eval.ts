/**
 * Cedar alone: `CedarPolicies.load` and `.evaluate` from src/governance/cedar.ts, called in the
 * bench process, each evaluation timed on its own. The policy set has `CEDAR_PLAN.policies`
 * policies, permits and forbids whose `when` conditions read the tool's name, its server and its
 * arguments; the requests cycle through tools, servers and arguments chosen so that different
 * policies decide (a permit, a forbid overriding a permit, or no permit at all). The governed
 * sessions load the same file, so the service's memory includes its Cedar engine.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CedarRequest } from "../../src/governance/cedar.ts";
import { CEDAR_PLAN } from "./plan.ts";

const SERVERS = ["github", "filesystem", "bench"] as const;
/** Each family below has one policy per index `k`. */
const FAMILIES = Math.ceil(CEDAR_PLAN.policies / 4);

export type CedarFigures = {
  samples: number[];
  allowed: number;
  denied: number;
  /** Denials no forbid decided: no permit matched (Cedar is default-deny). */
  deniedByDefault: number;
  /** How many of the policies decided at least one timed evaluation. */
  policiesDeciding: number;
  requests: number;
};

/**
 * Four families of policies, a quarter each (for 50: 13 + 13 + 12 + 12):
 * - permit `tool_<k>` on one server;
 * - permit `read_file` under `/srv/<k>/`;
 * - forbid `tool_<k>` with a `limit` above a bound;
 * - forbid `read_file` of `/srv/<k>/secret*` on one server.
 */
function policySet(count: number): string {
  const policies: string[] = [];
  for (let i = 0; policies.length < count; i++) {
    const k = Math.floor(i / 4);
    const server = SERVERS[k % SERVERS.length];
    switch (i % 4) {
      case 0:
        policies.push(`@id("permit-tool-${k}")
permit (principal, action == ThoughtGate::Action::"tools/call", resource)
when { resource.name == "tool_${k}" && resource.server == "${server}" };`);
        break;
      case 1:
        policies.push(`@id("permit-read-${k}")
permit (principal, action == ThoughtGate::Action::"tools/call", resource)
when { resource.name == "read_file" && resource.arguments has path && resource.arguments.path like "/srv/${k}/*" };`);
        break;
      case 2:
        policies.push(`@id("forbid-limit-${k}")
forbid (principal, action, resource)
when { resource.name == "tool_${k}" && resource.arguments has limit && resource.arguments.limit > ${100 * (k + 1)} };`);
        break;
      default:
        policies.push(`@id("forbid-secret-${k}")
forbid (principal, action, resource)
when { resource.server == "${server}" && resource.arguments has path && resource.arguments.path like "/srv/${k}/secret*" };`);
    }
  }
  return `${policies.join("\n\n")}\n`;
}

/** Write the policy set into `dir`; returns the file's path. */
export function writePolicySet(dir: string): string {
  const file = join(dir, "bench.cedar");
  writeFileSync(file, policySet(CEDAR_PLAN.policies));
  return file;
}

/**
 * Requests that exercise every family: a tool on its own server (permitted) or another one (no
 * permit), with a small or a large `limit` (the forbid); files inside and outside the permitted
 * trees, secrets on the forbidding server and on the others.
 */
function requests(families: number): CedarRequest[] {
  const out: CedarRequest[] = [];
  const base = { user: "bench", method: "tools/call", policyId: null } as const;
  for (let k = 0; k < families; k++) {
    const home = SERVERS[k % SERVERS.length] as string;
    const away = SERVERS[(k + 1) % SERVERS.length] as string;
    const query = { query: `issues labelled bug ${k}`, options: { recursive: true, depth: k, tags: ["a", "b"] } };
    out.push(
      { ...base, serverId: home, name: `tool_${k}`, arguments: { ...query, limit: 50 } },
      { ...base, serverId: home, name: `tool_${k}`, arguments: { ...query, limit: 100 * (k + 1) + 1 } },
      { ...base, serverId: away, name: `tool_${k}`, arguments: { ...query, limit: 50 } },
      { ...base, serverId: home, name: "read_file", arguments: { path: `/srv/${k}/notes.txt`, encoding: "utf8" } },
      { ...base, serverId: home, name: "read_file", arguments: { path: `/srv/${k}/secret.key`, encoding: "utf8" } },
      { ...base, serverId: away, name: "read_file", arguments: { path: `/srv/${k}/secret.key`, encoding: "utf8" } },
      { ...base, serverId: home, name: "read_file", arguments: { path: `/home/${k}/notes.txt` } },
    );
  }
  return out;
}

/** `file`: from `writePolicySet`. */
export async function measureCedar(file: string): Promise<CedarFigures> {
  // Imported here, not at the top: the wasm engine (tens of MB) stays out of the bench process
  // until every process measurement is done.
  const { CedarPolicies } = await import("../../src/governance/cedar.ts");
  const policies = CedarPolicies.load({ policies: [file] });
  if (policies.policyIds.length !== CEDAR_PLAN.policies) {
    throw new Error(`expected ${CEDAR_PLAN.policies} Cedar policies, loaded ${policies.policyIds.length}`);
  }
  const variants = requests(FAMILIES);

  // The earlier phases' garbage (pipe chunks, samples) is this process's, not the engine's: collect
  // it now so its collection does not land on Cedar's timings.
  Bun.gc(true);
  for (let i = 0; i < CEDAR_PLAN.warmup; i++) policies.evaluate(variants[i % variants.length] as CedarRequest);

  const samples: number[] = [];
  const deciding = new Set<string>();
  let allowed = 0;
  let deniedByDefault = 0;
  for (let i = 0; i < CEDAR_PLAN.evaluations; i++) {
    const request = variants[i % variants.length] as CedarRequest;
    const started = performance.now();
    const verdict = policies.evaluate(request);
    samples.push(performance.now() - started);
    // An error would mean a policy failed to evaluate: the figures would time the wrong path.
    if (verdict.decision === "error") throw new Error(`Cedar evaluation failed for ${request.name}: ${verdict.reason}`);
    if (verdict.decision === "allow") allowed += 1;
    else if (verdict.policies.length === 0) deniedByDefault += 1;
    for (const id of verdict.policies) deciding.add(id);
  }
  return {
    samples,
    allowed,
    denied: CEDAR_PLAN.evaluations - allowed,
    deniedByDefault,
    policiesDeciding: deciding.size,
    requests: variants.length,
  };
}
