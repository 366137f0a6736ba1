import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
import { createTwoFilesPatch } from "diff";
import type { JSONPath } from "jsonc-parser";
import { messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import { EngineHolder } from "../governance/engine-holder.ts";
import { newSecret, startGovernanceService, type GovernanceService } from "../governance/service.ts";
import { detectAgent, discover, isVsCodeInsiders, projectDir, renderCoverage, rewrite, type AgentContext, type AgentType, type ConfigFile, type ServerEntry, type ShimCommand } from "./adapters/index.ts";
import { ConfigGuard, restoreAllGuards } from "./config-guard.ts";
import { lockedError, lockPathFor, tryLock } from "./lock.ts";
import { repairStale } from "./repair.ts";
import { createSessionDir, describeDecision, followEvents, readEvents, renderSummary, summarize } from "./session-record.ts";
import { recordSessionBinary } from "./session-info.ts";
import { shimBinary } from "./shim-path.ts";

/** F-019: how long shims get to drain after the agent exits. */
const SHIM_DRAIN_MS = 10_000;
/** After wrap forwards SIGTERM/SIGHUP to the agent, how long before it is killed. */
const AGENT_STOP_GRACE_MS = 5_000;

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
  /** Print each governance decision as it happens (the demo does). */
  showDecisions: boolean;
  /** Where wrap talks to the user (stderr: the agent owns stdout). */
  say: (text: string) => void;
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
    throw usageError(`cannot tell which agent ${JSON.stringify(options.command[0])} is: pass --agent-type (claude-desktop, claude-code, cursor, vscode, windsurf, zed, custom)`);
  }
  if (agent === "custom" && !options.configPath) throw usageError("--agent-type custom needs --config-path");
  const ctx = options.context ?? { home: process.env.HOME || homedir(), cwd: projectDir(agent, options.command, process.cwd()), env: process.env, platform: process.platform };

  // EC: a config left rewritten by a wrap that was killed is put back before anything else.
  if (!options.dryRun) {
    for (const outcome of repairStale()) options.say(`thoughtgate: repaired ${outcome.configPath}, left rewritten by an earlier wrap (${outcome.status})`);
  }
  const files = discover(agent, ctx, { ...(options.configPath ? { configPath: options.configPath } : {}), insiders: isVsCodeInsiders(options.command) });
  // A file whose entries already run a shim may be another wrap's, still running (EC-STDIO-034):
  // that is the lock error, not "nothing to govern".
  for (const file of files) {
    if (!file.entries.some((entry) => entry.status === "wrapped")) continue;
    const lockPath = lockPathFor(file.path);
    const held = tryLock(lockPath);
    if (!held.ok) throw lockedError(lockPath, file.path, held.holderPid);
    held.lock.release();
  }
  options.say(`thoughtgate: ${agent} MCP servers\n${renderCoverage(files, ctx)}`);
  const toRewrite = files.filter((file) => file.entries.some((entry) => entry.governed));
  if (toRewrite.length === 0) options.say("thoughtgate: no stdio MCP server to govern; the agent runs as it is");

  if (options.dryRun) {
    const shimFor = shimCommand(shimBinary({ create: false }).path, options.profile, "http://127.0.0.1:<port>", { secretFile: "<session dir>/secret", runId: "<run id>", events: "<session record>" });
    for (const file of toRewrite) {
      const { text } = rewrite(file.text, file.entries, shimFor);
      options.say(createTwoFilesPatch(file.path, file.path, file.text, text, "current", "while wrapped"));
    }
    options.say("thoughtgate: --dry-run: nothing was changed");
    return 0;
  }

  const engines = await EngineHolder.load(options.policyFile);
  const sessionSecret = newSecret();
  const service = startGovernanceService({
    engine: () => engines.engine,
    profile: options.profile,
    port: options.governancePort,
    sessionSecret,
    approvalSecret: newSecret(),
  });
  engines.watch();
  const runId = Bun.randomUUIDv7();
  const record = createSessionDir(runId);
  // The shims run a pin of this binary, not the install's path (shim-path.ts: upgrades, npx caches).
  const binary = recordSessionBinary(record.dir);
  // The shims' secret goes in the session directory (0600), not in the agent's config: a project
  // config (.mcp.json, .vscode/mcp.json) may be shared or committed while the session runs.
  const secretFile = join(record.dir, "secret");
  writeFileSync(secretFile, sessionSecret, { mode: 0o600 });
  options.say(
    [
      `thoughtgate: policy ${engines.file ?? "embedded default (read-only tools forwarded, destructive tools need approval)"}, profile ${options.profile}`,
      `thoughtgate: governance service ${service.url}; approvals page ${service.approvalsUrl}`,
      `thoughtgate: session record ${record.events}`,
    ].join("\n"),
  );

  const guards: ConfigGuard[] = [];
  const shimFor = shimCommand(binary, options.profile, service.url, { secretFile, runId, events: record.events });
  const restoreEverything = () => {
    if (!options.restore) return;
    for (const result of restoreAllGuards()) {
      if (result.status === "restored") options.say(`thoughtgate: restored ${result.configPath} (${result.kind === "backup" ? "byte-identical" : "kept the agent's own changes"})`);
    }
  };
  const onExit = () => restoreEverything();
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
    process.off("exit", onExit);
    process.off("uncaughtException", onUncaught);
    throw error;
  }

  const follower = options.showDecisions
    ? followEvents(record.events, (event) => {
        const line = describeDecision(event);
        if (line) options.say(line);
      })
    : null;

  let exitCode: number;
  try {
    exitCode = await runAgent(options.command, options.say);
  } finally {
    // F-010 / F-019: tell the shims to drain, give them time, then put the configs back.
    service.setShutdown();
    await drainShims(record.events, SHIM_DRAIN_MS);
    follower?.stop();
    if (options.restore) restoreEverything();
    else {
      for (const guard of guards) guard.release();
      if (guards.length > 0) options.say("thoughtgate: --no-restore: configs stay rewritten; `thoughtgate unwrap --all` puts them back");
    }
    await stop(service, engines);
    rmSync(secretFile, { force: true });
    process.off("exit", onExit);
    process.off("uncaughtException", onUncaught);
  }
  options.say(renderSummary(summarize(readEvents(record.events)), record.events));
  return exitCode;
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
function shimCommand(binary: string, profile: Profile, endpoint: string, session: { secretFile: string; runId: string; events: string }) {
  const ids = new Map<string, number>();
  return (entry: ServerEntry): ShimCommand => {
    // Server ids must be unique in one session: the same name in two scopes gets the scope added.
    const base = entry.name;
    const seen = ids.get(base) ?? 0;
    ids.set(base, seen + 1);
    const serverId = seen === 0 ? base : `${base}@${entry.scope}`;
    return {
      command: binary,
      // The original command and args exactly as written (unexpanded `${VAR}`s stay references).
      args: ["shim", "--server-id", serverId, "--governance-endpoint", endpoint, "--governance-secret-file", session.secretFile, "--profile", profile, "--events", session.events, "--", entry.command ?? "", ...entry.args],
      env: { THOUGHTGATE_RUN_ID: session.runId },
    };
  };
}

/**
 * Run the agent with our stdio and `THOUGHTGATE_ACTIVE=1`; its exit code is ours (128+n for a
 * signal). SIGTERM and SIGHUP to wrap are passed on; Ctrl+C already reaches the agent from the
 * terminal (same foreground process group), so SIGINT is passed on only without a terminal.
 */
async function runAgent(command: string[], say: (text: string) => void): Promise<number> {
  let agent: ReturnType<typeof Bun.spawn>;
  try {
    agent = Bun.spawn(command, { stdin: "inherit", stdout: "inherit", stderr: "inherit", env: { ...process.env, THOUGHTGATE_ACTIVE: "1" } });
  } catch (error) {
    say(`thoughtgate: cannot start ${JSON.stringify(command[0])}: ${messageOf(error)}`);
    return 127;
  }
  let killTimer: ReturnType<typeof setTimeout> | null = null;
  const pass = (signal: NodeJS.Signals) => () => {
    say(`thoughtgate: ${signal}: stopping the agent, then restoring its config`);
    agent.kill(signal);
    killTimer ??= setTimeout(() => agent.kill("SIGKILL"), AGENT_STOP_GRACE_MS);
  };
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ["SIGTERM", pass("SIGTERM")],
    ["SIGHUP", pass("SIGHUP")],
    ["SIGINT", process.stdin.isTTY ? () => {} : pass("SIGINT")],
  ];
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    const code = await agent.exited;
    if (agent.signalCode) return 128 + (SIGNALS[agent.signalCode] ?? 0);
    return code;
  } finally {
    if (killTimer) clearTimeout(killTimer);
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGTERM: 15 };

/** Wait until every shim that started in this session has written its run_end (or the time is up). */
async function drainShims(eventsPath: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const events = readEvents(eventsPath);
    const started = events.filter((e) => e.type === "run_start").length;
    const ended = events.filter((e) => e.type === "run_end").length;
    if (ended >= started) return;
    if (performance.now() > deadline) {
      log.warn(`${started - ended} shim(s) did not finish within ${timeoutMs} ms; their servers are in their own process groups and get EOF when the agent's pipes close`);
      return;
    }
    await Bun.sleep(50);
  }
}

async function stop(service: GovernanceService, engines: EngineHolder): Promise<void> {
  engines.close();
  await service.stop();
}
