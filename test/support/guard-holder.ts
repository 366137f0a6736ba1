/** Spawning `config-guard-fixture.ts` and waiting (on its output, not on time) until it holds its guard. */
import type { Subprocess } from "bun";
import { fixture } from "./harness.ts";

export type Holder = Subprocess<"ignore", "pipe", "pipe">;

/** Start a process that acquires a guard on `configPath` and rewrites it; resolves once it printed "ready". */
export async function startHolder(configPath: string, mode: "hold" = "hold"): Promise<Holder> {
  const proc = Bun.spawn(fixture("config-guard-fixture.ts", mode, configPath), { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  while (!seen.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) {
      await proc.exited;
      throw new Error(`config-guard-fixture exited ${proc.exitCode} before it was ready: ${await new Response(proc.stderr).text()}`);
    }
    seen += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return proc;
}

/** SIGKILL, as a crash would, and reap it. */
export async function killHard(proc: Subprocess): Promise<void> {
  proc.kill("SIGKILL");
  await proc.exited;
}

/** Run the fixture in a mode that ends by itself; returns its exit code and stdout. */
export async function runFixture(mode: "try" | "die-after-backup", configPath: string): Promise<{ pid: number; code: number | null; signal: Bun.Subprocess["signalCode"]; stdout: string; stderr: string }> {
  await using proc = Bun.spawn(fixture("config-guard-fixture.ts", mode, configPath), { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { pid: proc.pid, code: proc.exitCode, signal: proc.signalCode, stdout, stderr };
}

/** A pid that certainly belonged to a process that has exited. */
export async function deadPid(): Promise<number> {
  await using proc = Bun.spawn([process.execPath, "-e", ""], { stdout: "ignore", stderr: "ignore" });
  await proc.exited;
  return proc.pid;
}
