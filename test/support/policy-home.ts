/**
 * A user with a policy and a cloned repository with one of its own, for tests of policy discovery:
 * `$XDG_CONFIG_HOME/thoughtgate/thoughtgate.yaml` (the user's) and `<project>/thoughtgate.yaml`
 * (the repository's, found because a shim, `serve` or `wrap` runs in that directory).
 */
import type { FileSink } from "bun";
import { closeSync, constants, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixture, requireBinary, tempDir } from "./harness.ts";

export type PolicyHome = {
  /** The environment a ThoughtGate process needs to find the user's policy here. */
  env: Record<string, string>;
  userFile: string;
  project: string;
  projectFile: string;
  writeUser(yaml: string): void;
  writeProject(yaml: string): void;
  [Symbol.dispose](): void;
};

export function policyHome(): PolicyHome {
  const dir = tempDir("thoughtgate-policy-");
  const xdg = join(dir.path, "config");
  const project = join(dir.path, "repo");
  mkdirSync(join(xdg, "thoughtgate"), { recursive: true });
  mkdirSync(project);
  const userFile = join(xdg, "thoughtgate", "thoughtgate.yaml");
  const projectFile = join(project, "thoughtgate.yaml");
  return {
    env: { XDG_CONFIG_HOME: xdg },
    userFile,
    project,
    projectFile,
    writeUser: (yaml) => writeFileSync(userFile, yaml),
    writeProject: (yaml) => writeFileSync(projectFile, yaml),
    [Symbol.dispose]: () => dir[Symbol.dispose](),
  };
}

export type Finished = { exitCode: number | null; stdout: string; stderr: string; maxRss: number; timedOut: boolean };

/**
 * Run `thoughtgate ARGS` in `cwd` and wait for it to exit. `stdin`: text written and then closed;
 * or `"fifo"`, a named pipe (in `fifoDir`) that stays open with nothing written, as a shell
 * pipeline from an agent that waits for answers (a socket, which Bun.spawn's pipes are, cannot be
 * opened again through /dev/stdin at all), with `write` in it first if given. A process still running after `timeoutMs` is killed
 * (and reported `timedOut`), so a hang fails the test instead of stalling it.
 */
export async function runThoughtgate(
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string | { fifoDir: string; write?: string }; timeoutMs?: number },
): Promise<Finished> {
  let fifo: number | null = null;
  if (typeof options.stdin === "object") {
    const path = join(options.stdin.fifoDir, `stdin-${Bun.randomUUIDv7()}`);
    const made = Bun.spawnSync(["mkfifo", path]);
    if (made.exitCode !== 0) throw new Error(`mkfifo ${path}: ${made.stderr.toString()}`);
    // Read-write, so the open does not wait for a writer and the pipe never reaches end of file.
    fifo = openSync(path, constants.O_RDWR);
    if (options.stdin.write !== undefined) writeSync(fifo, options.stdin.write);
  }
  const report = join(tmpdir(), `thoughtgate-peak-${Bun.randomUUIDv7()}.json`);
  // Through test/fixtures/peak-rss-fixture.ts: this test process has run many children, and the
  // peak it would report for this one can be an earlier child's.
  const proc = Bun.spawn([...fixture("peak-rss-fixture.ts", report, "--"), requireBinary(), ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: fifo ?? "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (fifo === null) {
    const sink = proc.stdin as FileSink;
    if (typeof options.stdin === "string") sink.write(options.stdin);
    void Promise.resolve(sink.end()).catch(() => {});
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGTERM"); // the fixture SIGKILLs the binary, reaps it and still reports
  }, options.timeoutMs ?? 15_000);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (fifo !== null) closeSync(fifo);
  const peak = JSON.parse(readFileSync(report, "utf8")) as { code: number | null; maxRss: number | null };
  rmSync(report, { force: true });
  return { exitCode: timedOut ? null : peak.code, stdout, stderr, maxRss: peak.maxRss ?? 0, timedOut };
}
