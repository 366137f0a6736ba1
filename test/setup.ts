/**
 * `bun run test` runs this first: the system packages the tests need, installed from Debian's
 * archive when missing (sudo when not root), so the README's test command works on a fresh Debian
 * or Ubuntu machine with only Node/npm. Nothing is installed when everything is present.
 *
 * - qemu-user-static, libc6-arm64-cross: the linux-arm64 build runs under qemu-aarch64-static
 * - ruby: `ruby -c` on the Homebrew formula
 * - dash, curl: install.sh under a POSIX shell, downloading from a loopback server
 * - chromium: the approvals page in a real browser (driven by playwright-core, no browser download)
 * - util-linux (`script`, `unshare`): a pseudo terminal for the arbiter's prompts and a person's
 *   `thoughtgate approve`; a private namespace for the arm64 npm test
 * - tmux: interactive agents (Claude Code's TUI) driven by keys, their screen read and every byte
 *   written to their terminal recorded (test/support/tmux.ts)
 * - openssl: the self-signed certificate of the loopback HTTPS host an organisation's policy is fetched from
 * - jq: an organisation's bundle signed with other tools than ThoughtGate, as docs/team.md shows
 */
import { existsSync } from "node:fs";

const needs: Array<[pkg: string, present: () => boolean]> = [
  ["qemu-user-static", () => Bun.which("qemu-aarch64-static") !== null],
  ["libc6-arm64-cross", () => existsSync("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")],
  ["ruby", () => Bun.which("ruby") !== null],
  ["dash", () => Bun.which("dash") !== null],
  ["curl", () => Bun.which("curl") !== null],
  ["chromium", () => Bun.which("chromium") !== null],
  ["util-linux", () => Bun.which("script") !== null && Bun.which("unshare") !== null],
  ["tmux", () => Bun.which("tmux") !== null],
  ["openssl", () => Bun.which("openssl") !== null],
  ["jq", () => Bun.which("jq") !== null],
];

if (process.platform !== "linux") {
  console.error("test setup: not Linux; install qemu, ruby, dash, curl, chromium, util-linux, tmux, openssl and jq yourself");
  process.exit(0);
}
const missing = needs.filter(([, present]) => !present()).map(([pkg]) => pkg);
if (missing.length === 0) process.exit(0);
if (Bun.which("apt-get") === null) {
  console.error(`test setup: missing ${missing.join(", ")} and no apt-get to install them with`);
  process.exit(1);
}
const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
console.error(`test setup: installing ${missing.join(", ")} from Debian's packages`);
const run = (args: string[]) => {
  const result = Bun.spawnSync([...sudo, ...args], { stdout: "inherit", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  if (result.exitCode !== 0) {
    console.error(`test setup: ${args.join(" ")} failed (exit ${result.exitCode})`);
    process.exit(1);
  }
};
run(["apt-get", "update", "-qq"]);
run(["apt-get", "install", "-y", "-qq", ...missing]);
