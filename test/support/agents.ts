/**
 * The real terminal agents from npm (pinned devDependencies), run the way a user runs them
 * non-interactively (`claude -p`, `codex exec`, `opencode run`) with a fake model API on
 * loopback (test/support/fake-models/) that makes them call MCP tools for real.
 *
 * Everything an agent reads or writes stays in a sandbox: a temp root holding HOME (and the XDG
 * dirs) and a project directory, an environment built from nothing but PATH, and proxy variables
 * pointing at a network trap, so nothing but loopback is reached. Each agent writes its MCP
 * servers into the scope a test names (the files `thoughtgate wrap` will later rewrite).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { FakeModel } from "./fake-models/fake-model.ts";
import { EVERYTHING_SERVER, ROOT, fixture, isAlive, processesWith, readEvents, waitFor } from "./harness.ts";
import { startNetworkTrap, type NetworkTrap } from "./network-trap.ts";

export type AgentName = "claude-code" | "codex" | "opencode" | "copilot" | "gemini" | "qwen";

/** The pinned versions (package.json devDependencies); `--version` of each binary must match (agent-versions.test.ts). */
export const AGENT_VERSIONS: Record<AgentName, string> = {
  "claude-code": "2.1.330",
  codex: "0.169.0",
  opencode: "1.18.33",
  copilot: "1.0.102",
  gemini: "0.61.0",
  qwen: "0.15.10",
};

/**
 * The native binary each npm package installs for this platform. Resolved in the platform
 * package itself, not through node_modules/.bin: the `claude` and `opencode` bin entries are
 * placeholders until a postinstall script (which package managers may skip) puts the binary
 * there, and `codex`'s is a Node launcher that only spawns this binary.
 */
export function agentBinary(agent: AgentName): string {
  const candidates = binaryCandidates(agent).map((path) => join(ROOT, "node_modules", path));
  const found = candidates.find((path) => isFile(path));
  if (found === undefined) {
    throw new Error(`no ${agent} binary for ${process.platform}-${process.arch}; looked for:\n  ${candidates.join("\n  ")}\nrun \`bun install --frozen-lockfile\``);
  }
  return found;
}

function binaryCandidates(agent: AgentName): string[] {
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  const os = process.platform === "darwin" ? "darwin" : "linux";
  switch (agent) {
    case "claude-code":
      return [`@anthropic-ai/claude-code-${os}-${arch}/claude`, `@anthropic-ai/claude-code-${os}-${arch}-musl/claude`];
    case "codex": {
      const triple = os === "darwin" ? `${arch === "arm64" ? "aarch64" : "x86_64"}-apple-darwin` : `${arch === "arm64" ? "aarch64" : "x86_64"}-unknown-linux-musl`;
      return [`@openai/codex-${os}-${arch}/vendor/${triple}/bin/codex`];
    }
    case "opencode":
      return [`opencode-${os}-${arch}/bin/opencode`, `opencode-${os}-${arch}-baseline/bin/opencode`, `opencode-${os}-${arch}-musl/bin/opencode`];
    case "copilot":
      return [`@github/copilot-${os}-${arch}/copilot`, `@github/copilot-linuxmusl-${arch}/copilot`];
    // Node scripts (engines node >= 20): their npm command, whose name tells wrap the agent.
    case "gemini":
    case "qwen":
      return [`.bin/${agent}`];
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export type McpServer = { command: string; args: string[]; env?: Record<string, string> };

export type AgentSandbox = AsyncDisposable & {
  root: string;
  home: string;
  /** The agent's working directory (its project). */
  project: string;
  /** Every process started for this sandbox's MCP servers carries it in its command line. */
  marker: string;
  trap: NetworkTrap;
  /** The environment every agent here starts from. */
  env: Record<string, string>;
};

export function agentSandbox(): AgentSandbox {
  const root = mkdtempSync(join(tmpdir(), "thoughtgate-agent-"));
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(home);
  mkdirSync(project);
  const trap = startNetworkTrap();
  const env: Record<string, string> = {
    // PATH only, so `node` (server-everything) and the agents' own helpers resolve; nothing else
    // of the developer's environment (API keys, CLAUDECODE, CODEX_HOME…) reaches the agent.
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    ...trap.env,
  };
  return {
    root,
    home,
    project,
    marker: `--thoughtgate-test-sandbox=${root}`,
    trap,
    env,
    [Symbol.asyncDispose]: async () => {
      trap.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** server-everything over stdio, marked so the test can find it (the server ignores extra arguments). */
export function everythingServer(sandbox: AgentSandbox): McpServer {
  const [command, ...args] = EVERYTHING_SERVER;
  return { command: command ?? "node", args: [...args, sandbox.marker] };
}

/** One record of test/fixtures/stdio-recorder-fixture.ts: a line either way, or a lifecycle event. */
export type PipeRecord = { t_ms: number; dir?: "agent" | "server"; line?: string; event?: string; signal?: string | null; code?: number };

export type RecordedServer = {
  /** The server behind the recorder: give this to the agent. */
  server: McpServer;
  records: () => PipeRecord[];
  /** What the agent sent, parsed, in order. */
  sent: () => Array<Record<string, unknown>>;
  /** What the server answered, parsed, in order. */
  received: () => Array<Record<string, unknown>>;
  /** Lifecycle events after the start record: `stdin_eof`, `SIGTERM`…, `server_exit`, `exit`. */
  events: () => string[];
};

/** `server` behind the stdio recorder, logging into the sandbox. */
export function recordedServer(sandbox: AgentSandbox, server: McpServer, name = "pipe"): RecordedServer {
  const log = join(sandbox.root, `${name}.jsonl`);
  const [command, ...args] = fixture("stdio-recorder-fixture.ts", log, "--", server.command, ...server.args);
  const records = () => readEvents(log) as PipeRecord[];
  const lines = (dir: "agent" | "server") => () =>
    records()
      .filter((record) => record.dir === dir && record.line !== undefined)
      .map((record) => JSON.parse(record.line as string) as Record<string, unknown>);
  return {
    server: { command: command ?? process.execPath, args, ...(server.env === undefined ? {} : { env: server.env }) },
    records,
    sent: lines("agent"),
    received: lines("server"),
    events: () =>
      records()
        .filter((record) => record.event !== undefined && record.event !== "start")
        .map((record) => (record.event === "signal" ? String(record.signal) : String(record.event))),
  };
}

/** How the agent is started: argv, working directory and environment. */
export type AgentLaunch = { agent: AgentName; argv: string[]; cwd: string; env: Record<string, string> };

export type AgentOptions = {
  model: FakeModel;
  servers: Record<string, McpServer>;
  prompt: string;
};

// --- Claude Code -------------------------------------------------------------------------------

/**
 * Where Claude Code reads MCP servers: `flag` = a file passed with `--mcp-config` plus
 * `--strict-mcp-config` (nothing else is read); `user` = `mcpServers` in ~/.claude.json;
 * `local` = `projects[<project>].mcpServers` in ~/.claude.json; `project` = `.mcp.json` in the
 * project (started without approval under `-p`).
 */
export type ClaudeScope = "flag" | "user" | "local" | "project";

/** The name Claude Code gives an MCP tool: `mcp__<server>__<tool>`. */
export const claudeToolName = (server: string, tool: string) => `mcp__${server}__${tool}`;

export function claudeCode(sandbox: AgentSandbox, options: AgentOptions & { scope: ClaudeScope; allowedTools: string[] }): AgentLaunch {
  const servers = { mcpServers: options.servers };
  const flags: string[] = [];
  switch (options.scope) {
    case "flag": {
      const path = join(sandbox.root, "mcp-config.json");
      writeJson(path, servers);
      flags.push("--mcp-config", path, "--strict-mcp-config");
      break;
    }
    case "user":
      writeJson(join(sandbox.home, ".claude.json"), servers);
      break;
    case "local":
      writeJson(join(sandbox.home, ".claude.json"), { projects: { [sandbox.project]: servers } });
      break;
    case "project":
      writeJson(join(sandbox.project, ".mcp.json"), servers);
      break;
  }
  return {
    agent: "claude-code",
    argv: [agentBinary("claude-code"), "-p", options.prompt, "--allowedTools", ...options.allowedTools, ...flags],
    cwd: sandbox.project,
    env: {
      ...sandbox.env,
      ANTHROPIC_BASE_URL: options.model.url,
      ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test",
      // Offer MCP tools to the model directly instead of behind a tool-search tool.
      ENABLE_TOOL_SEARCH: "false",
      // No telemetry, error reporting or update checks (none of it goes to loopback).
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      // Connect the MCP servers before the first model request: under -p, Claude Code 2.1.330
      // otherwise races its first turn against them, and loses it most times once a PreToolUse hook
      // is configured (as under wrap), offering the model no MCP tool.
      MCP_CONNECTION_NONBLOCKING: "false",
    },
  };
}

// --- Codex -------------------------------------------------------------------------------------

/**
 * Where Codex reads MCP servers: `user` = `[mcp_servers.*]` in ~/.codex/config.toml (CODEX_HOME
 * is left unset, so the default location is the one exercised); `project` = `.codex/config.toml` in the project, which Codex reads
 * only for a trusted project (`[projects."<dir>"] trust_level = "trusted"` in the user config).
 */
export type CodexScope = "user" | "project";

/**
 * The name the model sees for an MCP tool: Codex offers each server as a Responses API
 * `namespace` tool `mcp__<server>` holding one function per tool, with `-` in names turned
 * into `_`; the Responses fake lists them as `<namespace>__<function>`.
 */
export const codexToolName = (server: string, tool: string) => `mcp__${server}__${tool.replaceAll("-", "_")}`;

/**
 * `required` (the default; `false` to leave it out): each server's table says `required = true`, so Codex waits for the servers to start
 * before the model's first turn (without it, a server slower to start than Codex's first request,
 * such as one behind a shim that starts a Bun script, is not offered to the model in that turn).
 */
export function codex(sandbox: AgentSandbox, options: AgentOptions & { scope: CodexScope; required?: boolean }): AgentLaunch {
  const codexHome = join(sandbox.home, ".codex");
  const serverTables = Object.entries(options.servers)
    .map(([name, server]) =>
      [
        `[mcp_servers.${toml(name)}]`,
        `command = ${toml(server.command)}`,
        `args = [${server.args.map(toml).join(", ")}]`,
        ...(options.required !== false ? ["required = true"] : []),
        ...(server.env === undefined ? [] : [`env = { ${Object.entries(server.env).map(([key, value]) => `${toml(key)} = ${toml(value)}`).join(", ")} }`]),
      ].join("\n"),
    )
    .join("\n\n");
  const user = [
    `model = "fake-model"`,
    `model_provider = "fake"`,
    // exec never stops to ask; MCP tool calls run without approval.
    `approval_policy = "never"`,
    `sandbox_mode = "read-only"`,
    // No update check, analytics or plugin catalogue sync: each would leave loopback.
    `check_for_update_on_startup = false`,
    "",
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    "plugins = false",
    "",
    "[model_providers.fake]",
    `name = "Fake Responses API"`,
    `base_url = ${toml(`${options.model.url}/v1`)}`,
    // Codex refuses wire_api = "chat": the Responses API is the only one it speaks.
    `wire_api = "responses"`,
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
    ...(options.scope === "user" ? [serverTables] : [`[projects.${toml(sandbox.project)}]`, `trust_level = "trusted"`]),
    "",
  ].join("\n");
  writeText(join(codexHome, "config.toml"), user);
  if (options.scope === "project") writeText(join(sandbox.project, ".codex", "config.toml"), `${serverTables}\n`);
  return {
    agent: "codex",
    argv: [agentBinary("codex"), "exec", "--skip-git-repo-check", options.prompt],
    cwd: sandbox.project,
    env: sandbox.env,
  };
}

/** A TOML basic string (JSON's escapes are a subset of TOML's). */
const toml = (value: string) => JSON.stringify(value);

// --- opencode ----------------------------------------------------------------------------------

/**
 * Where opencode reads MCP servers: `global` = `mcp` in ~/.config/opencode/opencode.json
 * ($XDG_CONFIG_HOME); `project` = `opencode.json` in the project (found from $PWD upwards).
 * opencode writes `"$schema"` into a config that lacks it.
 */
export type OpencodeScope = "global" | "project";

/** The name opencode gives an MCP tool: `<server>_<tool>`. */
export const opencodeToolName = (server: string, tool: string) => `${server}_${tool}`;

export function opencode(sandbox: AgentSandbox, options: AgentOptions & { scope: OpencodeScope }): AgentLaunch {
  const mcp = Object.fromEntries(
    Object.entries(options.servers).map(([name, server]) => [
      name,
      { type: "local", command: [server.command, ...server.args], enabled: true, ...(server.env === undefined ? {} : { environment: server.env }) },
    ]),
  );
  const global = {
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake Chat Completions API",
        options: { baseURL: `${options.model.url}/v1`, apiKey: "thoughtgate-test" },
        models: { "fake-model": { name: "Fake model", tool_call: true } },
      },
    },
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
    ...(options.scope === "global" ? { mcp } : {}),
  };
  writeJson(join(sandbox.home, ".config", "opencode", "opencode.json"), global);
  if (options.scope === "project") writeJson(join(sandbox.project, "opencode.json"), { mcp });
  return {
    agent: "opencode",
    argv: [agentBinary("opencode"), "run", options.prompt],
    cwd: sandbox.project,
    env: {
      ...sandbox.env,
      // opencode takes its project directory from $PWD, not from the process's cwd.
      PWD: sandbox.project,
      OPENCODE_DISABLE_MODELS_FETCH: "true",
      OPENCODE_DISABLE_AUTOUPDATE: "true",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "true",
    },
  };
}

// --- Gemini CLI --------------------------------------------------------------------------------

/**
 * Where Gemini CLI reads MCP servers: `user` = `mcpServers` in ~/.gemini/settings.json; `project` =
 * `.gemini/settings.json` in the project, read only in a folder the user trusts (the project is
 * trusted here, in ~/.gemini/trustedFolders.json). `projectSettings` adds keys to the project file
 * (`mcp.serverCommand`). The model is the fake Gemini API (GOOGLE_GEMINI_BASE_URL with an API key),
 * named on the command line so Gemini CLI asks it directly instead of routing through a classifier
 * model first; `--approval-mode yolo` runs MCP tools without asking (non-interactive mode cannot).
 */
export type GeminiScope = "user" | "project";

/** The name Gemini CLI gives an MCP tool: `mcp_<server>_<tool>`. */
export const geminiToolName = (server: string, tool: string) => `mcp_${server}_${tool}`;

export function gemini(sandbox: AgentSandbox, options: AgentOptions & { scope: GeminiScope; projectSettings?: Record<string, unknown> }): AgentLaunch {
  const user = {
    security: { auth: { selectedType: "gemini-api-key" } },
    // No usage statistics (they go to play.googleapis.com).
    privacy: { usageStatisticsEnabled: false },
    ...(options.scope === "user" ? { mcpServers: options.servers } : {}),
  };
  writeJson(join(sandbox.home, ".gemini", "settings.json"), user);
  writeJson(join(sandbox.home, ".gemini", "trustedFolders.json"), { [sandbox.project]: "TRUST_FOLDER" });
  const project = { ...(options.scope === "project" ? { mcpServers: options.servers } : {}), ...options.projectSettings };
  if (Object.keys(project).length > 0) writeJson(join(sandbox.project, ".gemini", "settings.json"), project);
  return {
    agent: "gemini",
    argv: [agentBinary("gemini"), "-p", options.prompt, "--approval-mode", "yolo", "-m", "gemini-2.5-pro"],
    cwd: sandbox.project,
    env: { ...sandbox.env, GOOGLE_GEMINI_BASE_URL: options.model.url, GEMINI_API_KEY: "thoughtgate-test" },
  };
}

// --- running -----------------------------------------------------------------------------------

export type AgentRun = {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  /** Processes of the run still alive 5 s after the agent exited (they are then killed). */
  leftovers: Array<{ pid: number; command: string }>;
};

/**
 * Run the agent to completion in its own process group with stdin closed. Past `timeoutMs` the
 * group is killed and `timedOut` set. Once the agent has exited, its MCP servers (found by the
 * sandbox marker) and anything left in its process group get up to 5 s to go; what is still there
 * is reported in `leftovers` and then killed, so nothing outlives the test.
 */
export async function runAgent(launch: AgentLaunch, sandbox: AgentSandbox, timeoutMs = 60_000): Promise<AgentRun> {
  const started = performance.now();
  const proc = Bun.spawn(launch.argv, { cwd: launch.cwd, env: launch.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(proc.pid, "SIGKILL");
  }, timeoutMs);
  const stdout = new Response(proc.stdout).text();
  const stderr = new Response(proc.stderr).text();
  const exitCode = await proc.exited;
  clearTimeout(timer);
  const durationMs = Math.round(performance.now() - started);

  const remaining = () => [...new Set([...processesWith(sandbox.marker), ...groupMembers(proc.pid)])];
  await waitFor(() => remaining().length === 0, "the agent's processes to exit", 5_000).catch(() => undefined);
  const leftovers = remaining().map((pid) => ({ pid, command: commandOf(pid) }));
  for (const { pid } of leftovers) signal(pid, "SIGKILL");
  killGroup(proc.pid, "SIGKILL");
  return { exitCode: timedOut ? null : exitCode, stdout: await stdout, stderr: await stderr, durationMs, timedOut, leftovers };
}

/** What a failed expectation should show: how the agent ended and what it printed. */
export function describeRun(launch: AgentLaunch, run: AgentRun, model: FakeModel): string {
  return [
    `${launch.agent} exited ${run.timedOut ? "(timed out)" : run.exitCode} after ${run.durationMs} ms`,
    `stdout: ${run.stdout.slice(-2000)}`,
    `stderr: ${run.stderr.slice(-4000)}`,
    `model requests: ${model.requests.map((request) => `${request.method} ${request.path}`).join(", ")}`,
    `unscripted turns (tools offered): ${JSON.stringify(model.unscripted.map((turn) => turn.offeredTools.filter((name) => !BUILTIN.test(name))))}`,
  ].join("\n");
}

/** Built-in tool names, left out of failure messages so the MCP ones show. */
const BUILTIN = /^(?!mcp__|everything)/;

function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // After the parenthesised command: state, ppid, pgrp.
      const group = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (group === pgid && isAlive(Number(entry))) members.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

function killGroup(pgid: number, name: NodeJS.Signals): void {
  signal(-pgid, name);
}

/** Send a signal to a process that may already be gone. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function writeJson(path: string, value: unknown): void {
  writeText(path, `${JSON.stringify(value, null, 2)}\n`);
}

function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
