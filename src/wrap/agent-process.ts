import { messageOf } from "../core/errors.ts";
import { exitCodeForSignal } from "../core/signals.ts";

/** After wrap forwards SIGTERM/SIGHUP to the agent, how long before it is killed. */
const AGENT_STOP_GRACE_MS = 5_000;

/** The exit code of an agent that could not be started (what a shell reports for a missing command). */
const AGENT_NOT_STARTED = 127;

export type AgentLaunch = {
  command: string[];
  /** Added to wrap's own environment (with `THOUGHTGATE_ACTIVE=1`): the session's variable. */
  env: Record<string, string>;
  /** Called with the agent's pid as soon as it runs. */
  onStart?: (pid: number) => void;
};

/**
 * Run the agent with our stdio, `THOUGHTGATE_ACTIVE=1` and `launch.env`; its exit code is ours
 * (128+n for a signal). SIGTERM and SIGHUP to wrap are passed on; Ctrl+C already reaches the agent
 * from the terminal (same foreground process group), so SIGINT is passed on only without a terminal.
 */
export async function runAgent(launch: AgentLaunch, say: (text: string) => void): Promise<number> {
  const { command } = launch;
  let agent: ReturnType<typeof Bun.spawn>;
  try {
    agent = Bun.spawn(command, { stdin: "inherit", stdout: "inherit", stderr: "inherit", env: { ...process.env, ...launch.env, THOUGHTGATE_ACTIVE: "1" } });
  } catch (error) {
    say(`thoughtgate: cannot start ${JSON.stringify(command[0])}: ${messageOf(error)}`);
    return AGENT_NOT_STARTED;
  }
  launch.onStart?.(agent.pid);
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
    if (agent.signalCode) return exitCodeForSignal(agent.signalCode);
    return code;
  } finally {
    if (killTimer) clearTimeout(killTimer);
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

