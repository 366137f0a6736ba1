/**
 * `thoughtgate log` and the files it keeps in the state directory, through the compiled binary: the
 * index (`log-index.sqlite`) put there as a symlink, a FIFO or a second name for another file is
 * never read or written through; it is removed and rebuilt from the record, and the answer is the
 * same. `--prune` spares the file of a standalone shim that is still running and appending to it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, requireBinary, tempDir } from "../support/harness.ts";

setDefaultTimeout(60_000);

const dir = tempDir("thoughtgate-log-files-");
const home = join(dir.path, "home");
const stateHome = join(home, ".local", "state");
const index = join(stateHome, "thoughtgate", "log-index.sqlite");
const outside = join(dir.path, "outside");
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_STATE_HOME: stateHome,
};

async function run(args: string[]) {
  await using proc = Bun.spawn([requireBinary(), ...args], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, exitCode };
}

/** A standalone shim in front of the scripted server: one echo call, recorded. */
async function oneCall(): Promise<void> {
  const transport = new StdioClientTransport({ command: requireBinary(), args: ["shim", "--server-id", "notes", "--", ...fixture("scripted-server-fixture.ts")], env, stderr: "pipe" });
  const client = new Client({ name: "log-files-test", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  await client.callTool({ name: "echo", arguments: { note: "kept" } });
  await client.close();
}

const QUESTION = ["log", "--json", "--server", "notes"];
let answer = "";

beforeAll(async () => {
  mkdirSync(join(home, ".config"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  await oneCall();
  const first = await run(QUESTION);
  expect(first.exitCode).toBe(0);
  answer = first.stdout;
  expect(answer).toContain('"tool":"echo"');
});
afterAll(() => dir[Symbol.dispose]());

/** Put `make` in place of the index (after removing it and its companions), then ask `log`. */
async function askWith(make: () => void) {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${index}${suffix}`, { force: true });
  make();
  return run(QUESTION);
}

describe("log's index is never written through, and a file in its place is rebuilt", () => {
  test("a symlink to a file outside the state directory: the file is untouched, the index rebuilt, the same answer", async () => {
    const target = join(outside, "victim.txt");
    writeFileSync(target, "the user's own file\n");
    const result = await askWith(() => symlinkSync(target, index));
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: answer });
    expect(result.stderr).toContain(`the log index ${index} is rebuilt from the record: ${index} was a symbolic link, not a regular file`);
    expect(readFileSync(target, "utf8")).toBe("the user's own file\n");
    expect(lstatSync(index).isFile()).toBe(true);
  });

  test("a symlink to a path that does not exist yet: nothing is made there", async () => {
    const target = join(outside, "planted.sqlite");
    const result = await askWith(() => symlinkSync(target, index));
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: answer });
    expect(existsSync(target)).toBe(false);
    for (const suffix of ["-wal", "-shm", "-journal"]) expect(existsSync(`${target}${suffix}`)).toBe(false);
  });

  test("its write-ahead log as a symlink: nothing written through it", async () => {
    const target = join(outside, "wal-victim.txt");
    writeFileSync(target, "untouched\n");
    const result = await askWith(() => symlinkSync(target, `${index}-wal`));
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: answer });
    expect(result.stderr).toContain(`${index}-wal was a symbolic link, not a regular file`);
    expect(readFileSync(target, "utf8")).toBe("untouched\n");
  });

  test("a hard link to another file: that file is untouched", async () => {
    const target = join(stateHome, "linked.txt");
    writeFileSync(target, "another name\n");
    const result = await askWith(() => linkSync(target, index));
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: answer });
    expect(result.stderr).toContain("had 2 hard links");
    expect(readFileSync(target, "utf8")).toBe("another name\n");
  });

  test("a FIFO: log does not block and does not fail, it rebuilds", async () => {
    const result = await askWith(() => {
      const made = Bun.spawnSync(["mkfifo", index]);
      if (made.exitCode !== 0) throw new Error(`mkfifo: ${made.stderr.toString()}`);
    });
    expect({ exitCode: result.exitCode, stdout: result.stdout }).toEqual({ exitCode: 0, stdout: answer });
    expect(result.stderr).toContain(`${index} was a FIFO (named pipe), not a regular file`);
    expect(lstatSync(index).isFile()).toBe(true);
  });

  test("a directory is the user's: refused in one line, nothing removed", async () => {
    const result = await askWith(() => mkdirSync(join(index, "keep"), { recursive: true }));
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(`${index} is a directory, not the log index: move it away, then run log again`);
    expect(existsSync(join(index, "keep"))).toBe(true);
    rmSync(index, { recursive: true });
  });
});

describe("log --prune --older-than", () => {
  test("spares the file of a standalone shim still running: its calls after the prune are in the record", async () => {
    const transport = new StdioClientTransport({ command: requireBinary(), args: ["shim", "--server-id", "live", "--", ...fixture("scripted-server-fixture.ts")], env, stderr: "pipe" });
    const client = new Client({ name: "log-files-test", version: "1" }, { capabilities: {} });
    await client.connect(transport);
    try {
      await client.callTool({ name: "echo", arguments: { note: "before the prune" } });
      // Everything recorded so far is older than "0s": the ended "notes" run goes, the running "live" one stays.
      const pruned = await run(["log", "--prune", "--older-than", "0s"]);
      expect(pruned).toMatchObject({ exitCode: 0, stdout: "removed 1 record file (1 call) older than 0s (1 kept: still being written by a running wrap or shim)\n" });
      await client.callTool({ name: "echo", arguments: { note: "after the prune" } });
    } finally {
      await client.close();
    }
    const calls = (await run(["log", "--json", "--since", "1h"])).stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { server: string; arguments: { note: string } });
    expect(calls.map((call) => [call.server, call.arguments.note]).sort()).toEqual([
      ["live", "after the prune"],
      ["live", "before the prune"],
    ]);
    // Once it has ended, its file goes like any other.
    expect((await run(["log", "--prune", "--older-than", "0s"])).stdout).toBe("removed 1 record file (2 calls) older than 0s\n");
  });
});
