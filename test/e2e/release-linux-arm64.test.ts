/**
 * The linux-arm64 release binary, run under qemu user-mode emulation: it starts, reports its target
 * and evaluates a Cedar policy with the engine embedded for arm64. CI installs qemu-user-static and
 * libc6-arm64-cross (.ci/run); without them this test fails rather than skips.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { RELEASE_BUILD_TIMEOUT_MS, releaseSet, type ReleaseSet } from "../support/release.ts";

const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";
const unpacked = tempDir("thoughtgate-arm64-");
let release: ReleaseSet;

beforeAll(async () => {
  release = await releaseSet();
  await using tar = Bun.spawn(["tar", "-xzf", join(release.dir, "thoughtgate-linux-arm64.tar.gz"), "-C", unpacked.path]);
  if ((await tar.exited) !== 0) throw new Error("could not unpack thoughtgate-linux-arm64.tar.gz");
}, RELEASE_BUILD_TIMEOUT_MS);
afterAll(() => unpacked[Symbol.dispose]());

async function underQemu(args: string[]) {
  const qemu = Bun.which("qemu-aarch64-static");
  if (!qemu || !existsSync(join(ARM64_SYSROOT, "lib", "ld-linux-aarch64.so.1"))) {
    throw new Error("needs qemu-aarch64-static and an arm64 glibc in /usr/aarch64-linux-gnu: apt-get install qemu-user-static libc6-arm64-cross (.ci/run does)");
  }
  await using proc = Bun.spawn([qemu, "-L", ARM64_SYSROOT, join(unpacked.path, "thoughtgate"), ...args], {
    cwd: unpacked.path,
    env: { HOME: unpacked.path, PATH: "/usr/bin:/bin" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

test("linux-arm64 --version names its target", async () => {
  expect(await underQemu(["--version"])).toEqual({ code: 0, stdout: `thoughtgate ${release.version} (bun-linux-arm64)\n`, stderr: "" });
});

test("linux-arm64 evaluates a Cedar policy with its embedded engine", async () => {
  const { code, stdout, stderr } = await underQemu(["doctor", "--json"]);
  const checks = (JSON.parse(stdout) as { checks: Array<{ id: string; status: string; data: Record<string, unknown> }> }).checks;
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(checks.find((c) => c.id === "cedar")).toMatchObject({
    status: "pass",
    data: { embedded: true, decisions: { read_file: { decision: "allow" }, delete_file: { decision: "deny", reasons: ["forbid-delete"] } } },
  });
});
