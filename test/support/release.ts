/**
 * The release set (`build.ts --all`) for tests, built once per `bun test` process: every test file
 * that asks shares the same build (bun test runs files in one process with one module cache).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { parseSha256Sums } from "../../src/release/checksums.ts";
import { ROOT } from "./harness.ts";

/** The formula's download base in the test build, to show THOUGHTGATE_RELEASE_BASE is honoured. */
export const TEST_RELEASE_BASE = `https://mirror.example.test/thoughtgate/v${pkg.version}`;

/** Building six targets takes ~40 s on 2 cores, more when the cross runtimes must be downloaded. */
export const RELEASE_BUILD_TIMEOUT_MS = 600_000;

export type ReleaseSet = { dir: string; version: string; sums: Map<string, string> };

let building: Promise<ReleaseSet> | undefined;

export function releaseSet(): Promise<ReleaseSet> {
  building ??= build();
  return building;
}

async function build(): Promise<ReleaseSet> {
  const dir = mkdtempSync(join(tmpdir(), "thoughtgate-release-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  await using proc = Bun.spawn([process.execPath, "run", join(ROOT, "build.ts"), "--all", "--out", dir], {
    cwd: ROOT,
    // The test preload points HOME at a temp dir; Bun caches cross-compile runtimes under the real
    // HOME, and without it every run would download ~150 MB of runtimes again.
    env: { ...process.env, HOME: userInfo().homedir, THOUGHTGATE_RELEASE_BASE: TEST_RELEASE_BASE },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`build.ts --all exited ${code}:\n${stdout}${stderr}`);
  return { dir, version: pkg.version, sums: parseSha256Sums(readFileSync(join(dir, "SHA256SUMS"), "utf8")) };
}

/** The release asset install.sh picks on this machine (it prefers baseline when the CPU lacks AVX2). */
export function hostAsset(): { file: string; target: string } {
  const os = process.platform === "darwin" ? "darwin" : "linux";
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  const avx2 = os === "linux" && arch === "x64" ? /\bavx2\b/.test(readFileSync("/proc/cpuinfo", "utf8")) : true;
  const suffix = arch === "x64" && !avx2 ? "-baseline" : "";
  return { file: `thoughtgate-${os}-${arch}${suffix}.tar.gz`, target: `bun-${os}-${arch}${suffix}` };
}
