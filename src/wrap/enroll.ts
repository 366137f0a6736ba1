/**
 * `thoughtgate enroll` and `unenroll`: set an agent up once instead of prefixing every run with
 * `thoughtgate wrap --`. Enroll rewrites the agent's own config files (the user's, not a project's,
 * which a repository shares) exactly as wrap does, and keeps them rewritten: the journal holds them
 * for the enrollment (journal.ts, an `enroll` holder) until `unenroll` lets go, and the last holder
 * puts each file back (byte for byte when nothing else changed it, else only the entries
 * ThoughtGate owns). With no session to ask, every later run's shims govern on their own (the
 * user's policy, their own audit); a `wrap` on top adds its session (governance/deciders/find-session.ts).
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { withClaudeHook, withGeminiHook } from "./agent-hooks.ts";
import { codexHome } from "./adapters/codex.ts";
import { codexTrustEdit, enrollClaudeSettings, enrollCodexHooksFile, hookFile } from "./enrolled-hooks.ts";
import { enrolledPluginPath, enrolledPluginState, enrollOpencodePlugin } from "./opencode-plugin.ts";
import { copilotSettingsPath, shareCopilotHook } from "./copilot-hook.ts";
import { ADAPTERS, AGENT_TYPES, type AgentContext, type AgentType, type ConfigFile, type ServerEntry } from "./adapters/index.ts";
import { ConfigGuard, type RestoreResult } from "./config-guard.ts";
import { enrollHolder } from "./holders.ts";
import { realConfigPath } from "./config-path.ts";
import { readJournal } from "./journal.ts";
import { planConfigs, shareConfigs, type Shared } from "./share-configs.ts";
import { stableShim } from "./shim-path.ts";

/** The agents `enroll --all` and `doctor` look at: every one with files of its own (not `custom`). */
export const ENROLLABLE: readonly AgentType[] = AGENT_TYPES.filter((agent) => agent !== "custom");

/**
 * The directory an agent's own-tools hook goes in (its settings directory), for the agents that
 * have one: an agent that has run here has made it, so `enroll --all` enrolls its hook even when
 * it has no MCP server (its shell, edits and reads are the calls that matter then).
 */
function ownToolsHome(agent: AgentType, ctx: AgentContext): string | null {
  if (agent === "claude-code" || agent === "codex" || agent === "gemini") return dirname(hookFile(agent, ctx).path);
  if (agent === "copilot") return dirname(copilotSettingsPath(ctx));
  // `<config>/opencode/plugins/thoughtgate.js`: opencode's own directory, whether or not it has plugins yet.
  if (agent === "opencode") return dirname(dirname(enrolledPluginPath(ctx)));
  return null;
}

/** What `enroll --all` enrolls: an agent with MCP servers in its own files, or one whose own tools have a hook and that has run here. */
export function worthEnrolling(agent: AgentType, ctx: AgentContext): boolean {
  if (enrollmentPlan(agent, ctx).own.length > 0) return true;
  const home = ownToolsHome(agent, ctx);
  return home !== null && existsSync(home);
}

export type EnrollReport = {
  agent: AgentType;
  label: string;
  /** The agent's own files with servers: what an enrollment holds. */
  own: Array<{ path: string; servers: string[] }>;
  /** The files shared for the enrollment: rewritten now, or already running through thoughtgate (`enroll` only). */
  shared: Array<Pick<Shared, "outcome"> & { path: string; servers: string[] }>;
  /** A project's files, left alone (wrap governs them for a session). */
  projectFiles: Array<{ path: string; servers: string[] }>;
  /** Servers a run of the agent still starts ungoverned, and why. */
  ungoverned: Array<{ name: string; file: string; reason: string }>;
  /** Files that cannot be used (do not parse, …): their servers are not enrolled. */
  problems: Array<{ path: string; problem: string }>;
  /** The agent's own-tools hook kept in its settings (Claude Code, Codex, Gemini CLI), or why it could not be. */
  hook?: { path: string; outcome: Shared["outcome"] } | { path: string; problem: string };
};

/** Only the user's own files: a project's file is shared with a repository and is governed for a session instead. */
const OWN_FILES = (file: ConfigFile) => file.scope !== "project" && file.scope !== "flag";

export function enroll(agent: AgentType, ctx: AgentContext): EnrollReport {
  const binary = stableShim().path;
  // The agent's own tools' hook (enrolled-hooks.ts): Codex's file first, its trust then goes in
  // config.toml with the MCP entries; Gemini CLI's goes in settings.json with its MCP entries.
  const codexHooks = agent === "codex" ? enrollCodexHooksFile(ctx, binary) : undefined;
  const trust = codexHooks?.group === undefined ? undefined : codexTrustEdit(ctx, binary, codexHooks.group);
  const addHook = (file: ConfigFile, text: string) => {
    if (agent === "gemini") return withGeminiHook(file, text, binary);
    if (trust === undefined || file.agent !== "codex" || file.scope !== "user" || file.problems.length > 0) return null;
    return trust(file.exists ? text : "");
  };
  const options = { agent, ctx, discover: { everyProject: true }, binary, include: OWN_FILES, addHook };
  const { plan, shared } = shareConfigs(options, enrollHolder(agent));
  // The enrollment keeps them: nothing of this process lets go of them when it exits.
  for (const { guard } of shared) guard.release();
  const report = describe(agent, plan.files);
  report.shared = shared.map(({ file, outcome }) => ({ path: file.path, outcome, servers: serversOf(file.entries) }));
  if (agent === "claude-code") report.hook = enrollClaudeSettings(ctx, (text) => withClaudeHook(text, binary));
  if (agent === "gemini") report.hook = hookShared(shared, hookFile("gemini", ctx).path, "gemini");
  if (codexHooks !== undefined) report.hook = "problem" in codexHooks ? codexHooks : trustShared(shared, codexHooks, join(codexHome(ctx), "config.toml"));
  // opencode's hook is a plugin file of its own (opencode-plugin.ts), outside the config guard.
  if (agent === "opencode") report.hook = enrollOpencodePlugin(ctx, binary);
  if (agent === "copilot") report.hook = shareCopilotHook(ctx, binary, enrollHolder(agent), true);
  return report;
}

/** The hook's file among those shared, or why it is not. */
function hookShared(shared: readonly Shared[], path: string, agent: AgentType): NonNullable<EnrollReport["hook"]> {
  const found = shared.find((one) => one.file.path === path);
  if (found !== undefined) return { path, outcome: found.outcome };
  return { path, problem: `could not take ${agent}'s hook (it does not parse as a JSON object, or it is not a regular file); correct it and enroll again` };
}

/** Codex's hook file, and whether its trust went into config.toml: untrusted, Codex would skip the hook without a word. */
function trustShared(shared: readonly Shared[], hooks: { path: string; outcome: Shared["outcome"] }, configPath: string): NonNullable<EnrollReport["hook"]> {
  if (shared.some((one) => one.file.path === configPath)) return hooks;
  return { path: hooks.path, problem: `is written, but its trust could not be added to ${configPath} (it does not parse, or writes \`hooks\` as an inline table): Codex skips the hook until it is trusted; correct it and enroll again` };
}

/** What an enrollment of `agent` would do now, changing nothing (for `doctor` and `enroll --dry-run`). */
function enrollmentPlan(agent: AgentType, ctx: AgentContext): EnrollReport & { enrolled: string[] } {
  const plan = planConfigs({ agent, ctx, discover: { everyProject: true }, binary: stableShim({ create: false }).path });
  return { ...describe(agent, plan.files), enrolled: enrolledFiles(agent) };
}

function describe(agent: AgentType, files: readonly ConfigFile[]): EnrollReport {
  const report: EnrollReport = { agent, label: ADAPTERS[agent].label, own: [], shared: [], projectFiles: [], ungoverned: [], problems: [] };
  for (const file of files) {
    if (!file.exists) continue;
    for (const problem of file.problems) report.problems.push({ path: file.path, problem });
    const servers = serversOf(file.entries);
    if (!OWN_FILES(file)) {
      if (servers.length > 0) report.projectFiles.push({ path: file.path, servers });
      continue;
    }
    if (servers.length > 0) report.own.push({ path: file.path, servers });
    for (const entry of file.entries) {
      if (entry.governed || entry.status === "wrapped" || entry.status === "invalid" || entry.status === "file-problem") continue;
      report.ungoverned.push({ name: entry.name, file: file.path, reason: entry.reason ?? entry.status });
    }
  }
  return report;
}

/** The servers of `entries` a run of the agent starts through thoughtgate once the file is enrolled. */
function serversOf(entries: readonly ServerEntry[]): string[] {
  return entries.filter((entry) => entry.governed || entry.status === "wrapped").map((entry) => entry.name);
}

/** The config files the journal holds for `agent`'s enrollment. */
function enrolledFiles(agent: AgentType): string[] {
  return readJournal()
    .filter((record) => record.holders.some((holder) => holder.kind === "enroll" && holder.agent === agent))
    .map((record) => record.configPath);
}

/** Let go of `agent`'s enrollment: each file is put back unless a running wrap still uses it (it puts it back when it ends). */
export function unenroll(agent: AgentType): RestoreResult[] {
  return enrolledFiles(agent).map((configPath) => new ConfigGuard({ configPath, agentType: agent, holder: enrollHolder(agent) }).leave());
}

/** The agents the journal holds an enrollment for. */
export function enrolledAgents(ctx?: AgentContext): AgentType[] {
  const agents = new Set(readJournal().flatMap((record) => record.holders.flatMap((holder) => (holder.kind === "enroll" ? [holder.agent] : []))));
  if (ctx !== undefined && enrolledPluginState(ctx, stableShim({ create: false }).path) !== "missing") agents.add("opencode");
  return ENROLLABLE.filter((agent) => agents.has(agent));
}

/**
 * Servers in `agent`'s enrolled files that do not run through thoughtgate: added since the
 * enrollment (the agent's own `mcp add`), so a plain run starts them ungoverned until the next
 * enroll or wrap rewrites them.
 */
export function addedSinceEnroll(agent: AgentType, files: readonly ConfigFile[]): Array<{ name: string; file: string }> {
  const enrolled = new Set(enrolledFiles(agent));
  if (enrolled.size === 0) return [];
  return files.filter((file) => enrolled.has(realConfigPath(file.path))).flatMap((file) => file.entries.filter((entry) => entry.governed).map((entry) => ({ name: entry.name, file: file.path })));
}
