/**
 * The release smoke test (`bun run smoke`, test/smoke.ts) is what CI runs on a Mac against the
 * darwin binary, where this suite cannot run. Here it runs against the host binary, from the binary
 * and from a release-style archive, so a broken smoke script is found before a release depends on it;
 * and against a binary that is not ThoughtGate, which it must fail, naming the check.
 */
import { expect, test } from "bun:test";
import { chmodSync, copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, ROOT, tempDir } from "../support/harness.ts";

const SMOKE = join(ROOT, "test", "smoke.ts");

async function smoke(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  await using proc = Bun.spawn([process.execPath, SMOKE, ...args], { stdout: "pipe", stderr: "pipe", env: process.env });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

test("the smoke test passes the binary: --version, the embedded Cedar engine, a governed round trip", async () => {
  const result = await smoke(requireBinary());
  expect(result.stderr).not.toContain("FAILED");
  expect(result.code).toBe(0);
  expect(result.stdout).toContain("smoke: ok  binary --version");
  expect(result.stdout).toContain("smoke: ok  doctor: the embedded Cedar engine decides");
  expect(result.stdout).toContain("smoke: ok  shim: a governed tools/call round trip");
  expect(result.stdout).toContain("smoke: all checks passed");
}, 60_000);

test("the smoke test passes a release archive holding the binary", async () => {
  using dir = tempDir("thoughtgate-smoke-archive-");
  copyFileSync(requireBinary(), join(dir.path, "thoughtgate"));
  const archive = join(dir.path, "thoughtgate-test.tar.gz");
  const tar = Bun.spawnSync(["tar", "-czf", archive, "-C", dir.path, "thoughtgate"]);
  expect(tar.exitCode).toBe(0);
  const result = await smoke(archive);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain(`smoke: ok  unpacked ${archive}`);
  expect(result.stdout).toContain("smoke: all checks passed");
}, 60_000);

test("a binary that is not this version of ThoughtGate fails the smoke test, naming the check, exit 1", async () => {
  using dir = tempDir("thoughtgate-smoke-wrong-");
  const impostor = join(dir.path, "thoughtgate");
  writeFileSync(impostor, "#!/bin/sh\necho 'thoughtgate 0.0.0 (bun-linux-x64)'\n");
  chmodSync(impostor, 0o755);
  const result = await smoke(impostor);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain("smoke: FAILED binary --version is");
  expect(result.stdout).not.toContain("all checks passed");
});
