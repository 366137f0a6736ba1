/**
 * A shim whose session runs another version of thoughtgate (another version's wrap or enroll made
 * the shim path its own binary meanwhile) becomes the session's pinned binary: the same process
 * (execve), the same arguments, so every shim of a session speaks its service's version. A pinned
 * binary that still is not that version stops there: the session is ended to the shim, which
 * refuses its governed calls rather than loop. The shim replaces itself only with a binary of the
 * user's own state directory (`bin/<pin>/thoughtgate`, as wrap makes it): the attacks on that are
 * in test/e2e/attacks/session-placement.test.ts.
 */
import { expect, test } from "bun:test";
import { linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processStartId } from "../../src/core/process-identity.ts";
import { sessionPaths } from "../../src/core/session-file.ts";
import { fixture, requireBinary, tempDir, waitFor } from "../support/harness.ts";

const ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

test("a session on another version: the shim becomes the session's binary, same pid, same arguments", async () => {
  using dir = tempDir();
  const env = { HOME: dir.path, XDG_STATE_HOME: join(dir.path, "state"), PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const paths = sessionPaths(ID, env);
  mkdirSync(paths.dir, { recursive: true });
  // The session's pin, where wrap makes it: a binary that records how it was started, then exits.
  const pinned = join(env.XDG_STATE_HOME, "thoughtgate", "bin", "0.0.1-older-linux-x64-0123456789ab", "thoughtgate");
  mkdirSync(join(pinned, ".."), { recursive: true, mode: 0o700 });
  const built = Bun.spawnSync([process.execPath, "build", "--compile", join(import.meta.dir, "../fixtures/exec-witness-fixture.ts"), "--outfile", pinned], { stdout: "ignore", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(built.stderr.toString());
  const seen = join(dir.path, "seen.txt");
  const descriptor = {
    version: "0.0.1-older",
    target: "bun-linux-x64",
    pid: process.pid,
    startId: processStartId(process.pid),
    binary: pinned,
    shim: pinned,
    startedAt: new Date().toISOString(),
    endpoint: "http://127.0.0.1:9",
    profile: "production",
    agent: { type: "custom", command: ["agent"], pid: null, startId: null },
    cwd: dir.path,
    project: dir.path,
  };
  writeFileSync(paths.descriptor, JSON.stringify(descriptor));
  await using shim = Bun.spawn([requireBinary(), "shim", "--server-id", "notes", "--", "node", "notes.js"], { env: { ...env, THOUGHTGATE_SESSION: ID, EXEC_WITNESS: seen }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  await shim.exited;
  const line = await waitFor(() => {
    try {
      return readFileSync(seen, "utf8").trim();
    } catch {
      return null;
    }
  }, "the pinned binary to run");
  expect(line).toBe(`${shim.pid} ${pinned} shim --server-id notes -- node notes.js`);
});

test("a pinned binary that is not the session's version either: the shim refuses governed calls, saying why, instead of looping", async () => {
  using dir = tempDir();
  const env = { HOME: dir.path, XDG_STATE_HOME: join(dir.path, "state"), PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const paths = sessionPaths(ID, env);
  mkdirSync(paths.dir, { recursive: true });
  // The pin is this very binary (a hard link, as wrap makes it): not the session's version either.
  const pinned = join(env.XDG_STATE_HOME, "thoughtgate", "bin", "0.0.1-older-linux-x64-0123456789ab", "thoughtgate");
  mkdirSync(join(pinned, ".."), { recursive: true, mode: 0o700 });
  linkSync(requireBinary(), pinned);
  writeFileSync(join(env.XDG_STATE_HOME, "thoughtgate", "user-environment.json"), JSON.stringify({ HOME: env.HOME, XDG_STATE_HOME: env.XDG_STATE_HOME }));
  const descriptor = {
    version: "0.0.1-older",
    target: "bun-linux-x64",
    pid: process.pid,
    startId: processStartId(process.pid),
    binary: requireBinary(),
    shim: pinned,
    startedAt: new Date().toISOString(),
    endpoint: "http://127.0.0.1:9",
    profile: "production",
    agent: { type: "custom", command: ["agent"], pid: null, startId: null },
    cwd: dir.path,
    project: dir.path,
  };
  writeFileSync(paths.descriptor, JSON.stringify(descriptor));
  const [bun, server] = fixture("sdk-server-fixture.ts");
  await using shim = Bun.spawn([requireBinary(), "shim", "--server-id", "notes", "--", bun ?? "bun", server ?? ""], { env: { ...env, THOUGHTGATE_SESSION: ID }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_note", arguments: { id: "a" } } },
  ];
  shim.stdin.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  shim.stdin.flush();
  const reader = shim.stdout.getReader();
  let text = "";
  while (!text.includes('"id":2')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  shim.stdin.end();
  const answer = text.split("\n").map((line) => (line ? (JSON.parse(line) as { id?: number; error?: { message: string } }) : {})).find((message) => message.id === 2);
  expect(answer?.error?.message).toContain(`session ${ID} runs thoughtgate 0.0.1-older (bun-linux-x64) and this shim is`);
  expect(answer?.error?.message).toContain(`${pinned} is not that version`);
});
