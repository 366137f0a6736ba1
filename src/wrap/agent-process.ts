import { messageOf } from "../core/errors.ts";
import { exitCodeForSignal } from "../core/signals.ts";

/** After wrap forwards SIGTERM/SIGHUP to the agent, how long before it is killed. */
const AGENT_STOP_GRACE_MS = 5_000;

/** The exit code of an agent that could not be started (what a shell reports for a missing command). */
export const AGENT_NOT_STARTED = 127;

/**
 * Run the agent with our stdio and `THOUGHTGATE_ACTIVE=1`; its exit code is ours (128+n for a
 * signal). SIGTERM and SIGHUP to wrap are passed on; Ctrl+C already reaches the agent from the
 * terminal (same foreground process group), so SIGINT is passed on only without a terminal.
 */
export async function runAgent(command: string[], say: (text: string) => void, started: (pid: number) => void = () => {}): Promise<number> {
  let agent: ReturnType<typeof Bun.spawn>;
  try {
    agent = Bun.spawn(command, { stdin: "inherit", stdout: "inherit", stderr: "inherit", env: { ...process.env, THOUGHTGATE_ACTIVE: "1" } });
  } catch (error) {
    say(`thoughtgate: cannot start ${JSON.stringify(command[0])}: ${messageOf(error)}`);
    return AGENT_NOT_STARTED;
  }
  started(agent.pid);
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

