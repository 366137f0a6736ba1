/**
 * wrap's start-up: from spawning `thoughtgate wrap ... -- AGENT` to the agent running, against
 * spawning the same agent directly. The agent (launch-agent.ts, compiled) writes `launched` to
 * stdout first thing; wrap hands it the bench's stdout pipe, so the bench takes both instants
 * from its own clock (spawn, and that line arriving) and nothing is compared across processes.
 * It then reports whether it saw `THOUGHTGATE_ACTIVE` and its servers behind the shim, and exits
 * at once, so the shims (and the servers, which do not exist) are never started.
 *
 * Two wrapped configurations: `custom` with a small `mcp.json` of three stdio servers, and
 * `claude-code` with the 1 MB `~/.claude.json` of claude-json.ts (the same three servers and a
 * remote one at its top level). Both use the embedded default policy: HOME and the XDG dirs point
 * into the bench's temp dir, so no policy, journal or stale wrap of the user's is seen and no
 * session record lands in their home. After every run the config must be byte-identical to what
 * it was, with no backup or lock left beside it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../support/harness.ts";
import { claudeJson, claudeJsonText, GOVERNED_SERVERS } from "./claude-json.ts";
import { WRAP_PLAN } from "./plan.ts";
import { progress } from "./report.ts";

export type LaunchName = "direct" | "wrap custom" | "wrap claude-code";
/** Milliseconds from spawn to the agent's first line, and to the end of the process (wrap: config restored). */
export type LaunchSample = { launchedMs: number; exitedMs: number };
export type LaunchFigures = { samples: Map<LaunchName, LaunchSample[]>; configs: { path: string; bytes: number }[]; runs: number };

const SMALL_CONFIG = `${JSON.stringify(
  {
    mcpServers: {
      filesystem: { command: "bench-missing-filesystem-server", args: ["--root", "/srv/files"] },
      github: { command: "bench-missing-github-server", args: ["stdio"], env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } },
      memory: { command: "bench-missing-memory-server", args: [] },
    },
  },
  null,
  2,
)}\n`;

type Launch = { name: LaunchName; command: string[]; cwd: string; config: string; expect: string };

/**
 * `agent`: the compiled launch-agent; `marker` goes on every agent's command line (and so on
 * wrap's), for the bench's leftover check.
 */
export async function measureWrapLaunch(dir: string, agent: string, marker: string, env: Record<string, string>): Promise<LaunchFigures> {
  const home = join(dir, "wrap-home");
  const project = join(home, "src", "projet-été");
  mkdirSync(project, { recursive: true });
  const small = join(home, "mcp.json");
  writeFileSync(small, SMALL_CONFIG);
  const claude = join(home, ".claude.json");
  writeFileSync(claude, claudeJsonText(claudeJson(project), 412));
  const originals = new Map([small, claude].map((path) => [path, readFileSync(path)]));

  // The small config's three stdio servers; the 1 MB one's three and its remote server.
  const wrapped = (servers: number) => `active=1 shimmed=${servers}`;
  const launches: Launch[] = [
    { name: "direct", command: [agent, small, marker], cwd: home, config: small, expect: "active= shimmed=0" },
    { name: "wrap custom", command: [BINARY, "wrap", "--agent-type", "custom", "--config-path", small, "--", agent, small, marker], cwd: home, config: small, expect: wrapped(3) },
    { name: "wrap claude-code", command: [BINARY, "wrap", "--agent-type", "claude-code", "--", agent, claude, marker], cwd: project, config: claude, expect: wrapped(GOVERNED_SERVERS) },
  ];
  const childEnv = isolatedEnv(env, home);
  const samples = new Map<LaunchName, LaunchSample[]>(launches.map((launch) => [launch.name, []]));
  progress(`wrap start-up: ${WRAP_PLAN.launches} launches of the agent per configuration after one uncounted round`);
  // Interleaved, like the other phases: a slow spell of the machine lands on every configuration.
  for (let round = 0; round <= WRAP_PLAN.launches; round++) {
    for (const launch of launches) {
      const sample = await launchOnce(launch, childEnv);
      const original = originals.get(launch.config);
      if (!original?.equals(readFileSync(launch.config))) throw new Error(`${launch.config} differs from the original after ${launch.name}`);
      for (const suffix of [".thoughtgate-backup", ".thoughtgate-lock"]) {
        if (existsSync(launch.config + suffix)) throw new Error(`${launch.config}${suffix} left after ${launch.name}`);
      }
      if (round > 0) samples.get(launch.name)?.push(sample);
    }
  }
  const configs = [...originals].map(([path, bytes]) => ({ path, bytes: bytes.length }));
  return { samples, configs, runs: (WRAP_PLAN.launches + 1) * (launches.length - 1) };
}

/** The bench's environment with HOME and the XDG dirs in `home`, and nothing that points Claude Code elsewhere. */
function isolatedEnv(env: Record<string, string>, home: string): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(env).filter(([key]) => key !== "CLAUDE_CONFIG_DIR")),
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_DATA_HOME: join(home, ".local", "share"),
  };
}

async function launchOnce(launch: Launch, env: Record<string, string>): Promise<LaunchSample> {
  const started = performance.now();
  await using proc = Bun.spawn(launch.command, { cwd: launch.cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const stderr = new Response(proc.stderr).text();
  const decoder = new TextDecoder();
  let stdout = "";
  let launchedMs: number | undefined;
  for await (const chunk of proc.stdout) {
    stdout += decoder.decode(chunk, { stream: true });
    if (launchedMs === undefined && stdout.startsWith("launched\n")) launchedMs = performance.now() - started;
  }
  const code = await proc.exited;
  const exitedMs = performance.now() - started;
  const [, seen] = stdout.split("\n");
  if (code !== 0 || launchedMs === undefined || seen !== launch.expect) {
    throw new Error(`${launch.name}: exit code ${code}, agent said ${JSON.stringify(stdout)} (expected "${launch.expect}"); stderr:\n${await stderr}`);
  }
  await stderr;
  return { launchedMs, exitedMs };
}
