/**
 * Shared test support: where the compiled binary is, how to spawn it, and how to wait on a
 * condition (never on a fixed time).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
/** Built by `bun run build` (the test script builds before `bun test`). */
export const BINARY = join(ROOT, "dist", "thoughtgate");
export const FIXTURES = join(ROOT, "test", "fixtures");
export const EVERYTHING_SERVER = ["node", join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"];
export const FILESYSTEM_SERVER_JS = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

export function requireBinary(): string {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first (bun run test does it)`);
  return BINARY;
}

/** A fixture script run with the current bun: `fixture("framing-server-fixture.ts")`. */
export function fixture(name: string, ...args: string[]): string[] {
  return [process.execPath, join(FIXTURES, name), ...args];
}

/** Poll `check` until it returns a truthy value; fail with `what` after `timeoutMs`. */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** Whether a process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3 (after the parenthesised command) is the state; Z is a zombie.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** Every descendant pid of `pid` (children, grandchildren…), from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of new Bun.Glob("[0-9]*").scanSync({ cwd: "/proc", onlyFiles: false })) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** Processes whose command line contains `marker` (fixtures get a unique marker argument). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of new Bun.Glob("[0-9]*").scanSync({ cwd: "/proc", onlyFiles: false })) {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes(marker) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

export function tempDir(prefix = "thoughtgate-test-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/** Read a JSONL event file into objects (missing file → []). */
export function readEvents(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
