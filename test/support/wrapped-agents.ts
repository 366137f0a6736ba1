/**
 * The real agents (test/support/agents.ts) run through `thoughtgate wrap`, the way a user runs
 * them: `thoughtgate wrap -- claude -p …`. wrap finds the agent's config in the sandbox, rewrites
 * it, runs the agent and puts it back; what the agent's shims decided is in the session record
 * wrap prints. The user's policy is `~/.config/thoughtgate/thoughtgate.yaml` in the sandbox.
 */
import { expect } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AgentLaunch, AgentRun, AgentSandbox } from "./agents.ts";
import { runAgent } from "./agents.ts";
import { readEvents, requireBinary } from "./harness.ts";

export type WrapOptions = {
  /** Extra `thoughtgate wrap` flags, before `--`. */
  flags?: string[];
  /** Environment added to the run (a fake notify-send's PATH); without it desktop notifications are off. */
  env?: Record<string, string>;
};

/** The agent's launch, started through `thoughtgate wrap`. */
export function throughWrap(launch: AgentLaunch, options: WrapOptions = {}): AgentLaunch {
  // wrap sets MCP_CONNECTION_NONBLOCKING=false for Claude Code itself (src/wrap/run-wrap.ts): the
  // hand-set value of a plain run (agents.ts) is left out, so these runs show that it does.
  const { MCP_CONNECTION_NONBLOCKING: _byWrap, ...env } = launch.env;
  return {
    ...launch,
    argv: [requireBinary(), "wrap", ...(options.flags ?? []), "--", ...launch.argv],
    env: { ...(launch.agent === "claude-code" ? env : launch.env), THOUGHTGATE_DESKTOP_NOTIFY: options.env?.FAKE_NOTIFY_DIR ? "on" : "off", ...options.env },
  };
}

/** A user policy that refuses every shell line with `rm ` in it from an agent's own tools, at once (no one to ask under `-p`). */
export const NO_DELETES_POLICY = `schema: 1
governance:
  rules:
    - { id: no-deletes, source: agent, match: shell, arguments: { command: { glob: "*rm *" } }, action: deny }
`;

/** Write the user's policy file in the sandbox (what discovery finds when no --thoughtgate-config is given). */
export function writeUserPolicy(sandbox: AgentSandbox, yaml: string): string {
  const path = join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, yaml);
  return path;
}

export type WrappedRun = AgentRun & {
  /** The session record wrap printed. */
  record: string;
  /** Its events of one type (tool_call_decision, run_start…). */
  events(type: string): Array<Record<string, unknown>>;
};

/** Run the agent through wrap to completion (runAgent's process-group handling and leftovers check). */
export async function runWrapped(launch: AgentLaunch, sandbox: AgentSandbox, timeoutMs?: number): Promise<WrappedRun> {
  const run = await runAgent(launch, sandbox, timeoutMs);
  return withRecord(run);
}

export function withRecord(run: AgentRun): WrappedRun {
  const record = /thoughtgate: session record (\S+)/.exec(run.stderr)?.[1] ?? "";
  return { ...run, record, events: (type) => readEvents(record).filter((event) => event.type === type) };
}

/** What the shims decided, in order: `server.tool decision (rule)` and who approved, or `server.tool pending` while a person was asked. */
export function decisions(run: WrappedRun): string[] {
  return run.events("tool_call_decision").map((event) => {
    const call = `${String(event.server_id)}.${String(event.tool)}`;
    if (event.decision === "pending") return `${call} pending`;
    const by = typeof event.approved_by === "string" ? ` by ${event.approved_by}` : "";
    return `${call} ${String(event.decision)} (${String(event.rule_id)})${by}`;
  });
}

/**
 * The shim command wrap (and enroll) writes into the agent's config, as a regular expression source:
 * the shim path in the sandbox's state directory (src/wrap/shim-path.ts), then `shim --server-id <server> --`.
 */
export function shimCommandPattern(sandbox: AgentSandbox, server: string): string {
  return `${escapeRegExp(join(sandbox.home, ".local", "state", "thoughtgate", "bin", "thoughtgate"))} shim --server-id ${escapeRegExp(server)} -- `;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The file's bytes, to compare before and after (`cmp`). */
export function bytes(path: string): Buffer {
  return readFileSync(path);
}

/** A call of a wrap session as `thoughtgate log --json` gives it. */
export type LoggedCall = { server: string; tool: string; arguments: Record<string, unknown> & { command?: string; tool?: string }; outcome: string; rule_id?: string | null };

/** The calls of the wrap session whose summary (in wrap's `stderr`) names it, through `thoughtgate log --session ID --json`. */
export function sessionCalls(env: Record<string, string>, stderr: string): LoggedCall[] {
  const session = /thoughtgate log --session (\S+)/.exec(stderr)?.[1];
  expect(session, stderr).toBeDefined();
  const log = Bun.spawnSync([requireBinary(), "log", "--session", session as string, "--json"], { env, stdout: "pipe", stderr: "pipe" });
  expect(log.exitCode, log.stderr.toString()).toBe(0);
  return log.stdout
    .toString()
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as LoggedCall);
}
