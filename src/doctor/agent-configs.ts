/**
 * Doctor's view of the agents' MCP configs, read through the wrap adapters so both commands agree
 * on every path, scope and format: which files exist, how many servers (stdio, and remote ones over Streamable HTTP) `wrap` would govern,
 * how many it would leave alone and why, and what is wrong with a file. A file `wrap` cannot use
 * is a warning here, never a crash.
 */
import { messageOf } from "../core/errors.ts";
import { planConfigs } from "../wrap/share-configs.ts";
import { shimPath } from "../wrap/shim-path.ts";
import { ADAPTERS, AGENT_TYPES, type AgentContext, type AgentType, type ConfigFile, type ConfigScope, type DiscoverOptions, type EntryStatus } from "../wrap/adapters/index.ts";
import type { CheckBody } from "./report.ts";

/** Why `wrap` would leave an entry alone: every status but `governed`. */
type LeftAloneStatus = Exclude<EntryStatus, "governed">;

type ConfigFileReport = {
  path: string;
  scope: ConfigScope;
  exists: boolean;
  /** Stdio servers `wrap` would route through the shim. */
  governed: number;
  /** Of those, servers the config turns off: governed should the user turn them on mid-session. */
  disabled: number;
  /** Servers `wrap` would leave byte-identical, by why. */
  leftAlone: Partial<Record<LeftAloneStatus, number>>;
  /** Why `wrap` would not touch the file at all (does not parse, duplicate keys, ...). */
  problems: string[];
  warnings: string[];
};

export type AgentConfigReport = {
  agent: AgentType;
  label: string;
  files: ConfigFileReport[];
  governed: number;
  disabled: number;
  leftAlone: Partial<Record<LeftAloneStatus, number>>;
  /** Set when the adapter itself failed: the agent's files could not be looked at. */
  error?: string;
};

/**
 * Every discovery `doctor` runs per agent. VS Code Insiders keeps its own user profile; `wrap`
 * picks one from the command it launches, doctor has no command, so it looks at both.
 */
const DISCOVERIES: Partial<Record<AgentType, DiscoverOptions[]>> = { vscode: [{}, { insiders: true }] };

/** One report per agent `wrap` knows, except `custom`, which has no files of its own. */
function agentConfigReports(ctx: AgentContext): AgentConfigReport[] {
  return AGENT_TYPES.filter((agent) => agent !== "custom").map((agent) => agentConfigReport(agent, ctx));
}

function agentConfigReport(agent: AgentType, ctx: AgentContext): AgentConfigReport {
  const report: AgentConfigReport = { agent, label: ADAPTERS[agent].label, files: [], governed: 0, disabled: 0, leftAlone: {} };
  let files: ConfigFile[];
  try {
    // As wrap reads them: entries that run this thoughtgate's shim already (enrolled) are known as such.
    files = uniqueByPath((DISCOVERIES[agent] ?? [{}]).flatMap((options) => planConfigs({ agent, ctx, discover: options, binary: shimPath(ctx.env) }).files));
  } catch (error) {
    // Discovery reports a bad file as a problem; an exception is a bug in one adapter, and the
    // other agents are still worth reporting.
    report.error = messageOf(error);
    return report;
  }
  for (const file of files) {
    const fileReport: ConfigFileReport = { path: file.path, scope: file.scope, exists: file.exists, governed: 0, disabled: 0, leftAlone: {}, problems: file.problems, warnings: file.warnings };
    for (const { status, disabled } of file.entries) {
      // Running through thoughtgate already (enrolled) is governed too.
      if (status === "governed" || status === "wrapped") {
        fileReport.governed += 1;
        report.governed += 1;
        if (disabled !== undefined) {
          fileReport.disabled += 1;
          report.disabled += 1;
        }
      } else {
        fileReport.leftAlone[status] = (fileReport.leftAlone[status] ?? 0) + 1;
        report.leftAlone[status] = (report.leftAlone[status] ?? 0) + 1;
      }
    }
    report.files.push(fileReport);
  }
  return report;
}

/** The first of each path: both VS Code discoveries list the same project file. */
function uniqueByPath(files: ConfigFile[]): ConfigFile[] {
  const byPath = new Map<string, ConfigFile>();
  for (const file of files) if (!byPath.has(file.path)) byPath.set(file.path, file);
  return [...byPath.values()];
}

const LEFT_ALONE_WORDS: Record<LeftAloneStatus, string> = {
  remote: "remote",
  wrapped: "running through thoughtgate already (enrolled, or a running wrap's)",
  extension: "run by an extension",
  invalid: "cannot be started",
  refused: "started where wrap cannot rewrite them",
  "file-problem": "in a file wrap will not edit",
};

/**
 * The doctor check: `info` when every file that exists can be read, `warn` when one cannot (wrap
 * would leave it alone, and the agent may not start its servers either). Never `fail`: which
 * agents are installed, and how they are configured, is not this install's health.
 */
export function checkAgentConfigs(ctx: AgentContext): CheckBody {
  const agents = agentConfigReports(ctx);
  const details: string[] = [];
  let issues = 0;
  for (const agent of agents) {
    const found = agent.files.filter((file) => file.exists);
    if (agent.error !== undefined) {
      issues += 1;
      details.push(`${agent.label}: warning: its config files could not be read: ${agent.error}`);
      continue;
    }
    if (found.length === 0) continue;
    details.push(`${agent.label}: ${describeCounts(agent)}`);
    for (const file of found) {
      // A file that could not be read has no counts worth a line: its warning says it all.
      const unread = file.problems.length > 0 && file.governed + leftAloneTotal(file.leftAlone) === 0;
      if (!unread) details.push(`  ${file.path} (${file.scope}): ${describeCounts(file)}`);
      for (const problem of file.problems) details.push(`  warning: ${file.path} ${problem}; wrap leaves it untouched`);
      for (const warning of file.warnings) details.push(`  warning: ${file.path}: ${warning}`);
      issues += file.problems.length + file.warnings.length;
    }
  }
  const missing = agents.filter((agent) => agent.error === undefined && !agent.files.some((file) => file.exists));
  if (missing.length > 0) details.push(`no config file: ${missing.map((agent) => agent.label).join(", ")}`);

  const files = agents.flatMap((agent) => agent.files).filter((file) => file.exists).length;
  const governed = sum(agents.map((agent) => agent.governed));
  const leftAlone = sum(agents.map((agent) => leftAloneTotal(agent.leftAlone)));
  const withAgents = agents.filter((agent) => agent.files.some((file) => file.exists)).length;
  const counts =
    files === 0
      ? "no agent MCP config file found"
      : `${plural(files, "config file")} of ${plural(withAgents, "agent")}: ${plural(governed, "server")} wrap would govern, ${leftAlone} left alone`;
  return {
    status: issues > 0 ? "warn" : "info",
    summary: issues > 0 ? `${counts}; ${plural(issues, "warning")}` : counts,
    details,
    data: { agents },
  };
}

/** "2 servers to govern (1 disabled), 3 left alone (2 remote, 1 already wrapped)". */
function describeCounts({ governed, disabled, leftAlone }: Pick<ConfigFileReport, "governed" | "disabled" | "leftAlone">): string {
  const reasons = Object.entries(LEFT_ALONE_WORDS).flatMap(([status, words]) => {
    const count = leftAlone[status as LeftAloneStatus];
    return count === undefined ? [] : [`${count} ${words}`];
  });
  const total = leftAloneTotal(leftAlone);
  const servers = `${plural(governed, "server")} to govern${disabled > 0 ? ` (${disabled} disabled)` : ""}`;
  return total === 0 ? servers : `${servers}, ${total} left alone (${reasons.join(", ")})`;
}

function leftAloneTotal(leftAlone: ConfigFileReport["leftAlone"]): number {
  return sum(Object.values(leftAlone));
}

const sum = (counts: number[]) => counts.reduce((total, count) => total + count, 0);

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;
