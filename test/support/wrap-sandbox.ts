/**
 * A home and a project in a temp dir for running the compiled `thoughtgate wrap` as a user would in
 * a repository they just cloned: HOME, the XDG dirs and the working directory all inside it, so
 * whatever wrap reads or writes is the test's. `run` stops wrap at a deadline (SIGKILL, reaped)
 * and reports its peak memory from the kernel's rusage, read by test/fixtures/peak-rss-fixture.ts.
 */
import type { Subprocess } from "bun";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, requireBinary, tempDir } from "./harness.ts";

export type WrapRun = {
  code: number | null;
  stderr: string;
  stdout: string;
  /** Wrap did not exit by the deadline (and was killed). */
  timedOut: boolean;
  /** Peak resident memory of the wrap process, bytes (getrusage's ru_maxrss). */
  maxRss: number;
};

export type Sandbox = AsyncDisposable & {
  home: string;
  project: string;
  state: string;
  env: Record<string, string>;
  /** `thoughtgate <args>` in the project; killed after `deadlineMs`. */
  run(args: string[], deadlineMs?: number): Promise<WrapRun>;
  /** Start it (the caller waits on `proc`); killed and reaped with the sandbox if still running. */
  start(args: string[]): { proc: Subprocess<"ignore", "pipe", "pipe">; stderr: () => string };
};

export const STDIO_SERVERS = `{ "mcpServers": { "notes": { "command": "node", "args": ["notes-server.js"] } } }\n`;

export function wrapSandbox(): Sandbox {
  const dir = tempDir("thoughtgate-attack-");
  const home = join(dir.path, "home");
  const project = join(dir.path, "cloned-repo");
  mkdirSync(home);
  mkdirSync(project);
  const state = join(home, ".local", "state");
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("THOUGHTGATE_") && key !== "CLAUDE_CONFIG_DIR") env[key] = value;
  }
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: state, XDG_DATA_HOME: join(home, ".local", "share") });
  const started: Subprocess[] = [];
  const spawn = (args: string[]) => {
    // Its own process group: whatever wrap started (the agent, its shims) can be reaped with it.
    const proc = Bun.spawn([requireBinary(), ...args], { cwd: project, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
    started.push(proc);
    return proc;
  };
  const start = (args: string[]) => {
    const proc = spawn(args);
    // Drained as it comes, so a chatty wrap never blocks on a full pipe.
    let stderr = "";
    void (async () => {
      for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
    })();
    void new Response(proc.stdout).text();
    return { proc, stderr: () => stderr };
  };
  return {
    home,
    project,
    state,
    env,
    start,
    async run(args, deadlineMs = 15_000) {
      const report = join(dir.path, `peak-${Bun.randomUUIDv7()}.json`);
      const proc = Bun.spawn([...fixture("peak-rss-fixture.ts", report, "--"), requireBinary(), ...args], { cwd: project, env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
      started.push(proc);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        proc.kill("SIGTERM"); // the fixture SIGKILLs wrap, reaps it and still reports
      }, deadlineMs);
      const [stderr, stdout] = await Promise.all([new Response(proc.stderr).text(), new Response(proc.stdout).text(), proc.exited]);
      clearTimeout(timer);
      // A wrap killed at the deadline cannot reap its agent: the group's leftovers go with it.
      if (timedOut) killGroup(proc.pid);
      const peak = JSON.parse(readFileSync(report, "utf8")) as { code: number | null; maxRss: number | null };
      return { code: peak.code, stderr, stdout, timedOut, maxRss: peak.maxRss ?? Number.NaN };
    },
    async [Symbol.asyncDispose]() {
      for (const proc of started) {
        if (proc.exitCode === null && proc.signalCode === null) {
          // A test that failed part-way: wrap gets the chance to stop its agent and restore, then the group goes.
          proc.kill("SIGTERM");
          await Promise.race([proc.exited, Bun.sleep(5_000)]);
        }
        killGroup(proc.pid);
        await proc.exited;
      }
      dir[Symbol.dispose]();
    },
  };
}

/** A file of the user's that an attack aims at, with known bytes. */
export function userFile(sandbox: Sandbox, name: string, content = `the user's own ${name}\n`): { path: string; content: string } {
  const path = join(sandbox.home, name);
  writeFileSync(path, content);
  return { path, content };
}

/** Stderr lines that name `path`. */
export function linesNaming(stderr: string, path: string): string[] {
  return stderr.split("\n").filter((line) => line.includes(path));
}

/** SIGKILL what is left of a process group (nothing, when the test went well). */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // The group is empty.
  }
}
