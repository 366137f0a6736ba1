import type { FileSink, Subprocess } from "bun";
import { bestEffort, messageOf } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { groupHasLiveMembers } from "../core/proc-stat.ts";

/** Staged shutdown defaults: how long the server gets after stdin closes, then after SIGTERM. */
export const STDIN_CLOSE_GRACE_MS = 5_000;
export const SIGTERM_GRACE_MS = 2_000;
/**
 * After a signal to the shim, at most this long between SIGTERM and SIGKILL to the server. A
 * client that signals us usually escalates to SIGKILL soon after (the MCP SDK: 2 s); if that
 * kills the shim mid-shutdown, the server, in its own process group, would be orphaned.
 */
const HURRIED_SIGTERM_GRACE_MS = 1_000;

export type Exit = { exitCode: number | null; signal: string | null; escalation: "none" | "sigterm" | "sigkill" };

type Piped = Subprocess<"pipe", "pipe", "inherit" | "pipe">;

/**
 * The MCP server child: its own process group (so a Ctrl+C in the terminal reaches only the
 * shim, which decides how the server stops), piped stdin/stdout, inherited stderr (its diagnostics reach the agent's log),
 * and an environment without `THOUGHTGATE_*` (the governance secret must never reach it).
 */
export class ServerProcess {
  private stopping: Promise<Exit> | null = null;
  private escalation: Exit["escalation"] = "none";
  private hurried = false;
  private cutWait: (() => void) | null = null;

  private constructor(private readonly proc: Piped) {}

  /**
   * `keepThoughtGateEnv` is for a process that is itself ThoughtGate (an agent starting a rewritten
   * entry runs `thoughtgate shim`, which needs the session secret the entry carries); an MCP
   * server never gets it. `pipeStderr` is for `arbiter`, which reads events from the child's stderr
   * and passes the rest through itself.
   */
  static spawn(
    command: string[],
    env: NodeJS.ProcessEnv = process.env,
    options: { keepThoughtGateEnv?: boolean; pipeStderr?: boolean; withhold?: readonly string[] } = {},
  ): ServerProcess | { error: string } {
    try {
      const proc: Piped = Bun.spawn(command, {
        stdin: "pipe",
        stdout: "pipe",
        stderr: options.pipeStderr ? "pipe" : "inherit",
        detached: true,
        env: options.keepThoughtGateEnv ? definedOnly(env) : scrubEnv(env, options.withhold),
      });
      return new ServerProcess(proc);
    } catch (error) {
      return { error: `cannot start ${JSON.stringify(command[0])}: ${messageOf(error)}` };
    }
  }

  get pid(): number {
    return this.proc.pid;
  }

  get stdin(): FileSink {
    return this.proc.stdin;
  }

  get stdout(): ReadableStream<Uint8Array> {
    return this.proc.stdout;
  }

  /** The child's stderr when spawned with `pipeStderr`; null when it is inherited. */
  get stderr(): ReadableStream<Uint8Array> | null {
    return this.proc.stderr instanceof ReadableStream ? this.proc.stderr : null;
  }

  get exited(): Promise<number> {
    return this.proc.exited;
  }

  get hasExited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  /**
   * Staged shutdown: close stdin → wait → SIGTERM the group → wait → SIGKILL → reap.
   * Idempotent: every caller gets the same outcome.
   */
  stop(graces: { stdinCloseMs: number; sigtermMs: number }): Promise<Exit> {
    this.stopping ??= this.stopStaged(graces);
    return this.stopping;
  }

  /**
   * Shorten the shutdown (the shim got a signal): skip the wait after stdin closes, keep the
   * SIGTERM grace under `HURRIED_SIGTERM_GRACE_MS`; a second call goes straight to SIGKILL.
   */
  hurry(): void {
    this.hurried = true;
    this.cutWait?.();
  }

  private async stopStaged({ stdinCloseMs, sigtermMs }: { stdinCloseMs: number; sigtermMs: number }): Promise<Exit> {
    // MCP lifecycle (stdio transport): the client closes the server's stdin first and waits.
    bestEffort(() => this.proc.stdin.end());
    if (!(await this.exitsWithin(this.hurried ? 0 : stdinCloseMs))) {
      log.info(`server pid ${this.pid} still running after stdin closed: SIGTERM`);
      this.escalation = "sigterm";
      this.signalGroup("SIGTERM");
      const grace = this.hurried ? Math.min(sigtermMs, HURRIED_SIGTERM_GRACE_MS) : sigtermMs;
      if (!(await this.exitsWithin(grace))) {
        log.warn(`server pid ${this.pid} ignored SIGTERM: SIGKILL`);
        this.escalation = "sigkill";
        this.signalGroup("SIGKILL");
      }
    }
    await this.proc.exited;
    await this.sweepGroup(Math.min(sigtermMs, HURRIED_SIGTERM_GRACE_MS));
    return { exitCode: this.proc.exitCode, signal: this.proc.signalCode === null ? null : String(this.proc.signalCode), escalation: this.escalation };
  }

  /**
   * The server is gone, but processes it started may still be in its group (an `npx` wrapper's
   * child, a helper daemon). They are ours to end: no orphan outlives the shim.
   */
  private async sweepGroup(graceMs: number): Promise<void> {
    if (!this.groupAlive()) return;
    this.signalGroup("SIGTERM");
    const deadline = performance.now() + graceMs;
    while (this.groupAlive() && performance.now() < deadline) await Bun.sleep(20);
    if (this.groupAlive()) this.signalGroup("SIGKILL");
  }

  private groupAlive(): boolean {
    return groupHasLiveMembers(this.pid);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    bestEffort(() => process.kill(-this.pid, signal));
  }

  /** Whether the server exits within `ms`; `hurry()` cuts the wait short. */
  private async exitsWithin(ms: number): Promise<boolean> {
    if (this.hasExited) return true;
    if (ms <= 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
      this.cutWait = () => resolve(false);
    });
    const exited = await Promise.race([this.proc.exited.then(() => true as const), cut]);
    clearTimeout(timer);
    this.cutWait = null;
    return exited;
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * The server's environment: ours, minus every `THOUGHTGATE_*` variable (docs/architecture.md,
 * decision 7) and the variables in `withhold` (those the shim's flags named for its own credentials:
 * `--listen-token-env` and the like, whatever they are called).
 */
function scrubEnv(env: NodeJS.ProcessEnv, withhold: readonly string[] = []): Record<string, string> {
  const scrubbed: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !key.startsWith("THOUGHTGATE_") && !withhold.includes(key)) scrubbed[key] = value;
  }
  return scrubbed;
}
