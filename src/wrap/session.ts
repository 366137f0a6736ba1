import { rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { homedir } from "node:os";
import { createTwoFilesPatch } from "diff";
import type { JSONPath } from "jsonc-parser";
import { bestEffort, messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV } from "../governance/wire/env.ts";
import { desktopTool } from "../governance/approval/desktop-notifier.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { publishService } from "../governance/wire/service-descriptor.ts";
import { projectRoot } from "../core/project.ts";
import { discoveryPaths } from "../core/config/discover.ts";
import { EMBEDDED_DEFAULT_WORDS } from "../governance/engine/default-policy.ts";
import { looseningReport } from "../governance/engine/explain.ts";
import { newSecret, startGovernanceService, userAtHost, type GovernanceService } from "../governance/service/service.ts";
import { startServiceTracer } from "../governance/engine/tracing.ts";
import { remoteShimArgs } from "./remote-entry.ts";
import { AGENT_TYPES, detectAgent, discover, isVsCodeInsiders, projectDir, renderCoverage, rewrite, type AgentContext, type AgentType, type ConfigFile, type ServerEntry, type ShimCommand } from "./adapters/index.ts";
import { ConfigGuard, restoreAllGuards } from "./config-guard.ts";
import { realConfigPath } from "./config-path.ts";
import { lockedError, lockPathFor, tryLock } from "./lock.ts";
import { runAgent } from "./agent-process.ts";
import { agentCanAsk } from "./agent-modes.ts";
import { commandLineConfigs, type CommandLineConfigs } from "./agent-args.ts";
import { checkCoverage } from "./coverage-gate.ts";
import { drainShims } from "./drain.ts";
import { ownProcessStartId } from "./process-identity.ts";
import { repairStale } from "./repair.ts";
import { createSessionDir, describeDecision, followEvents, readEvents, renderSummary, summarize } from "./session-record.ts";
import { recordSessionBinary } from "./session-info.ts";
import { pinsSummary } from "./pins-summary.ts";
import { shimBinary } from "./shim-path.ts";

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
  /** Print each governance decision as it happens (the demo does). */
  showDecisions: boolean;
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
  const files = discover(agent, ctx, { ...(options.configPath ? { configPath: options.configPath } : {}), insiders: isVsCodeInsiders(options.command) });
  // A file whose entries already run a shim may be another wrap's, still running:
  // that is the lock error, not "nothing to govern".
  for (const file of files) {
    if (!file.entries.some((entry) => entry.status === "wrapped")) continue;
    const lockPath = lockPathFor(realConfigPath(file.path));
    const held = tryLock(lockPath);
    if (!held.ok) throw lockedError(lockPath, file.path, held.holderPid);
    held.lock.release();
  }
  const given = commandLineConfigs(agent, options.command, ctx);
  try {
    return await governAndRun(options, agent, ctx, files, given);
  } finally {
    given.dispose();
  }
}

async function governAndRun(options: WrapOptions, agent: AgentType, ctx: AgentContext, files: ConfigFile[], given: CommandLineConfigs): Promise<number> {
  options.say(`thoughtgate: ${agent} MCP servers\n${renderCoverage([...files, ...given.files], ctx)}`);
  const warning = checkCoverage([...files, ...given.files], { agent, configPath: options.configPath === undefined ? undefined : resolve(ctx.cwd, options.configPath), allowUngoverned: options.allowUngoverned === true });
  if (warning) options.say(warning);
  const toRewrite = files.filter((file) => file.entries.some((entry) => entry.governed));

  if (options.dryRun) {
    const shimFor = shimCommand(shimBinary({ create: false }).path, options.profile, "http://127.0.0.1:<port>", { secretFile: "<session dir>/secret", runId: "<run id>", events: "<session record>" });
    const print = options.print ?? options.say;
    for (const file of [...toRewrite, ...given.files]) {
      const { text } = rewrite(file.text, file.entries, shimFor);
      print(createTwoFilesPatch(file.path, file.path, file.text, text, "current", "while wrapped"));
    }
    options.say("thoughtgate: --dry-run: nothing was changed");
    return 0;
  }

  const engines = await EngineHolder.load(options.policyFile);
  // One trace per session: the service's span is the root its shims' spans hang under.
  const tracer = await startServiceTracer(engines.policy, "wrap");
  const sessionSecret = newSecret();
  const cliKey = newSecret();
  const runId = Bun.randomUUIDv7();
  const canAsk = agentCanAsk(agent, options.command);
  const desktop = desktopTool();
  const service = startGovernanceService({
    engine: () => engines.engine,
    profile: options.profile,
    port: options.governancePort,
    sessionSecret,
    pageKey: newSecret(),
    cliKey,
    agentCanAsk: canAsk,
    desktop,
    alwaysAllow: async (task) =>
      (await import("../governance/approval/always-allow.ts")).alwaysAllow(task, { policy: () => engines.policy, reload: () => engines.reload(), env: process.env, cwd: process.cwd(), origin: `wrap session ${runId}`, now: () => new Date() }),
    origin: `${basename(options.command[0] ?? "the agent")} under thoughtgate wrap on ${userAtHost()}`,
    role: "wrap",
    // The session's project (docs/governance.md, "Rules that see arguments"): where wrap was started.
    sessionProject: projectRoot(process.cwd()),
    ...(tracer ? { tracer } : {}),
  });
  engines.watch();
  const cli = publishCliAccess(service.url, cliKey);
  const record = createSessionDir(runId);
  // The shims run a pin of this binary, not the install's path (shim-path.ts: upgrades, npx caches).
  const binary = recordSessionBinary(record.dir);
  // The shims' secret goes in the session directory (0600), not in the agent's config: a project
  // config (.mcp.json, .vscode/mcp.json) may be shared or committed while the session runs.
  const secretFile = join(record.dir, "secret");
  writeFileSync(secretFile, sessionSecret, { mode: 0o600 });
  options.say(
    [
      `thoughtgate: policy ${engines.files.length > 0 ? engines.label : `embedded default (${EMBEDDED_DEFAULT_WORDS})`}, profile ${options.profile}`,
      // A project rule that can never take effect (it would loosen the user's policy) is said, with where it belongs.
      ...looseningReport(engines.policy, discoveryPaths().user).map((line) => `thoughtgate: ${line}`),
      `thoughtgate: governance service ${service.url}; approvals page (keep it private) ${service.approvalsUrl}`,
      cli.howTo,
      ...(canAsk ? [] : [`thoughtgate: ${options.command[0] ? basename(options.command[0]) : agent} in this mode answers no approval prompt itself: approvals go to the page, thoughtgate approve${desktop ? " and a desktop notification" : ""}`]),
      `thoughtgate: session record ${record.events}`,
    ].join("\n"),
  );

  const guards: ConfigGuard[] = [];
  const governedIds: string[] = [];
  const shimFor = recordingIds(shimCommand(binary, options.profile, service.url, { secretFile, runId, events: record.events }), governedIds);
  const restoreEverything = () => {
    if (!options.restore) return;
    for (const result of restoreAllGuards()) {
      if (result.status === "restored") options.say(`thoughtgate: restored ${result.configPath} (${result.kind === "backup" ? "byte-identical" : "kept the agent's own changes"})`);
    }
  };
  const onExit = () => {
    restoreEverything();
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

  try {
    for (const file of toRewrite) guards.push(rewriteFile(file, agent, shimFor));
  } catch (error) {
    restoreEverything();
    await stop(service, engines);
    cli.unpublish();
    rmSync(secretFile, { force: true });
    process.off("exit", onExit);
    process.off("uncaughtException", onUncaught);
    throw error;
  }

  const pins = pinsSummary(governedIds, engines.engine);
  if (pins) options.say(pins);

  const follower = options.showDecisions
    ? followEvents(record.events, (event) => {
        const line = describeDecision(event);
        if (line) options.say(line);
      })
    : null;

  let exitCode: number;
  try {
    exitCode = await runAgent(given.rewrittenCommand(shimFor, record.dir), options.say);
  } finally {
    // Tell the shims to drain, give them time, then put the configs back.
    service.setShutdown();
    const drained = await drainShims({ eventsPath: record.events, runId, profile: options.profile, timeoutMs: SHIM_DRAIN_MS, killGraceMs: END_KILL_GRACE_MS });
    if (drained.serversEnded > 0) options.say(`thoughtgate: ended ${drained.serversEnded} MCP server process group(s) left running after their shim`);
    follower?.stop();
    if (options.restore) restoreEverything();
    else {
      for (const guard of guards) guard.release();
      if (guards.length > 0) options.say("thoughtgate: --no-restore: configs stay rewritten; `thoughtgate unwrap --all` puts them back");
    }
    await stop(service, engines);
    cli.unpublish();
    rmSync(secretFile, { force: true });
    process.off("exit", onExit);
    process.off("uncaughtException", onUncaught);
  }
  options.say(renderSummary(summarize(readEvents(record.events)), record.events));
  return exitCode;
}

/**
 * Let `thoughtgate tasks|approve|deny` in another terminal find this session: the service
 * descriptor (state dir, 0600, not the session directory whose path every shim's argv shows).
 * Without it the CLI key is printed instead, since nothing else would reach it.
 */
function publishCliAccess(endpoint: string, cliKey: string): { howTo: string; unpublish: () => void } {
  try {
    const unpublish = publishService({ endpoint, pid: process.pid, start_id: ownProcessStartId(), kind: "wrap", cli_key: cliKey, started_at: new Date().toISOString() });
    return { howTo: "thoughtgate: thoughtgate tasks | approve | deny (from another terminal) find this session on their own", unpublish };
  } catch (error) {
    return {
      howTo: `thoughtgate: cannot record this session for thoughtgate tasks | approve | deny (${messageOf(error)}); give them: ${ENDPOINT_ENV}=${endpoint} ${APPROVAL_KEY_ENV}=${cliKey}`,
      unpublish: () => {},
    };
  }
}

function rewriteFile(file: ConfigFile, agent: AgentType, shimFor: (entry: ServerEntry) => ShimCommand): ConfigGuard {
  const guard = new ConfigGuard({ configPath: file.path, agentType: agent });
  guard.acquire();
  // Rewrite exactly the bytes that were backed up: if the file changed since discovery, stop.
  if (guard.originalText !== file.text) {
    guard.restore();
    throw new ThoughtGateError("CONFIG", `${file.path} changed while wrap was reading it; run wrap again`);
  }
  const { text, owned } = rewrite(file.text, file.entries, shimFor);
  guard.write(text, owned as JSONPath[]);
  return guard;
}

/** The shim each governed entry runs: this binary, the entry's server id, the session's service. */
export function shimCommand(binary: string, profile: Profile, endpoint: string, session: { secretFile: string; runId: string; events: string }) {
  const ids = new Map<string, number>();
  return (entry: ServerEntry): ShimCommand => {
    // Server ids must be unique in one session: the same name in two scopes gets the scope added.
    const base = entry.name;
    const seen = ids.get(base) ?? 0;
    ids.set(base, seen + 1);
    const serverId = seen === 0 ? base : `${base}@${entry.scope}`;
    const common = ["shim", "--server-id", serverId, "--governance-endpoint", endpoint, "--governance-secret-file", session.secretFile, "--profile", profile, "--events", session.events];
    if (entry.remote) {
      const remote = remoteShimArgs(entry.remote);
      return { command: binary, args: [...common, ...remote.args], env: { THOUGHTGATE_RUN_ID: session.runId, ...remote.env } };
    }
    return {
      command: binary,
      // The original command and args exactly as written (unexpanded `${VAR}`s stay references).
      args: [...common, "--", entry.command ?? "", ...entry.args],
      env: { THOUGHTGATE_RUN_ID: session.runId },
    };
  };
}

/** The server ids the rewritten entries got (for the pins summary). */
function recordingIds(shimFor: (entry: ServerEntry) => ShimCommand, ids: string[]): (entry: ServerEntry) => ShimCommand {
  return (entry) => {
    const command = shimFor(entry);
    const id = command.args[command.args.indexOf("--server-id") + 1];
    if (id !== undefined && !ids.includes(id)) ids.push(id);
    return command;
  };
}

async function stop(service: GovernanceService, engines: EngineHolder): Promise<void> {
  engines.close();
  await service.stop();
}
