/**
 * A terminal for interactive agents (Claude Code's TUI, Codex's, opencode's), through tmux: a tmux
 * server of the test's own (its own socket, no user config) with one pane of a fixed size running
 * the command. A test types with `send-keys`, reads the screen as it is now with `capture-pane`, and
 * gets every byte written to the terminal recorded in order (`pipe-pane`, attached before the
 * command starts), so it can tell what was written while the TUI ran even where the TUI drew over it.
 *
 *   await using tty = await startTmux([claude], { cwd, env });
 *   await tty.waitForScreen("❯");
 *   tty.type("delete note a");
 *   tty.press("Enter");
 *   const code = await tty.exited();          // the command's exit status
 *   tty.recorded();                           // every byte, from the start
 *
 * Waits are on conditions (what the screen shows, the pane's state), never fixed times.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive, waitFor } from "./harness.ts";

export type Tmux = AsyncDisposable & {
  /** The screen as it is now: one line per row, trailing blanks trimmed. */
  screen(): string;
  /** Wait until the screen shows `what`; the screen then. The error shows the screen. */
  waitForScreen(what: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Type text literally (no key names). */
  type(text: string): void;
  /** Press keys by tmux name: Enter, Escape, Down, Up, Tab, C-c… */
  press(...keys: string[]): void;
  /**
   * Press `key` until the screen shows `what` (at most `tries` times, waiting each time): a TUI
   * that is still redrawing from the last key may drop the next one.
   */
  pressUntil(key: string, what: string | RegExp, tries?: number): Promise<void>;
  /** Every byte the pane's program wrote to the terminal so far (escape sequences included). */
  recorded(): string;
  /** The command's exit status once it has exited (the pane stays to be read). */
  exited(timeoutMs?: number): Promise<number>;
  stop(): void;
};

export type TmuxOptions = {
  cwd: string;
  /** The command's whole environment (nothing else of the test's leaks in). */
  env: Record<string, string>;
  width?: number;
  height?: number;
};

export function hasTmux(): boolean {
  return Bun.which("tmux") !== null;
}

export async function startTmux(command: string[], options: TmuxOptions): Promise<Tmux> {
  const dir = mkdtempSync(join(tmpdir(), "thoughtgate-tmux-"));
  const socket = join(dir, "socket");
  const record = join(dir, "pane.bytes");
  const statusFile = join(dir, "status");
  // The server's environment is what the pane's command starts with.
  const serverEnv = { ...options.env, TERM: options.env.TERM ?? "xterm-256color" };
  const tmux = (...args: string[]) => {
    const run = Bun.spawnSync(["tmux", "-S", socket, "-f", "/dev/null", ...args], { env: serverEnv, stdout: "pipe", stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${run.stderr.toString().trim()}`);
    return run.stdout.toString();
  };
  const width = String(options.width ?? 120);
  const height = String(options.height ?? 40);
  // A pane that waits (cat on the terminal) until the recording is attached; then the command
  // replaces it, so its first byte is recorded too.
  tmux("new-session", "-d", "-s", "t", "-x", width, "-y", height, "-c", options.cwd, "cat");
  tmux("set-option", "-g", "remain-on-exit", "on");
  tmux("set-option", "-g", "history-limit", "10000");
  tmux("pipe-pane", "-t", "t", `cat >> '${record}'`);
  // The command runs under a shell that writes down its exit status (128 + n for signal n): tmux
  // can mark a pane dead at the terminal's end without ever showing the status.
  tmux("respawn-pane", "-k", "-t", "t", "-c", options.cwd, "sh", "-c", `"$@"; printf '%s' "$?" > '${statusFile}'`, "sh", ...command);

  const screen = () => tmux("capture-pane", "-p", "-t", "t");
  const panePid = (): number | null => {
    try {
      return Number(tmux("display-message", "-p", "-t", "t", "#{pane_pid}").trim()) || null;
    } catch {
      return null;
    }
  };
  /** null while it runs; then its exit status, or 128 + the signal that ended it. */
  const dead = (): number | null => {
    const status = existsSync(statusFile) ? readFileSync(statusFile, "utf8") : "";
    return status === "" ? null : Number(status);
  };
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    // The server's end hangs up the pane: its command gets SIGHUP, as when a terminal closes.
    Bun.spawnSync(["tmux", "-S", socket, "kill-server"], { stdout: "ignore", stderr: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    screen,
    async waitForScreen(what, timeoutMs = 30_000) {
      const seen = () => {
        const shown = screen();
        return (typeof what === "string" ? shown.includes(what) : what.test(shown)) ? shown : null;
      };
      try {
        return await waitFor(seen, `${String(what)} on the screen`, timeoutMs);
      } catch (error) {
        throw new Error(`${(error as Error).message}; the screen shows:\n${screen()}`);
      }
    },
    type: (text) => void tmux("send-keys", "-t", "t", "-l", text),
    press: (...keys) => void tmux("send-keys", "-t", "t", ...keys),
    async pressUntil(key, what, tries = 5) {
      const seen = () => (typeof what === "string" ? screen().includes(what) : what.test(screen()));
      for (let attempt = 1; attempt <= tries; attempt++) {
        tmux("send-keys", "-t", "t", key);
        if (await waitFor(seen, String(what), 3_000).then(() => true, () => false)) return;
      }
      throw new Error(`${key} ×${tries}: still no ${String(what)} on the screen:\n${screen()}`);
    },
    recorded: () => (existsSync(record) ? readFileSync(record, "latin1") : ""),
    async exited(timeoutMs = 30_000) {
      const ended = await waitFor(() => {
        const status = dead();
        return status === null ? null : { status };
      }, "the command in tmux to exit", timeoutMs);
      return ended.status;
    },
    stop,
    [Symbol.asyncDispose]: async () => {
      const pid = panePid();
      stop();
      // The pane's command got SIGHUP: wait until it is gone (no orphan outlives the test).
      if (pid !== null) await waitFor(() => !isAlive(pid), "the tmux pane's command to end", 10_000).catch(() => undefined);
    },
  };
}
