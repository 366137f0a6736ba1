/**
 * Run a command with a pseudo terminal as its controlling terminal, through util-linux `script`
 * (Debian's bsdutils): what the command writes to /dev/tty shows up in `screen()`, and what the
 * test `type()`s arrives on /dev/tty as if typed (so "\x03" is Ctrl+C). The command's own stdout
 * and stderr are redirected to files, so they can be checked apart from what the terminal shows.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, tempDir, waitFor } from "./harness.ts";

export type Terminal = {
  /** Everything written to the terminal so far. */
  screen(): string;
  type(text: string): void;
  /** Wait until the screen contains `text` `times` times. */
  waitForText(text: string, times?: number): Promise<void>;
  /** The command's exit code (script -e passes it on). */
  exited: Promise<number>;
  stdoutFile: string;
  stderrFile: string;
  pid: number;
  kill(signal?: NodeJS.Signals): void;
};

export function hasScript(): boolean {
  return Bun.which("script") !== null;
}

function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

export function runInTerminal(command: string[], options: { cwd: string; outDir: string; env?: Record<string, string | undefined> }): Terminal {
  const stdoutFile = join(options.outDir, "terminal-stdout.txt");
  const stderrFile = join(options.outDir, "terminal-stderr.txt");
  const shell = `exec ${command.map(shellQuote).join(" ")} >${shellQuote(stdoutFile)} 2>${shellQuote(stderrFile)}`;
  // -q: no banner; -e: exit with the command's code; /dev/null: no typescript file.
  const proc = Bun.spawn(["script", "-q", "-e", "-c", shell, "/dev/null"], {
    cwd: options.cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    // A session of its own: the test's own terminal (if any) is never the one the command sees.
    detached: true,
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  let screen = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of proc.stdout) screen += decoder.decode(chunk, { stream: true });
  })();
  const count = (text: string) => screen.split(text).length - 1;
  return {
    screen: () => screen,
    type: (text) => {
      proc.stdin.write(text);
      void proc.stdin.flush();
    },
    waitForText: async (text, times = 1) => {
      try {
        await waitFor(() => count(text) >= times, `${JSON.stringify(text)} ×${times} on the terminal`);
      } catch (error) {
        throw new Error(`${(error as Error).message}; it shows:\n${screen}`);
      }
    },
    exited: proc.exited.then((code) => {
      proc.stdin.end();
      return code;
    }),
    stdoutFile,
    stderrFile,
    pid: proc.pid,
    kill: (signal = "SIGTERM") => proc.kill(signal),
  };
}

/** What `thoughtgate approve|deny` asks its person on the terminal, just before the answer. */
export const CONFIRM_QUESTION = "Type y and Enter to confirm";

/**
 * `thoughtgate approve|deny ARGS` run as a person runs it: on a terminal of its own, answering its
 * question with `answer` (default y) once it is asked. Resolves with how it ended, what it printed,
 * and what the terminal showed.
 */
export async function decideAtTerminal(args: string[], options: { env?: Record<string, string | undefined>; answer?: string; cwd?: string } = {}) {
  using out = tempDir("thoughtgate-terminal-");
  const terminal = runInTerminal([BINARY, ...args], { cwd: options.cwd ?? out.path, outDir: out.path, ...(options.env ? { env: options.env } : {}) });
  let ended = false;
  const exited = terminal.exited.then((code) => {
    ended = true;
    return code;
  });
  await waitFor(() => ended || terminal.screen().includes(CONFIRM_QUESTION), "the confirmation question or the command's end", 30_000);
  if (!ended) terminal.type(`${options.answer ?? "y"}\r`);
  const exitCode = await exited;
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return "";
    }
  };
  return { exitCode, stdout: read(terminal.stdoutFile), stderr: read(terminal.stderrFile), screen: terminal.screen() };
}

/**
 * `thoughtgate tasks ARGS` run as a person runs it, on a terminal of its own (the service shows the
 * tasks only to what it would take a decision from). At a terminal the table ends with the approvals
 * page's link; `--json` prints the tasks alone.
 */
export async function tasksAtTerminal(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) {
  return decideAtTerminal(["tasks", ...args], options);
}
