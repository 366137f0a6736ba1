import { rmSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { homedir } from "node:os";
import { createTwoFilesPatch } from "diff";
import { bestEffort, messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV } from "../governance/wire/env.ts";
import { desktopTool } from "../governance/approval/desktop-notifier.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { publishService, siblingServices } from "../governance/wire/service-descriptor.ts";
import type { SessionView } from "../governance/wire/api.ts";
import { discoveryPaths } from "../core/config/discover.ts";
import { EMBEDDED_DEFAULT_WORDS } from "../governance/engine/default-policy.ts";
import { looseningReport } from "../governance/engine/explain.ts";
import { newSecret, processPersonCheck, startGovernanceService, userAtHost, type GovernanceService } from "../governance/service/service.ts";
import { startServiceTracer } from "../governance/engine/tracing.ts";
import { AGENT_TYPES, detectAgent, isVsCodeInsiders, projectDir, renderCoverage, rewrite, type AgentContext, type AgentType, type ConfigFile } from "./adapters/index.ts";
import { restoreAllGuards } from "./config-guard.ts";
import { describeChangedSince } from "./put-back.ts";
import { wrapHolder } from "./holders.ts";
import { addedSinceEnroll } from "./enroll.ts";
import { planConfigs, shareConfigs, type ConfigPlan, type PlanOptions } from "./share-configs.ts";
import { runAgent } from "./agent-process.ts";
import { agentCanAsk, agentMode, agentScreen } from "./agent-modes.ts";
import { answeringHooks } from "../governance/verdict/agent-prompt-hooks.ts";
import { SessionVoice } from "./session-voice.ts";
import { agentPromptsNote, soleApprover } from "./sole-approver.ts";
import { projectRoot } from "../core/project.ts";
import { commandLineConfigs, type CommandLineConfigs } from "./agent-args.ts";
import { checkCoverage } from "./coverage-gate.ts";
import { drainShims } from "./drain.ts";
import { isSameProcessRunning, ownProcessStartId } from "../core/process-identity.ts";
import { repairStale } from "./repair.ts";
import { createSessionDir, describeDecision, followEvents, readEvents, renderDecidedCalls, renderSummary, summarize } from "./session-record.ts";
import { callsOfFile } from "../record/session-calls.ts";
import { startSessionInfo } from "./session-info.ts";
import { SESSION_ENV } from "../governance/wire/session-index.ts";
import { pinsSummary } from "./pins-summary.ts";
import { stableShim } from "./shim-path.ts";
import { governedServerNames, hooklessMode, hooksGovern, withAgentHooks, withGeminiHook } from "./agent-hooks.ts";
import { codexHookTrust, type CodexHookTrust } from "./codex-trust.ts";
import { enrolledCodexHookKey } from "./enrolled-hooks.ts";
import { opencodePluginsOff, opencodeSessionEnv } from "./opencode-plugin.ts";
import { hooksTurnedOff, shareCopilotHook } from "./copilot-hook.ts";

/** How long shims get to drain after the agent exits. */
const SHIM_DRAIN_MS = 10_000;
/** After SIGTERM to a shim or a server group left at the end, how long before SIGKILL. */
const END_KILL_GRACE_MS = 2_000;

export type WrapOptions = {
  /** The agent's command line. */
  command: string[];
  agentType?: AgentType;
  configPath?: string;
  profile: Profile;
  /** `--thoughtgate-config`. */
  policyFile?: string;
  governancePort: number;
  restore: boolean;
  dryRun: boolean;
  /** `--allow-ungoverned`: start the agent even when nothing (or not every file) can be governed. */
  allowUngoverned?: boolean;
  /** `--sole-approver`: the agent's own flags leave the asking about governed servers' tools to ThoughtGate (sole-approver.ts). */
  soleApprover?: boolean;
  /** Print each governance decision as it happens (the demo does). */
  showDecisions: boolean;
  /**
   * False: `thoughtgate approve|deny` decide without a terminal, as with `cli.require_terminal:
   * false` in the user's policy. Only `thoughtgate demo` says so, for its scripted person.
   */
  cliRequireTerminal?: boolean;
  /** Where wrap talks to the user (stderr: the agent owns stdout). */
  say: (text: string) => void;
  /** Where `--dry-run` writes its diff (stdout, so `wrap --dry-run -- claude > wrap.diff` works). */
  print?: (text: string) => void;
  context?: AgentContext;
};

/**
 * `thoughtgate wrap`: find the agent's MCP configs, route every stdio server through a shim that
 * asks this session's governance service, run the agent, and put every config back on every exit
 * path. Resolves with the agent's exit code.
 */
export async function runWrap(options: WrapOptions): Promise<number> {
  const agent = options.agentType ?? detectAgent(options.command);
  if (!agent) {
    throw usageError(`cannot tell which agent ${JSON.stringify(options.command[0])} is: pass --agent-type (${AGENT_TYPES.join(", ")})`);
  }
  if (agent === "custom" && !options.configPath) throw usageError("--agent-type custom needs --config-path");
  const ctx = options.context ?? { home: process.env.HOME || homedir(), cwd: projectDir(agent, options.command, process.cwd()), env: process.env, platform: process.platform };

  // EC: a config left rewritten by a wrap that was killed is put back before anything else.
  if (!options.dryRun) {
    for (const outcome of repairStale()) options.say(`thoughtgate: repaired ${outcome.configPath}, left rewritten by an earlier wrap (${outcome.status})`);
  }
  const given = commandLineConfigs(agent, options.command, ctx);
  try {
    return await governAndRun(options, agent, ctx, given);
  } finally {
    given.dispose();
  }
}

/** The names the agent knows its governed servers by (its own flags name them: sole-approver.ts). */
function governedNames(plan: ConfigPlan): string[] {
  return [...plan.files, ...plan.given].flatMap((file) => file.entries.filter((entry) => entry.governed || entry.status === "wrapped").map((entry) => entry.name));
}

async function governAndRun(options: WrapOptions, agent: AgentType, ctx: AgentContext, given: CommandLineConfigs): Promise<number> {
  // Every entry names the shim path, the same for every session (shim-path.ts); made this binary
  // before the configs are read, so entries another wrap or enroll wrote are known as ours.
  const planning: PlanOptions = {
    agent,
    ctx,
    discover: { ...(options.configPath ? { configPath: options.configPath } : {}), insiders: isVsCodeInsiders(options.command) },
    binary: stableShim({ create: !options.dryRun }).path,
    given: given.files,
  };
  // A mode that turns the agent's hooks or plugins off leaves its own tools ungoverned: refused the
  // same way, unless --allow-ungoverned (then the banner says so: hooksLines).
  const hooksOff = agent === "claude-code" ? hooklessMode(options.command) : agent === "opencode" ? opencodePluginsOff(options.command, process.env) : null;
  if (hooksOff !== null && !options.allowUngoverned) {
    throw new ThoughtGateError("CONFIG", `${hooksOff} turns ${agent === "opencode" ? "opencode's plugins" : "Claude Code's hooks"} off, so its own tools (shell, edits, writes, …) would run ungoverned; the agent was not started (drop ${hooksOff}; or pass --allow-ungoverned to run it with only its MCP servers governed)`);
  }
  const first = planConfigs(planning);
  options.say(`thoughtgate: ${agent} MCP servers\n${renderCoverage([...first.files, ...first.given], ctx)}`);
  const coverage = {
    agent,
    configPath: options.configPath === undefined ? undefined : resolve(ctx.cwd, options.configPath),
    allowUngoverned: options.allowUngoverned === true,
    hooksGovern: hooksGovern(agent, options.command),
  };
  const warning = checkCoverage([...first.files, ...first.given], coverage);
  if (warning) options.say(warning);
  const added = addedSinceEnroll(agent, first.files);
  if (added.length > 0 && !options.dryRun) {
    options.say(`thoughtgate: added since ${agent} was enrolled, so far started ungoverned by a plain run: ${added.map((entry) => entry.name).join(", ")}; governed from now on (the file stays enrolled)`);
  }

  if (options.dryRun) {
    const print = options.print ?? options.say;
    for (const file of [...first.files, ...first.given]) {
      if (!file.entries.some((entry) => entry.governed)) continue;
      const { text } = rewrite(file.text, file.entries, first.shimFor);
      print(createTwoFilesPatch(file.path, file.path, file.text, text, "current", "while wrapped"));
    }
    options.say("thoughtgate: --dry-run: nothing was changed");
    return 0;
  }

  // Codex skips a hook it does not trust without a word: asked of Codex itself, never assumed, and
  // a hook it would skip stops the session before anything starts (a governance doubt fails closed).
  // An enrolled Codex hook (trusted in config.toml) is the one asked about, and no second one is given.
  const codexEnrolled = agent === "codex" && hooksGovern(agent, options.command) ? enrolledCodexHookKey(ctx, planning.binary) : null;
  const codexTrust = agent === "codex" && hooksGovern(agent, options.command) ? await codexHookTrust(options.command, planning.binary, ctx.cwd, codexEnrolled) : null;
  if (codexTrust !== null && !codexTrust.trusted) {
    const why = `Codex will not run ThoughtGate's hook (${codexTrust.why}), so its own tools (shell, apply_patch, …) would run ungoverned`;
    // With --allow-ungoverned it runs, and the banner says so (hooksLines).
    if (!options.allowUngoverned) throw new ThoughtGateError("CONFIG", `${why}; the agent was not started (remove what overrides hooks from its command line or config, see \`thoughtgate doctor\`; or pass --allow-ungoverned to run it with only its MCP servers governed)`);
  }
  if (coverage.hooksGovern && governedNames(first).length === 0) options.say(`thoughtgate: ${agent} has no MCP server to govern: its own tools go through ThoughtGate's hook`);

  const engines = await EngineHolder.load(options.policyFile);
  // One trace per session: the service's span is the root its shims' spans hang under.
  const tracer = await startServiceTracer(engines.policy, "wrap");
  const sessionSecret = newSecret();
  const cliKey = newSecret();
  const runId = Bun.randomUUIDv7();
  const canAsk = agentCanAsk(agent, options.command);
  const mode = agentMode(agent, options.command);
  const desktop = desktopTool();
  const record = createSessionDir(runId);
  // From here on wrap and its service speak through the session's voice: its log file always, the
  // terminal only while no agent that owns it runs (session-voice.ts).
  const screen = agentScreen(agent, options.command);
  const voice = new SessionVoice(record.dir, screen, options.say);
  let agentPid: number | null = null;
  // How people tell this session from others (`thoughtgate approvals`, the page): agent, project, start.
  const naming = { kind: "wrap" as const, agent: options.command[0] ? basename(options.command[0]) : agent, project: projectRoot(ctx.cwd), started_at: new Date().toISOString() };
  const service = startGovernanceService({
    engine: () => engines.engine,
    profile: options.profile,
    port: options.governancePort,
    sessionSecret,
    pageKey: newSecret(),
    cliKey,
    // Only a person decides: never a process the agent runs, and the CLI only at a terminal unless
    // the user's own policy says otherwise (the base layer: never a project's).
    people: processPersonCheck({
      requireTerminal: () => options.cliRequireTerminal !== false && engines.policy.base.engine.config.cli?.require_terminal !== false,
      agent: () => agentPid,
    }),
    agentCanAsk: canAsk,
    waiting: (task) => voice.waiting(task),
    // Esc on ThoughtGate's form is the person's no where wrap knows a person sees the form.
    dismissIsNo: mode === "interactive",
    desktop,
    always: (await import("../governance/approval/always-allow.ts")).alwaysWriter({ policy: () => engines.policy, reload: () => engines.reload(), env: process.env, cwd: process.cwd(), origin: `wrap session ${runId}`, now: () => new Date() }),
    // The session's project: its calls are decided in it (docs/governance.md, "Rules that see
    // arguments"), and "always … in this project" keeps its rule to it.
    sessionProject: projectRoot(ctx.cwd),
    session: naming,
    // Sessions side by side share a Slack app: a click on another's message is handed on to it.
    siblings: () => siblingServices(isSameProcessRunning),
    origin: `${basename(options.command[0] ?? "the agent")} under thoughtgate wrap on ${userAtHost()}`,
    role: "wrap",
    ...(tracer ? { tracer } : {}),
  });
  engines.watch();
  const cli = publishCliAccess(service.url, cliKey, naming);
  // The shims' secret goes in the session directory (0600), not in the agent's config: a project
  // config (.mcp.json, .vscode/mcp.json) may be shared or committed while the session runs.
  // The team's log pipeline gets the session's calls when the user's policy names a collector.
  const otlp = engines.policy.base.engine.config.telemetry?.otlp;
  const auditExport = otlp ? await (await import("../record/audit-export.ts")).startAuditExport({ eventsPath: record.events, session: runId, otlp }) : null;
  if (auditExport) service.metrics.watchAuditExport(() => auditExport.stats());
  const secretFile = join(record.dir, "secret");
  writeFileSync(secretFile, sessionSecret, { mode: 0o600 });
  // Which prompts the person will see, and from whom (sole-approver.ts): the banner says so.
  // opencode declares no MCP elicitation (README, "Approvals, agent by agent"): it shows no form.
  const where = canAsk && agent !== "opencode"
    ? `in the agent's own form ("MCP server … requests your input"), on the approvals page and with thoughtgate approve${desktop ? " (a desktop notification too, if still undecided after 10 s)" : ""}`
    : `on the approvals page and with thoughtgate approve${desktop ? ", and in a desktop notification" : ""}`;
  const sole = soleApprover(agent, options.command, governedNames(first), mode, where);
  // The session's descriptor, before anything can start a shim: shims find the session by it.
  const info = startSessionInfo({ runId, endpoint: service.url, profile: options.profile, agent: { type: agent, command: options.command }, cwd: ctx.cwd });
  const agentName = options.command[0] ? basename(options.command[0]) : agent;
  voice.say(
    [
      `thoughtgate: policy ${engines.files.length > 0 ? engines.label : `embedded default (${EMBEDDED_DEFAULT_WORDS})`}, profile ${options.profile}`,
      // A project rule that can never take effect (it would loosen the user's policy) is said, with where it belongs.
      ...looseningReport(engines.policy, discoveryPaths().user).map((line) => `thoughtgate: ${line}`),
      `thoughtgate: governance service ${service.url}`,
    ].join("\n"),
  );
  // The keys go to the terminal only: the page key is never written to disk, wrap.log included.
  voice.sayKeyed(
    `thoughtgate: approvals page (keep it private) ${service.approvalsUrl}\n${cli.howTo}`,
    `thoughtgate: approvals page ${service.url}/approvals (its key only on the terminal; thoughtgate approvals prints it again)`,
  );
  voice.say(
    [
      ...(canAsk ? [] : [`thoughtgate: ${agentName} in this mode answers no approval prompt itself: approvals go to the page, thoughtgate approve${desktop ? " and a desktop notification" : ""}`]),
      // Who asks about MCP tools: said only when the session governs an MCP server.
      ...(options.soleApprover ? sole.lines : governedNames(first).length === 0 ? [] : [agentPromptsNote(agent, mode, hooksGovern(agent, options.command))].filter((line): line is string => line !== null)),
      ...hooksLines(agent, options.command, codexTrust, codexEnrolled !== null),
      ...promptHookLines(agent, options.command, ctx.cwd, desktop !== null),
      ...(screen === "owns"
        ? [`thoughtgate: while ${agentName} runs, wrap writes nothing here: approve in ${agentName}'s own prompt, on the page (\`thoughtgate approvals\` prints its link again)${desktop ? ", in the desktop notification" : ""}; wrap's log ${voice.recording ? voice.path : "cannot be written"}`]
        : [`thoughtgate: wrap's log ${voice.recording ? voice.path : "cannot be written"}`]),
      `thoughtgate: session record ${record.events}${auditExport ? ` (sent on as OTLP logs to ${auditExport.url})` : ""}`,
    ].join("\n"),
  );

  const restoreEverything = () => {
    if (!options.restore) return;
    for (const result of restoreAllGuards()) {
      if (result.status === "restored" && result.removed) voice.say(`thoughtgate: removed ${result.configPath} (made for this session's hook)`);
      else if (result.status === "restored") voice.say(`thoughtgate: restored ${result.configPath} (${result.kind === "backup" ? "byte-identical" : `kept the agent's own changes${result.changedSince ? `; ${describeChangedSince(result.changedSince)}` : ""}`})`);
      if (result.status === "kept") voice.say(`thoughtgate: left ${result.configPath} rewritten for ${result.holders}`);
    }
  };
  const onExit = () => {
    restoreEverything();
    info.end();
    voice.close();
    cli.unpublish();
    bestEffort(() => rmSync(secretFile, { force: true }));
  };
  const onUncaught = (error: unknown) => {
    log.error(`unexpected error: ${messageOf(error)}; restoring configs`);
    restoreEverything();
    process.exit(1);
  };
  process.on("exit", onExit);
  process.on("uncaughtException", onUncaught);

  let shared: ReturnType<typeof shareConfigs>;
  // What ends with the session whichever way it ends: the service, the session's files and handlers.
  const endSession = async () => {
    await stop(service, engines);
    info.end();
    cli.unpublish();
    rmSync(secretFile, { force: true });
    process.off("exit", onExit);
    process.off("uncaughtException", onUncaught);
  };
  // Gemini CLI's hook goes into its user settings with its MCP entries, through the same guard (agent-hooks.ts).
  const hook = agent === "gemini" && hooksGovern(agent, options.command) ? { addHook: (file: ConfigFile, text: string) => withGeminiHook(file, text, planning.binary) } : {};
  try {
    // Read again under the configs lock: another wrap may have rewritten (or restored) them meanwhile.
    shared = shareConfigs({ ...planning, ...hook }, wrapHolder(runId), (plan) => void checkCoverage([...plan.files, ...plan.given], coverage));
  } catch (error) {
    restoreEverything();
    await endSession();
    voice.close();
    throw error;
  }
  const { plan } = shared;
  if ("addHook" in hook) {
    const line = geminiHookLine(shared.shared.map((one) => one.file));
    if (line === null && !options.allowUngoverned) {
      restoreEverything();
      await endSession();
      voice.close();
      throw new ThoughtGateError("CONFIG", "Gemini CLI's hook could not be added (no readable ~/.gemini/settings.json), so its own tools (run_shell_command, write_file, …) would run ungoverned; the agent was not started (make the file readable; or pass --allow-ungoverned to run it with only its MCP servers governed)");
    }
    voice.say(line ?? "thoughtgate: warning: --allow-ungoverned: Gemini CLI's hook could not be added (no readable ~/.gemini/settings.json): its own tools are not governed this session, only its MCP servers");
  }
  // Copilot CLI's hook goes into its user settings.json through the same guard (copilot-hook.ts).
  if (agent === "copilot" && hooksGovern(agent, options.command)) {
    const off = hooksTurnedOff(ctx);
    if (off.length > 0) {
      restoreEverything();
      await endSession();
      voice.close();
      throw new ThoughtGateError("CONFIG", `${off.join(", ")} set${off.length === 1 ? "s" : ""} disableAllHooks: Copilot CLI would run its own tools (bash, edit, create, …) without ThoughtGate's hook; remove it, then run wrap again`);
    }
    const copilotHook = shareCopilotHook(ctx, planning.binary, wrapHolder(runId), false);
    if ("problem" in copilotHook && !options.allowUngoverned) {
      restoreEverything();
      await endSession();
      voice.close();
      throw new ThoughtGateError("CONFIG", `Copilot CLI's hook could not be added: ${copilotHook.path} ${copilotHook.problem}; its own tools (bash, edit, create, …) would run ungoverned, so the agent was not started (or pass --allow-ungoverned to run it with only its MCP servers governed)`);
    }
    voice.say(copilotHookLine(copilotHook));
  }
  // The servers whose tools the agent's hook leaves to their shims (agent-hooks.ts).
  if (hooksGovern(agent, options.command)) info.serversGoverned(governedServerNames([...plan.files, ...plan.given].flatMap((file) => file.entries), agent === "opencode" ? "_" : agent === "copilot" ? "-" : "__"));

  const pins = pinsSummary(plan.serverIds, engines.engine);
  if (pins) voice.say(pins);

  const follower = options.showDecisions
    ? followEvents(record.events, (event) => {
        const line = describeDecision(event);
        if (line) voice.say(line);
      })
    : null;

  let exitCode: number;
  try {
    // The agent carries the session: its shims find it there (governance/deciders/find-session.ts).
    // The terminal is the agent's once it runs (not before: "cannot start" is for the person to read).
    const onStart = (pid: number) => {
      voice.agentStarted();
      agentPid = pid;
      info.agentStarted(pid);
    };
    const launched = given.rewrittenCommand(plan.shimFor, record.dir);
    const approving = options.soleApprover ? soleApprover(agent, launched, governedNames(plan), mode, where).command : launched;
    // The agent's own tools go through `thoughtgate hook` for this session (agent-hooks.ts).
    const command = codexEnrolled === null ? withAgentHooks(agent, approving, planning.binary, record.dir, ctx.cwd) : approving;
    // opencode's hook is a plugin named in its environment (opencode-plugin.ts).
    const hookEnv = agent === "opencode" && hooksGovern(agent, options.command) ? opencodeSessionEnv(planning.binary, record.dir, process.env) : {};
    exitCode = await runAgent({ command, env: { [SESSION_ENV]: runId, ...claudeConnectsFirst(agent), ...hookEnv }, onStart }, (text) => voice.say(text));
  } finally {
    voice.agentExited();
    // Tell the shims to drain, give them time, then put the configs back.
    service.setShutdown();
    const drained = await drainShims({ eventsPath: record.events, runId, profile: options.profile, timeoutMs: SHIM_DRAIN_MS, killGraceMs: END_KILL_GRACE_MS });
    if (drained.serversEnded > 0) voice.say(`thoughtgate: ended ${drained.serversEnded} MCP server process group(s) left running after their shim`);
    follower?.stop();
    await auditExport?.stop();
    if (options.restore) restoreEverything();
    else {
      for (const { guard } of shared.shared) guard.release();
      if (shared.shared.length > 0) voice.say("thoughtgate: --no-restore: configs stay rewritten; `thoughtgate unwrap --all` puts them back");
    }
    await endSession();
  }
  voice.say(`${renderSummary(summarize(readEvents(record.events)), record.events)}\n${renderDecidedCalls(callsOfFile(record.events, runId), runId)}`);
  voice.close();
  return exitCode;
}

/**
 * Claude Code 2.1 under `-p` starts its first turn while MCP servers still connect, and with a
 * PreToolUse hook configured (as under wrap) it loses that race most times: the model is offered
 * none of the governed servers' tools. `MCP_CONNECTION_NONBLOCKING=false` makes it connect them
 * first; a value the user set is theirs.
 */
function claudeConnectsFirst(agent: AgentType): Record<string, string> {
  return agent === "claude-code" && process.env.MCP_CONNECTION_NONBLOCKING === undefined ? { MCP_CONNECTION_NONBLOCKING: "false" } : {};
}

/** The banner's line when Gemini CLI's user settings took ThoughtGate's hook (shared through the guard); null when they did not. */
function geminiHookLine(files: readonly ConfigFile[]): string | null {
  const user = files.find((file) => file.agent === "gemini" && file.scope === "user");
  if (user !== undefined) return `thoughtgate: Gemini CLI's own tools (run_shell_command, write_file, replace, …) go through ThoughtGate too: its BeforeTool hook, in ${user.path} for this session (${user.exists ? "put back byte for byte after" : "created for it, removed after"})`;
  return null;
}

/** Whether Copilot CLI's settings took ThoughtGate's hook, or why not. */
function copilotHookLine(shared: ReturnType<typeof shareCopilotHook>): string {
  if ("problem" in shared) return `thoughtgate: warning: --allow-ungoverned: Copilot CLI's hook could not be added: ${shared.path} ${shared.problem}; its own tools are not governed this session, only its MCP servers`;
  return `thoughtgate: Copilot CLI's own tools (bash, edit, create, view, web_fetch, …) go through ThoughtGate too: its preToolUse hook, in ${shared.path} for this session (${shared.created ? "created for it, removed after" : "put back byte for byte after"})`;
}

/** What the banner says of the agent's own tools: governed through its hook, or why not. */
/**
 * The project's Claude settings could answer Claude Code's own questions in the person's place: its
 * permission prompt (a `PermissionRequest` hook: the hook asks on ThoughtGate's channels instead)
 * and an MCP server's form (an `Elicitation` hook: the shims put it none). Said before the agent
 * takes the screen, so the person knows where they will be asked (governance/verdict/agent-prompt-hooks.ts).
 */
function promptHookLines(agent: AgentType, command: readonly string[], cwd: string, desktop: boolean): string[] {
  if (agent !== "claude-code" || detectAgent(command) !== "claude-code" || !agentCanAsk(agent, command)) return [];
  const where = `on the approvals page${desktop ? ", in a desktop notification" : ""} and with thoughtgate approve`;
  const named = (files: string[]) => `${files.map((file) => relative(cwd, file) || file).join(", ")} ha${files.length === 1 ? "s" : "ve"}`;
  const lines: string[] = [];
  const answering = answeringHooks(cwd);
  const permission = hooksGovern(agent, command) ? answering.PermissionRequest : [];
  if (permission.length > 0) lines.push(`thoughtgate: ${named(permission)} a PermissionRequest hook (or cannot be read), which could answer Claude Code's own prompt in your place: its own tools are asked ${where} instead`);
  const elicitation = answering.Elicitation;
  if (elicitation.length > 0) lines.push(`thoughtgate: ${named(elicitation)} an Elicitation or ElicitationResult hook (or cannot be read), which could answer ThoughtGate's approval form in your place: MCP tools are asked ${where} instead of in Claude Code`);
  return lines;
}

function hooksLines(agent: AgentType, command: readonly string[], codexTrust: CodexHookTrust | null, codexEnrolled: boolean): string[] {
  if (agent === "codex" && hooksGovern(agent, command)) {
    if (codexTrust?.trusted === true && codexEnrolled) return ["thoughtgate: Codex's own tools (its shell, apply_patch, …) go through ThoughtGate too: its enrolled PreToolUse hook (hooks.json, trusted in config.toml; no second one given for the session)"];
    if (codexTrust?.trusted === true) return ["thoughtgate: Codex's own tools (its shell, apply_patch, …) go through ThoughtGate too: its PreToolUse hook, trusted for this session only (-c on its command line; your config.toml is not touched)"];
    return [`thoughtgate: warning: --allow-ungoverned: Codex will not run ThoughtGate's hook: ${codexTrust?.why ?? "its trust is unknown"}; its own tools (shell, apply_patch, …) are not governed this session, only its MCP servers`];
  }
  if (agent === "claude-code" && hooksGovern(agent, command)) return ["thoughtgate: Claude Code's own tools (Bash, Read, Edit, Write, WebFetch, …) go through ThoughtGate too: its PreToolUse hook, for this session (--settings in the session directory; your settings files are not touched)"];
  if (agent === "opencode") {
    const pure = opencodePluginsOff(command, process.env);
    if (pure === null && hooksGovern(agent, command)) return ["thoughtgate: opencode's own tools (bash, edit, write, read, webfetch, …) go through ThoughtGate too: its plugin, for this session (OPENCODE_CONFIG_CONTENT, the file in the session directory; your opencode files are not touched)"];
    if (pure !== null) return [`thoughtgate: warning: --allow-ungoverned: ${pure} turns opencode's plugins off: its own tools (bash, edit, write, …) are not governed this session, only its MCP servers`];
  }
  const off = hooklessMode(command);
  if (agent === "claude-code" && off !== null) return [`thoughtgate: warning: --allow-ungoverned: ${off} turns Claude Code's hooks off: its own tools (Bash, Edit, Write, …) are not governed this session, only its MCP servers`];
  return [];
}

/**
 * Let `thoughtgate tasks|approve|deny` in another terminal find this session: the service
 * descriptor (state dir, 0600, not the session directory whose path every shim's argv shows).
 * Without it the CLI key is printed instead, since nothing else would reach it.
 */
function publishCliAccess(endpoint: string, cliKey: string, naming: SessionView): { howTo: string; unpublish: () => void } {
  try {
    const unpublish = publishService({ endpoint, pid: process.pid, start_id: ownProcessStartId(), cli_key: cliKey, ...naming, kind: "wrap" });
    return { howTo: "thoughtgate: thoughtgate tasks | approve | deny (from another terminal) find this session on their own", unpublish };
  } catch (error) {
    return {
      howTo: `thoughtgate: cannot record this session for thoughtgate tasks | approve | deny (${messageOf(error)}); give them: ${ENDPOINT_ENV}=${endpoint} ${APPROVAL_KEY_ENV}=${cliKey}`,
      unpublish: () => {},
    };
  }
}

async function stop(service: GovernanceService, engines: EngineHolder): Promise<void> {
  engines.close();
  await service.stop();
}
