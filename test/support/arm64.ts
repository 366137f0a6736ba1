/**
 * Commands run as on an arm64 Linux machine, on an x86_64 one: in a user and mount namespace of
 * their own, where arm64 executables run under qemu-aarch64-static through binfmt_misc and
 * /proc/sys/kernel/arch reads `aarch64`. The binfmt_misc registration is the namespace's own
 * (Linux 6.7 and later), so nothing outside the test sees it; every process the command starts
 * (wrap, the agent, the shims it spawns) stays inside.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";

/** binfmt_misc's line for aarch64 ELF executables (the magic and mask Debian's qemu-user-binfmt use); F: qemu is opened now. */
const REGISTER =
  ":qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/bin/qemu-aarch64-static:F";

const SETUP = `set -e
mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
printf '%s' "$1" > /proc/sys/fs/binfmt_misc/register
mount --bind "$2" /proc/sys/kernel/arch
shift 2
export QEMU_LD_PREFIX=${ARM64_SYSROOT}
exec "$@"`;

export function requireArm64Emulation(): void {
  if (!Bun.which("qemu-aarch64-static") || !existsSync(join(ARM64_SYSROOT, "lib", "ld-linux-aarch64.so.1"))) {
    throw new Error("needs qemu-aarch64-static and an arm64 glibc in /usr/aarch64-linux-gnu: apt-get install qemu-user-static libc6-arm64-cross (.ci/run does)");
  }
  if (!Bun.which("unshare")) throw new Error("needs unshare (util-linux)");
}

/** `cmd` wrapped to run as on arm64; `scratchDir` holds the file that stands in for /proc/sys/kernel/arch. */
export function asArm64(cmd: string[], scratchDir: string): string[] {
  requireArm64Emulation();
  const arch = join(scratchDir, "arch");
  writeFileSync(arch, "aarch64\n");
  return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", SETUP, "arm64", REGISTER, arch, ...cmd];
}
