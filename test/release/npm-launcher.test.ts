/**
 * The npm launcher (src/release/npm-launcher.sh) on its own, in the layouts npm, npx and pnpm make,
 * with small shell scripts standing in for the platform binaries: it must find the package Node's
 * resolution would, exec it (same pid, so stdin, signals and the exit status are the binary's), and
 * explain what is missing when nothing fits. Machine facts it reads (/proc/cpuinfo, the kernel's
 * arch) are replaced inside a private user and mount namespace.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { renderLauncher } from "../../src/release/npm.ts";
import { tempDir } from "../support/harness.ts";
import { hostAsset } from "../support/release.ts";

const VERSION = "1.2.3";
const launcherText = renderLauncher(VERSION);
/** The package npm picks here: linux-x64 (linux-x64-baseline without AVX2) or linux-arm64. */
const HOST = hostAsset().target.replace(/^bun-/, "");
const root = tempDir("thoughtgate-launcher-");
afterAll(() => root[Symbol.dispose]());

let layouts = 0;
function layoutDir(): string {
  const dir = join(root.path, `layout-${++layouts}`);
  mkdirSync(dir);
  return dir;
}

function write(path: string, text: string, mode = 0o644) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

/** A stand-in binary: prints its name, pid and arguments, echoes one stdin line, exits 7. */
function fakeBinary(path: string, name: string) {
  write(path, `#!/bin/sh\nprintf '%s %s' ${name} "$$"; for a in "$@"; do printf ' [%s]' "$a"; done; echo\nIFS= read -r line; echo "stdin: $line"\nexit 7\n`, 0o755);
}

function link(target: string, path: string) {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/** npm -g from the registry: the platform package nested in the launcher's package. */
function globalNested(platforms = [HOST]) {
  const prefix = layoutDir();
  const pkg = join(prefix, "lib", "node_modules", "thoughtgate");
  write(join(pkg, "bin", "thoughtgate"), launcherText, 0o755);
  for (const name of platforms) fakeBinary(join(pkg, "node_modules", "@thoughtgate", name, "bin", "thoughtgate"), name);
  link("../lib/node_modules/thoughtgate/bin/thoughtgate", join(prefix, "bin", "thoughtgate"));
  return join(prefix, "bin", "thoughtgate");
}

async function run(cmd: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  await using proc = Bun.spawn(cmd, { env: options.env ?? { PATH: "/usr/bin:/bin" }, stdin: new Blob([options.stdin ?? "hello\n"]), stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { pid: proc.pid, code, stdout, stderr };
}

/** Run `cmd` with files bound over paths (e.g. /proc/cpuinfo), in a user and mount namespace of its own. */
function withBinds(binds: Array<[string, string]>, cmd: string[]): string[] {
  const script = `set -e\n${binds.map((_, i) => `mount --bind "$${2 * i + 1}" "$${2 * i + 2}"`).join("\n")}\nshift ${2 * binds.length}\nexec "$@"`;
  return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "binds", ...binds.flat(), ...cmd];
}

test("the rendered launcher is POSIX sh that dash and bash --posix parse, carrying the version", async () => {
  const file = join(root.path, "launcher.sh");
  write(file, launcherText, 0o755);
  for (const shell of [["dash", "-n"], ["bash", "--posix", "-n"]]) expect(await run([...shell, file])).toMatchObject({ code: 0, stderr: "" });
  expect(launcherText).toContain(`version='${VERSION}'`);
  expect(launcherText).not.toContain("@VERSION@");
  expect(() => renderLauncher("1.0.0'; rm -rf /")).toThrow("refusing version");
});

describe("finds the platform package the way require.resolve would, and execs it", () => {
  const layouts: Record<string, () => string> = {
    "npm -g from a registry (nested)": () => globalNested(),
    "npm -g of tarballs (next to the launcher's package)": () => {
      const prefix = layoutDir();
      const modules = join(prefix, "lib", "node_modules");
      write(join(modules, "thoughtgate", "bin", "thoughtgate"), launcherText, 0o755);
      fakeBinary(join(modules, "@thoughtgate", HOST, "bin", "thoughtgate"), HOST);
      link("../lib/node_modules/thoughtgate/bin/thoughtgate", join(prefix, "bin", "thoughtgate"));
      return join(prefix, "bin", "thoughtgate");
    },
    "npx and local installs (node_modules/.bin)": () => {
      const modules = join(layoutDir(), "_npx", "0123abcd", "node_modules");
      write(join(modules, "thoughtgate", "bin", "thoughtgate"), launcherText, 0o755);
      fakeBinary(join(modules, "@thoughtgate", HOST, "bin", "thoughtgate"), HOST);
      link("../thoughtgate/bin/thoughtgate", join(modules, ".bin", "thoughtgate"));
      return join(modules, ".bin", "thoughtgate");
    },
    "pnpm (the package reached through a linked directory)": () => {
      const project = layoutDir();
      const store = join(project, "node_modules", ".pnpm", `thoughtgate@${VERSION}`, "node_modules");
      write(join(store, "thoughtgate", "bin", "thoughtgate"), launcherText, 0o755);
      fakeBinary(join(store, "@thoughtgate", HOST, "bin", "thoughtgate"), HOST);
      link(`.pnpm/thoughtgate@${VERSION}/node_modules/thoughtgate`, join(project, "node_modules", "thoughtgate"));
      link("../thoughtgate/bin/thoughtgate", join(project, "node_modules", ".bin", "thoughtgate"));
      return join(project, "node_modules", ".bin", "thoughtgate");
    },
  };
  for (const [name, make] of Object.entries(layouts)) {
    test(name, async () => {
      const result = await run([make(), "wrap", "two words", "", "--", "x"]);
      // Same pid as the process spawned: exec, not a child. Arguments, stdin and the exit code are the binary's.
      expect(result).toEqual({ pid: result.pid, code: 7, stdout: `${HOST} ${result.pid} [wrap] [two words] [] [--] [x]\nstdin: hello\n`, stderr: "" });
    });
  }

  test("a signal to the launcher's pid reaches the binary", async () => {
    await using proc = Bun.spawn([globalNested()], { env: { PATH: "/usr/bin:/bin" }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const reader = proc.stdout.getReader();
    let first = "";
    while (!first.includes("\n")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      first += new TextDecoder().decode(chunk.value);
    }
    expect(first).toBe(`${HOST} ${proc.pid}\n`);
    proc.kill("SIGTERM");
    await proc.exited;
    expect(proc.signalCode).toBe("SIGTERM");
  });
});

describe("when no package fits, it says which is missing and how to get it", () => {
  test("none installed (npm --omit=optional)", async () => {
    const prefix = layoutDir();
    write(join(prefix, "lib", "node_modules", "thoughtgate", "bin", "thoughtgate"), launcherText, 0o755);
    link("../lib/node_modules/thoughtgate/bin/thoughtgate", join(prefix, "bin", "thoughtgate"));
    const result = await run([join(prefix, "bin", "thoughtgate"), "--version"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `thoughtgate: error: @thoughtgate/${HOST}, the ThoughtGate binary for this platform, is not installed next to ${join(prefix, "lib", "node_modules", "thoughtgate")}\n` +
        "  npm leaves it out when optional dependencies are omitted (--omit=optional, --no-optional, omit=optional in .npmrc)\n" +
        `  fix: npm install -g thoughtgate@${VERSION} --include=optional   (or: npm install -g @thoughtgate/${HOST}@${VERSION})\n`,
    );
  });

  test("musl libc: the reason npm skipped the package (it declares libc: glibc)", async () => {
    const bin = join(layoutDir(), "fake-bin");
    write(join(bin, "ldd"), "#!/bin/sh\necho 'musl libc (x86_64)' >&2\nexit 1\n", 0o755);
    const result = await run([globalNested([]), "--version"], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("this system uses musl libc (Alpine?), and ThoughtGate's Linux builds need glibc");
  });

  test("an architecture no build exists for", async () => {
    const arch = join(layoutDir(), "arch");
    write(arch, "riscv64\n");
    const result = await run(withBinds([[arch, "/proc/sys/kernel/arch"]], [globalNested(), "--version"]));
    expect(result).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("thoughtgate: error: no ThoughtGate build for Linux riscv64") });
  });
});

describe("without /proc (macOS): uname, and sysctl for AVX2", () => {
  /** Empty files over the /proc entries the launcher reads, and `uname`/`sysctl` stand-ins first on PATH. */
  function asMac(machine: string, leaf7: string, cmd: string[]) {
    const dir = layoutDir();
    write(join(dir, "empty"), "");
    write(join(dir, "bin", "uname"), `#!/bin/sh
[ "$1" = -sm ] && echo "Darwin ${machine}"
`, 0o755);
    write(join(dir, "bin", "sysctl"), `#!/bin/sh
[ "$2" = machdep.cpu.leaf7_features ] && echo "${leaf7}"
`, 0o755);
    const binds: Array<[string, string]> = [[join(dir, "empty"), "/proc/sys/kernel/ostype"], [join(dir, "empty"), "/proc/sys/kernel/arch"]];
    return { cmd: withBinds(binds, cmd), env: { PATH: `${join(dir, "bin")}:/usr/bin:/bin` } };
  }

  test("Apple silicon runs @thoughtgate/darwin-arm64", async () => {
    const mac = asMac("arm64", "", [globalNested(["darwin-arm64", HOST])]);
    expect((await run(mac.cmd, { env: mac.env })).stdout).toStartWith("darwin-arm64 ");
  });

  test("an Intel Mac without AVX2 runs @thoughtgate/darwin-x64-baseline; with it, darwin-x64", async () => {
    const launcher = globalNested(["darwin-x64", "darwin-x64-baseline"]);
    const old = asMac("x86_64", "RDWRFSGS TSC_THREAD_OFFSET SMEP ERMS", [launcher]);
    expect((await run(old.cmd, { env: old.env })).stdout).toStartWith("darwin-x64-baseline ");
    const recent = asMac("x86_64", "RDWRFSGS TSC_THREAD_OFFSET BMI1 AVX2 SMEP BMI2 ERMS", [launcher]);
    expect((await run(recent.cmd, { env: recent.env })).stdout).toStartWith("darwin-x64 ");
  });
});

describe.skipIf(process.arch !== "x64")("x86_64 CPUs without AVX2", () => {
  function noAvx2Cpuinfo(): string {
    const path = join(layoutDir(), "cpuinfo");
    write(path, "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt avx\n\n");
    return path;
  }

  test("run the -baseline package when it is installed, even next to the default one", async () => {
    const launcher = globalNested(["linux-x64", "linux-x64-baseline"]);
    const result = await run(withBinds([[noAvx2Cpuinfo(), "/proc/cpuinfo"]], [launcher]));
    expect(result.stdout).toStartWith("linux-x64-baseline ");
    // With AVX2 (this machine, if it has it), the default build wins.
    if (hostAsset().target === "bun-linux-x64") expect((await run([launcher])).stdout).toStartWith("linux-x64 ");
  });

  test("without it, name the -baseline package: npm never installs it by itself", async () => {
    const result = await run(withBinds([[noAvx2Cpuinfo(), "/proc/cpuinfo"]], [globalNested(["linux-x64"]), "--version"]));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("this x86_64 CPU has no AVX2, so it needs @thoughtgate/linux-x64-baseline");
    expect(result.stderr).toContain(`fix: npm install -g @thoughtgate/linux-x64-baseline@${VERSION}`);
  });
});
