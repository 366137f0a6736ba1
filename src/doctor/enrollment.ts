/**
 * `doctor`'s view of enrollments and shared configs: which agents are enrolled (`thoughtgate
 * enroll`) and which servers in their enrolled files were added since (a plain run starts them
 * ungoverned until the next enroll or wrap); and whether the wrap journal holds a config nobody
 * keeps rewritten any more (a wrap killed before it put it back: `unwrap` repairs it).
 */
import { existsSync } from "node:fs";
import { journalPath } from "../core/paths.ts";
import { realConfigPath } from "../wrap/config-path.ts";
import { ADAPTERS, type AgentContext, type AgentType } from "../wrap/adapters/index.ts";
import { isHolderAlive } from "../wrap/holders.ts";
import { readJournal } from "../wrap/journal.ts";
import { planConfigs } from "../wrap/share-configs.ts";
import { shimPath } from "../wrap/shim-path.ts";
import type { CheckBody } from "./report.ts";

const UNWRAP_ALL = "thoughtgate unwrap --all";

/**
 * `policyValid`: whether the policy in force loads. An enrolled agent's plain run starts its shims
 * on it, and a shim that cannot load its policy starts no server (shim/policy-refusal.ts): each of
 * those servers answers only with the policy's problem until it is fixed.
 */
export function checkEnrollment(ctx: AgentContext, policyValid = true): CheckBody {
  const records = readJournal(journalPath(ctx.env));
  const byAgent = new Map<string, string[]>();
  for (const record of records) {
    for (const holder of record.holders) if (holder.kind === "enroll") byAgent.set(holder.agent, [...(byAgent.get(holder.agent) ?? []), record.configPath]);
  }
  if (byAgent.size === 0) return { status: "pass", summary: "none (`thoughtgate enroll <agent>` sets one up for good)", details: [], data: { agents: [] } };
  const details: string[] = [];
  const agents: Array<{ agent: string; files: string[]; added: Array<{ name: string; file: string }> }> = [];
  for (const [agent, files] of byAgent) {
    const known = agent in ADAPTERS;
    const plan = known ? planConfigs({ agent: agent as AgentType, ctx, discover: { everyProject: true }, binary: shimPath(ctx.env) }) : undefined;
    const enrolled = new Set(files);
    const added = (plan?.files ?? []).filter((file) => enrolled.has(realConfigPath(file.path))).flatMap((file) => file.entries.filter((entry) => entry.governed).map((entry) => ({ name: entry.name, file: file.path })));
    agents.push({ agent, files, added });
    details.push(`${known ? ADAPTERS[agent as AgentType].label : agent}: enrolled ${files.join(", ")}`);
    for (const server of added) details.push(`  ungoverned: ${server.name} in ${server.file}, added since; \`thoughtgate enroll ${agent}\` (or a wrap) governs it`);
  }
  const ungoverned = agents.reduce((count, agent) => count + agent.added.length, 0);
  const names = agents.map((agent) => agent.agent).join(", ");
  if (!policyValid) {
    return {
      status: "fail",
      summary: `${names}: the policy is invalid, so every enrolled server refuses to start (each answers the agent with the problem)`,
      details: [...details, "fix: correct the policy (`thoughtgate validate-config` lists every problem), then restart the agent"],
      data: { agents, policyValid },
    };
  }
  return {
    status: ungoverned > 0 ? "warn" : "pass",
    summary: ungoverned > 0 ? `${names}; ${ungoverned} server${ungoverned === 1 ? "" : "s"} added since run ungoverned` : names,
    details,
    data: { agents },
  };
}

/** The journal: configs kept rewritten by running wraps or enrollments are fine; one nobody holds is left over. */
export function checkWrapJournal({ env }: { env: NodeJS.ProcessEnv }): CheckBody {
  const path = journalPath(env);
  if (!existsSync(path)) return { status: "pass", summary: "none left over", details: [], data: { path, exists: false } };
  const records = readJournal(path);
  const leftOver = records.filter((record) => !record.holders.some(isHolderAlive));
  const inUse = records.length - leftOver.length;
  if (leftOver.length === 0) return { status: "pass", summary: `none left over (${inUse} config${inUse === 1 ? "" : "s"} in use by a running wrap or an enrollment)`, details: [], data: { path, exists: true, leftOver: [] } };
  return {
    status: "fail",
    summary: `${leftOver.length} config${leftOver.length === 1 ? "" : "s"} left rewritten by a wrap that ended without restoring`,
    details: [...leftOver.map((record) => `left rewritten: ${record.configPath}`), `fix: run \`${UNWRAP_ALL}\` to restore them (add --dry-run to see the changes first)`],
    data: { path, exists: true, leftOver: leftOver.map((record) => record.configPath), fix: UNWRAP_ALL },
  };
}
