/**
 * A command run in its own tmux server (a private socket in a temp directory), for interactive
 * agents that own the screen: the test reads the screen as a person sees it (`capture-pane`) and
 * presses keys (`send-keys`). The command's exit code is written to a file when it ends. `close`
 * ends the tmux server (its pane's processes get SIGHUP) and waits for the command to be gone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, waitFor } from "./harness.ts";

export type TmuxPane = AsyncDisposable & {
  /** The screen as text, one line per row. */
  screen(): string;
  /** Type text literally (no key names). */
  type(text: string): void;
  /** Press keys by tmux name: `Enter`, `Escape`, `Right`, `Down`, `C-d`. */
  press(...keys: string[]): void;
  /** Wait until the screen matches; fail with what it shows. */
  waitFor(match: string | RegExp, what?: string, timeoutMs?: number): Promise<string>;
  /** The command's exit code once it has ended, else null. */
  exitCode(): number | null;
  /** Wait for the command to end; its exit code. */
  exited(timeoutMs?: number): Promise<number>;
  /** The pid of the command (the shell that runs it). */
  pid: number;
};

export function hasTmux(): boolean {
  return Bun.which("tmux") !== null;
}

function quote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

export function runInTmux(command: string[], options: { cwd: string; env: Record<string, string>; columns?: number; rows?: number }): TmuxPane {
  const dir = mkdtempSync(join(tmpdir(), "thoughtgate-tmux-"));
  const socket = join(dir, "socket");
  const exitFile = join(dir, "exit-code");
  const tmux = (...args: string[]) => {
    const run = Bun.spawnSync(["tmux", "-S", socket, ...args], { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe" });
    if (run.exitCode !== 0 && args[0] !== "kill-server") throw new Error(`tmux ${args[0]} failed: ${run.stderr.toString()}`);
    return run.stdout.toString();
  };
  // The tmux server takes its environment from this first client: the command gets exactly `env`.
  const shell = `${command.map(quote).join(" ")}; echo $? > ${quote(exitFile)}`;
  tmux("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", String(options.columns ?? 160), "-y", String(options.rows ?? 50), "-c", options.cwd, "sh", "-c", shell);
  const pid = Number(tmux("display-message", "-p", "-t", "main", "#{pane_pid}").trim());
  const screen = () => tmux("capture-pane", "-p", "-J", "-t", "main");
  const exitCode = () => (existsSync(exitFile) ? Number(readFileSync(exitFile, "utf8").trim()) : null);
  const close = async () => {
    tmux("kill-server");
    await waitFor(() => !isAlive(pid), "the tmux pane's command to end", 10_000).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    pid,
    screen,
    type: (text) => void tmux("send-keys", "-t", "main", "-l", text),
    press: (...keys) => void tmux("send-keys", "-t", "main", ...keys),
    waitFor: async (match, what, timeoutMs = 30_000) => {
      try {
        return await waitFor(() => {
          const shown = screen();
          return (typeof match === "string" ? shown.includes(match) : match.test(shown)) ? shown : null;
        }, what ?? String(match), timeoutMs);
      } catch (error) {
        throw new Error(`${(error as Error).message}; the screen shows:\n${screen()}`);
      }
    },
    exitCode,
    exited: (timeoutMs = 30_000) => waitFor(() => (exitCode() === null ? null : { code: exitCode() as number }), "the command to end", timeoutMs).then((r) => r.code),
    [Symbol.asyncDispose]: close,
  };
}
