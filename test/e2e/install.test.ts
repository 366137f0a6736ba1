/**
 * install.sh, run the way users run it (`curl -fsSL …/install.sh | sh -s -- …`, with dash as sh),
 * against a loopback server that serves the real `build.ts --all` output.
 */
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fixture, tempDir } from "../support/harness.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { hostAsset, RELEASE_BUILD_TIMEOUT_MS, releaseSet, type ReleaseSet } from "../support/release.ts";

let release: ReleaseSet;
beforeAll(async () => {
  release = await releaseSet();
}, RELEASE_BUILD_TIMEOUT_MS);

/** Serves the release directory; `overrides` replaces a file's bytes (tampering); `requests` logs paths. */
function serveRelease(overrides: Record<string, Uint8Array> = {}) {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const name = new URL(request.url).pathname.slice(1);
      requests.push(name);
      const override = overrides[name];
      if (override) return new Response(override);
      if (name.includes("/") || !existsSync(join(release.dir, name))) return new Response("not found", { status: 404 });
      return new Response(Bun.file(join(release.dir, name)));
    },
  });
  return { base: `http://127.0.0.1:${server.port}`, requests, [Symbol.asyncDispose]: () => server.stop(true) };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A fresh HOME with nothing on PATH but the system tools. */
function sandbox() {
  const home = tempDir("thoughtgate-install-home-");
  cleanups.push(() => home[Symbol.dispose]());
  const installDir = join(home.path, "bin with space");
  return { home: home.path, installDir, binary: join(installDir, "thoughtgate") };
}

type Run = { code: number; stdout: string; stderr: string };

/** `curl -fsSL $base/install.sh | dash -s -- ARGS`, exactly what the README tells users to run. */
async function runInstaller(base: string, home: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  await using proc = Bun.spawn(["dash", "-c", 'curl -fsSL "$0/install.sh" | dash -s -- "$@"', base, ...args], {
    cwd: home,
    env: { HOME: home, PATH: "/usr/local/bin:/usr/bin:/bin", SHELL: "/bin/bash", THOUGHTGATE_DOWNLOAD_BASE: base, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

async function run(cmd: string[]): Promise<Run> {
  await using proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

describe("install.sh", () => {
  test("installs the verified host build, which then runs, and prints how to put it on PATH", async () => {
    await using server = serveRelease();
    const { home, installDir, binary } = sandbox();
    const result = await runInstaller(server.base, home, [], { THOUGHTGATE_INSTALL_DIR: installDir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(server.requests.toSorted()).toEqual(["SHA256SUMS", hostAsset().file, "install.sh"].toSorted());
    expect(result.stdout).toContain(`verified sha256 ${release.sums.get(hostAsset().file)}`);
    expect(result.stdout).toContain(`export PATH="${installDir}:$PATH"`);

    expect(await run([binary, "--version"])).toEqual({ code: 0, stdout: `thoughtgate ${release.version} (${hostAsset().target})\n`, stderr: "" });
    // Without --modify-path no shell profile is created or touched.
    expect(readdirSync(home).filter((name) => name.startsWith("."))).toEqual([]);
  });

  test("refuses a tampered archive and installs nothing, keeping an existing install", async () => {
    const file = hostAsset().file;
    const tampered = new Uint8Array(readFileSync(join(release.dir, file)));
    tampered[tampered.length >> 1] = (tampered[tampered.length >> 1] ?? 0) ^ 0xff;
    await using server = serveRelease({ [file]: tampered });
    const { home, installDir, binary } = sandbox();

    const fresh = await runInstaller(server.base, home, [], { THOUGHTGATE_INSTALL_DIR: installDir });
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`checksum mismatch for ${file}`);
    expect(fresh.stderr).toContain("nothing was installed");
    expect(existsSync(installDir)).toBe(false);

    mkdirSync(installDir, { recursive: true });
    writeFileSync(binary, "#!/bin/sh\necho previous\n", { mode: 0o755 });
    const upgrade = await runInstaller(server.base, home, [], { THOUGHTGATE_INSTALL_DIR: installDir });
    expect(upgrade.code).toBe(1);
    expect(readFileSync(binary, "utf8")).toBe("#!/bin/sh\necho previous\n");
    expect(readdirSync(installDir)).toEqual(["thoughtgate"]);
  });

  test.each([
    ["FreeBSD", "amd64", "unsupported operating system: FreeBSD"],
    ["Linux", "riscv64", "unsupported architecture: riscv64 on Linux"],
    ["Darwin", "i386", "unsupported architecture: i386 on Darwin"],
  ])("refuses %s %s without downloading anything", async (unameS, unameM, message) => {
    await using server = serveRelease();
    const { home, installDir } = sandbox();
    const result = await runInstaller(server.base, home, [], {
      THOUGHTGATE_INSTALL_DIR: installDir,
      THOUGHTGATE_TEST_UNAME_S: unameS,
      THOUGHTGATE_TEST_UNAME_M: unameM,
    });
    expect({ code: result.code, stderr: result.stderr.trim() }).toEqual({ code: 1, stderr: expect.stringContaining(message) });
    expect(server.requests).toEqual(["install.sh"]);
    expect(existsSync(installDir)).toBe(false);
  });

  test("--version must match what the download reports", async () => {
    await using server = serveRelease();
    const { home, installDir, binary } = sandbox();
    const wrong = await runInstaller(server.base, home, ["--version", "9.9.9"], { THOUGHTGATE_INSTALL_DIR: installDir });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`asked for 9.9.9 but the download reports "thoughtgate ${release.version}`);
    expect(existsSync(binary)).toBe(false);

    const right = await runInstaller(server.base, home, [`--version=v${release.version}`], { THOUGHTGATE_INSTALL_DIR: installDir });
    expect(right.code).toBe(0);
    expect(existsSync(binary)).toBe(true);
  });

  test("an upgrade while a shim runs: the shim keeps its file and goes on answering, new starts get the new binary", async () => {
    await using server = serveRelease();
    const { home, installDir, binary } = sandbox();
    expect((await runInstaller(server.base, home, [], { THOUGHTGATE_INSTALL_DIR: installDir })).code).toBe(0);
    const shim = new RawAgent(["--server-id", "s", "--", ...fixture("scripted-server-fixture.ts")], process.env, binary);
    try {
      await shim.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
      const before = statSync(binary).ino;
      const upgrade = await runInstaller(server.base, home, [], { THOUGHTGATE_INSTALL_DIR: installDir });
      expect(upgrade.code).toBe(0);
      expect(upgrade.stdout).toContain(`replaced thoughtgate ${release.version}`);
      // A new file under the same name; the running shim still has the old one, now unlinked.
      expect(statSync(binary).ino).not.toBe(before);
      expect(readlinkSync(`/proc/${shim.proc.pid}/exe`)).toBe(`${binary} (deleted)`);
      expect(await shim.request(2, "ping")).toMatchObject({ id: 2, result: {} });
      expect((await run([binary, "--version"])).code).toBe(0);
      expect(readdirSync(installDir)).toEqual(["thoughtgate"]);
    } finally {
      if (shim.proc.exitCode === null) shim.proc.kill("SIGTERM");
      await shim.proc.exited;
    }
  });

  test("--modify-path edits one profile once; --uninstall removes the binary, and the line only with --modify-path", async () => {
    await using server = serveRelease();
    const { home } = sandbox();
    // The default install dir: ~/.local/bin.
    const binary = join(home, ".local", "bin", "thoughtgate");
    const bashrc = join(home, ".bashrc");
    writeFileSync(bashrc, "# mine\nalias ll='ls -l'\n");

    for (let i = 0; i < 2; i++) expect((await runInstaller(server.base, home, ["--modify-path"])).code).toBe(0);
    expect(readFileSync(bashrc, "utf8")).toBe(
      `# mine\nalias ll='ls -l'\n\nexport PATH="${dirname(binary)}:$PATH" # added by the thoughtgate installer\n`,
    );
    expect((await run(["bash", "-c", `. "${bashrc}" && thoughtgate --version`])).stdout).toStartWith(`thoughtgate ${release.version} `);

    const keepLine = await runInstaller(server.base, home, ["--uninstall"]);
    expect(keepLine.code).toBe(0);
    expect(keepLine.stdout).toContain(`removed ${binary}`);
    expect(keepLine.stdout).toContain(`${bashrc} still adds a directory to PATH`);
    expect(existsSync(binary)).toBe(false);
    expect(readFileSync(bashrc, "utf8")).toContain("# added by the thoughtgate installer");

    const again = await runInstaller(server.base, home, ["--uninstall", "--modify-path"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`no thoughtgate at ${binary}`);
    // Back to exactly what it was.
    expect(readFileSync(bashrc, "utf8")).toBe("# mine\nalias ll='ls -l'\n");
    // Uninstalling never downloads.
    expect(server.requests.filter((name) => name !== "install.sh").toSorted()).toEqual(["SHA256SUMS", "SHA256SUMS", hostAsset().file, hostAsset().file].toSorted());
  });
});
