import { defineCommand } from "citty";
import { homedir } from "node:os";
import { relative, sep } from "node:path";
import { discoverPolicy, policyFiles } from "../core/config/discover.ts";
import { EXIT, ThoughtGateError, usageError } from "../core/errors.ts";
import { checkPolicyFile } from "../governance/engine/policy.ts";
import { didYouMean } from "../core/suggest.ts";
import { detectAgent, isAgentType } from "../wrap/adapters/detect.ts";
import type { AgentContext, AgentType } from "../wrap/adapters/types.ts";
import { enroll as enrollAgent, enrolledAgents, ENROLLABLE, unenroll as unenrollAgent, worthEnrolling, type EnrollReport } from "../wrap/enroll.ts";
import type { JSONPath } from "jsonc-parser";
import { describeChangedSince, type PutBackKind } from "../wrap/put-back.ts";
import { codexHookTrust } from "../wrap/codex-trust.ts";
import { enrolledCodexHookKey } from "../wrap/enrolled-hooks.ts";
import { stableShim } from "../wrap/shim-path.ts";
import { unenrollOpencodePlugin, type PluginRemoval } from "../wrap/opencode-plugin.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  agent: { type: "positional", required: false, description: `The agent (${ENROLLABLE.join(", ")})`, valueHint: "AGENT" },
  all: { type: "boolean", description: "Every agent with an MCP config of its own" },
  ...commonArgs,
} as const;

function context(): AgentContext {
  return { home: process.env.HOME || homedir(), cwd: process.cwd(), env: process.env, platform: process.platform };
}

/** The agents a command acts on: the one named, or with --all those `pick` keeps. */
function chosen(agent: string | undefined, all: boolean, pick: (agent: AgentType) => boolean, verb: string): AgentType[] {
  if (agent !== undefined && all) throw usageError(`give an agent or --all, not both`);
  if (agent === undefined && !all) throw usageError(`${verb} needs an agent (${ENROLLABLE.join(", ")}) or --all`);
  if (agent === undefined) return ENROLLABLE.filter(pick);
  if (isAgentType(agent) && agent !== "custom") return [agent];
  // The agent's command names it as `wrap -- claude` does (detect.ts): `claude` is Claude Code.
  const byCommand = agent.includes("/") ? null : detectAgent([agent]);
  if (byCommand !== null && byCommand !== "custom") return [byCommand];
  throw usageError(`${verb}: expected one of ${ENROLLABLE.join("|")}, got ${JSON.stringify(agent)}${didYouMean(agent, ENROLLABLE)}`);
}

export const enroll = defineCommand({
  meta: {
    name: "enroll",
    description: "Set an agent up once: rewrite its own MCP config so every later run is governed, no `thoughtgate wrap --` needed (unenroll puts it back)",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const ctx = context();
    const agents = chosen(parsed.agent, parsed.all === true, (agent) => worthEnrolling(agent, ctx), "enroll");
    await refuseInvalidPolicy();
    if (agents.length === 0) {
      process.stdout.write("no agent to enroll: none has an MCP config of its own, or the settings directory its hook would go in\n");
      return EXIT.ok;
    }
    const lines: string[] = [];
    let failed = false;
    for (const agent of agents) {
      const report = enrollAgent(agent, ctx);
      lines.push(...render(report, ctx));
      if (agent !== "codex" || report.hook === undefined || "problem" in report.hook) continue;
      const asked = await askCodex(ctx);
      lines.push(asked.line);
      failed ||= asked.failed;
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    return failed ? EXIT.error : EXIT.ok;
  },
});

/**
 * Codex skips a hook it does not trust without a word: the enrolled hook is checked with Codex
 * itself (`codex app-server`'s hook list, wrap/codex-trust.ts) when a `codex` is on PATH.
 */
async function askCodex(ctx: AgentContext): Promise<{ line: string; failed: boolean }> {
  const codex = Bun.which("codex", { PATH: process.env.PATH ?? "" });
  const key = enrolledCodexHookKey(ctx, stableShim({ create: false }).path);
  if (key === null) return { line: "Codex: FAILED: its hook is not trusted in config.toml as written; run `thoughtgate doctor`", failed: true };
  if (codex === null) return { line: "Codex: not checked with Codex itself (no codex on PATH); `thoughtgate doctor` checks the files", failed: false };
  const trust = await codexHookTrust([codex], stableShim({ create: false }).path, ctx.cwd, key);
  if (trust.trusted) return { line: "Codex: Codex itself lists the hook as trusted (codex app-server)", failed: false };
  return { line: `Codex: FAILED: Codex will not run the enrolled hook (${trust.why}): its own tools are not governed in plain runs; \`thoughtgate unenroll codex\` puts the files back`, failed: true };
}

/**
 * An enrolled agent's every later run starts its servers under the policy in force; on an invalid
 * one they would all refuse to start. Enroll says so now, with every problem, and changes nothing.
 */
async function refuseInvalidPolicy(): Promise<void> {
  const lines: string[] = [];
  for (const found of policyFiles(discoverPolicy(undefined))) {
    const result = await checkPolicyFile(found);
    if (result.ok) continue;
    const name = found.origin === "project" ? `${found.file} (project policy)` : found.file;
    if ("unreadable" in result) lines.push(result.unreadable);
    else lines.push(`${name}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`, ...result.problems.map((problem) => `  ${problem}`));
  }
  if (lines.length === 0) return;
  throw new ThoughtGateError("CONFIG", `${lines.join("\n")}\nnot enrolled: the agent's servers would refuse to start on this policy; correct it (\`thoughtgate validate-config\` checks it) and enroll again`);
}

function render(report: EnrollReport, ctx: AgentContext): string[] {
  const show = (path: string) => displayPath(path, ctx);
  const lines: string[] = [];
  for (const file of report.shared) {
    // A file shared for the hook alone is said below.
    if (file.servers.length === 0) continue;
    const servers = file.servers.join(", ");
    lines.push(`${report.label}: enrolled ${show(file.path)}${file.outcome === "joined" ? " (already running through thoughtgate)" : ""}: ${servers}`);
  }
  if (report.shared.length === 0 && report.hook === undefined) lines.push(`${report.label}: nothing to enroll (no MCP server in its own config files)`);
  if (report.own.length === 0 && report.hook !== undefined) lines.push(`${report.label}: no MCP server in its own config files; its own tools are governed through its hook`);
  for (const file of report.projectFiles) lines.push(`${report.label}: left alone ${show(file.path)} (${file.servers.join(", ")}): a project's file, shared with its repository; \`thoughtgate wrap\` governs it for a session`);
  for (const server of report.ungoverned) lines.push(`${report.label}: still ungoverned: ${server.name} in ${show(server.file)}: ${server.reason}`);
  for (const problem of report.problems) lines.push(`${report.label}: warning: ${show(problem.path)} ${problem.problem}; not enrolled`);
  if (report.hook !== undefined && "problem" in report.hook) lines.push(`${report.label}: warning: ${show(report.hook.path)} ${report.hook.problem}`);
  else if (report.hook !== undefined) lines.push(`${report.label}: its own tools (${OWN_TOOLS[report.agent] ?? "…"}) governed in every run: ${HOOK_WHERE[report.agent] ?? "hook in"} ${show(report.hook.path)}${report.agent === "codex" ? " and trusted in config.toml" : ""}`);
  return lines;
}

/** What each agent's hook governs, and what it is called there (enrolled-hooks.ts). */
const OWN_TOOLS: Partial<Record<AgentType, string>> = {
  "claude-code": "Bash, Read, Edit, Write, WebFetch, …",
  codex: "its shell, apply_patch, …",
  gemini: "run_shell_command, write_file, replace, …",
  copilot: "bash, edit, create, view, web_fetch, …",
  opencode: "bash, edit, write, read, webfetch, …",
};
const HOOK_WHERE: Partial<Record<AgentType, string>> = { "claude-code": "PreToolUse hook in", codex: "PreToolUse hook in", gemini: "BeforeTool hook in", copilot: "preToolUse hook in", opencode: "its plugin" };

export const unenroll = defineCommand({
  meta: { name: "unenroll", description: "Put an enrolled agent's MCP config back as it was (its own later changes kept)" },
  args,
  run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const enrolled = new Set(enrolledAgents(context()));
    const agents = chosen(parsed.agent, parsed.all === true, (agent) => enrolled.has(agent), "unenroll");
    const lines: string[] = [];
    let failed = false;
    for (const agent of agents) {
      const results = unenrollAgent(agent);
      const plugin = agent === "opencode" ? unenrollOpencodePlugin(context()) : null;
      if (plugin?.status === "failed") failed = true;
      if (results.length === 0 && (plugin === null || plugin.status === "absent")) lines.push(`${agent}: not enrolled`);
      for (const result of results) {
        if (result.status === "restored" && result.removed) lines.push(`${agent}: removed ${result.configPath} (enroll made it for the hook)`);
        else if (result.status === "restored") lines.push(`${agent}: restored ${result.configPath} (${restoredHow(result.kind, result.changedSince)})`);
        else if (result.status === "kept") lines.push(`${agent}: ${result.configPath} stays rewritten while ${result.holders} uses it; it is put back when that ends`);
        else if (result.status === "failed") {
          failed = true;
          lines.push(`${agent}: FAILED ${result.configPath}: ${result.error}`);
        }
      }
      if (plugin !== null && plugin.status !== "absent") lines.push(pluginLine(plugin));
    }
    if (agents.length === 0) lines.push("no agent is enrolled");
    process.stdout.write(`${lines.join("\n")}\n`);
    return failed ? EXIT.error : EXIT.ok;
  },
});

/** What became of opencode's enrolled plugin. */
function pluginLine(removal: PluginRemoval): string {
  if (removal.status === "removed") return `opencode: removed ${removal.path} (ThoughtGate's plugin)`;
  if (removal.status === "changed") return `opencode: left ${removal.path}: changed since enroll wrote it; remove it yourself if it is no longer wanted`;
  return `opencode: FAILED to remove ${removal.path}: ${removal.error ?? "unknown error"}`;
}

/** How the file came back: whole, or only the keys enroll wrote that still hold what it wrote. */
function restoredHow(kind: PutBackKind, changedSince: readonly JSONPath[] | undefined): string {
  if (kind === "backup" || kind === "unchanged") return "byte-identical";
  const kept = changedSince && changedSince.length > 0 ? `; ${describeChangedSince(changedSince)}` : "";
  return `kept the agent's own changes${kept}`;
}

/** `~/.claude.json` inside home, else absolute. */
function displayPath(path: string, { home }: { home: string }): string {
  const rel = relative(home, path);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) ? `~${sep}${rel}` : path;
}
