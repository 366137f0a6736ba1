/**
 * The npm packages as users get them: `build.ts --npm` from the release set, `npm pack` of every
 * package, then `npm install -g` of the tarballs into a temporary prefix and `npx` of them, offline.
 * `thoughtgate` there is the launcher (a sh script) that execs the platform package's binary.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assetName, TARGETS } from "../../build.ts";
import { binaryFromArchive, platformPackageName } from "../../src/release/npm.ts";
import { asArm64 } from "../support/arm64.ts";
import { EVERYTHING_SERVER, fixture, isAlive, tempDir, waitFor } from "../support/harness.ts";
import { hostPackageName, installGlobal, npmEnv, npmSet, run, UPGRADE_VERSION, upgradeSet, type NpmSet } from "../support/npm.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { hostAsset, RELEASE_BUILD_TIMEOUT_MS, releaseSet, type ReleaseSet } from "../support/release.ts";

setDefaultTimeout(120_000);

let release: ReleaseSet;
let npm: NpmSet;
const scratch = tempDir("thoughtgate-npm-e2e-");
afterAll(() => scratch[Symbol.dispose]());
beforeAll(async () => {
  release = await releaseSet();
  npm = await npmSet();
}, RELEASE_BUILD_TIMEOUT_MS);

const tarball = (set: NpmSet, name: string) => {
  const packed = set.packs.get(name);
  if (!packed) throw new Error(`${name} was not packed`);
  return packed.tarball;
};

let prefixes = 0;
/** A fresh prefix (and npm home) with these packages installed from their tarballs. */
async function prefixWith(names: string[], extra: string[] = [], set: NpmSet = npm) {
  const root = join(scratch.path, `prefix-${++prefixes}`);
  mkdirSync(root);
  const prefix = join(root, "prefix");
  await installGlobal(prefix, names.map((name) => tarball(set, name)), root, extra);
  return { root, prefix, launcher: join(prefix, "bin", "thoughtgate") };
}

const WRAP_CONFIG = `{ "mcpServers": { "everything": { "command": ${JSON.stringify(EVERYTHING_SERVER[0])}, "args": ${JSON.stringify(EVERYTHING_SERVER.slice(1))} } } }\n`;
const POLICY = "schema: 1\ngovernance:\n  rules: [{ id: no-env, match: get-env, action: deny }]\n";

/** `thoughtgate wrap -- <fake agent>` through `cmd` (the launcher, maybe wrapped); the agent writes `report`. */
function startWrap(cmd: string[], dir: string, agentArgs: string[]) {
  const config = join(dir, "mcp.json");
  const policy = join(dir, "thoughtgate.yaml");
  const report = join(dir, "report.json");
  writeFileSync(config, WRAP_CONFIG);
  writeFileSync(policy, POLICY);
  const proc = Bun.spawn(
    [...cmd, "wrap", "--agent-type", "custom", "--config-path", config, "--thoughtgate-config", policy, "--", ...fixture("wrap-agent-fixture.ts", config, report, ...agentArgs)],
    // process.env as this process sees it (Bun.spawn without env would pass the environment the test
    // run started with, not what the preload and other tests set): the pin's place follows it.
    { cwd: dir, env: process.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  const stderr = new Response(proc.stderr).text();
  const seen = () => (existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as Record<string, any>) : null);
  return { proc, config, stderr, seen, [Symbol.asyncDispose]: async () => {
    if (proc.exitCode === null) proc.kill("SIGTERM");
    await proc.exited;
  } };
}

describe("the npm packages", () => {
  test("every package packs at the release's version; each platform package holds its archive's binary and says where it runs", () => {
    const names = ["thoughtgate", ...TARGETS.map(platformPackageName)];
    expect([...npm.packs.keys()].toSorted()).toEqual(names.toSorted());
    for (const packed of npm.packs.values()) expect({ name: packed.name, version: packed.version }).toEqual({ name: packed.name, version: release.version });

    const main = JSON.parse(readFileSync(join(npm.packagesDir, "thoughtgate", "package.json"), "utf8"));
    expect(main.bin).toEqual({ thoughtgate: "bin/thoughtgate" });
    expect(main.optionalDependencies).toEqual(Object.fromEntries(TARGETS.filter((t) => !t.baseline).map((t) => [platformPackageName(t), release.version])));
    for (const target of TARGETS) {
      const dir = join(npm.packagesDir, platformPackageName(target).replace("@thoughtgate/", ""));
      expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))).toMatchObject({
        os: [target.os],
        cpu: [target.arch],
        ...(target.os === "linux" ? { libc: ["glibc"] } : {}),
      });
      const bytes = new Uint8Array(readFileSync(join(dir, "bin", "thoughtgate")));
      expect(Bun.hash(bytes)).toBe(Bun.hash(binaryFromArchive(release.dir, assetName(target))));
    }
  });

  test("npm install -g of the tarballs: thoughtgate --version runs the platform binary through the launcher", async () => {
    const { prefix, launcher } = await prefixWith(["thoughtgate", hostPackageName()]);
    expect(readlinkSync(launcher)).toBe("../lib/node_modules/thoughtgate/bin/thoughtgate");
    expect(await run([launcher, "--version"])).toEqual({ code: 0, stdout: `thoughtgate ${release.version} (${hostAsset().target})\n`, stderr: "" });
    // Exit codes pass through: a usage error is 2 whether or not the launcher ran it.
    expect((await run([launcher, "no-such-command"])).code).toBe(2);
    expect(existsSync(join(prefix, "lib", "node_modules", hostPackageName(), "bin", "thoughtgate"))).toBe(true);

    // doctor, with the launcher first on PATH: one install, not another thoughtgate shadowing this one.
    const doctor = await run([launcher, "doctor", "--json"], { env: { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH}` } });
    const binary = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; details: string[]; data: Record<string, unknown> }> }).checks.find((c) => c.id === "binary");
    expect(binary?.data).toMatchObject({ onPath: launcher, shadowed: false, npm: { platformPackage: hostPackageName(), launcher: realpathSync(launcher) } });
    expect(binary?.details).toContain(`installed with npm: ${hostPackageName()}, launched by ${realpathSync(launcher)}`);
  });

  test("the launcher execs the binary: the process the agent started is the binary itself, speaking on its stdin and stdout", async () => {
    const { prefix, launcher } = await prefixWith(["thoughtgate", hostPackageName()]);
    const agent = new RawAgent(["--server-id", "s", "--", ...fixture("scripted-server-fixture.ts")], process.env, launcher);
    try {
      const answer = await agent.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
      expect(answer.result?.serverInfo?.name).toBe("scripted");
      // Same pid, now running the platform binary: signals sent to it reach the binary, not a wrapper.
      expect(readlinkSync(`/proc/${agent.proc.pid}/exe`)).toBe(realpathSync(join(prefix, "lib", "node_modules", hostPackageName(), "bin", "thoughtgate")));
      agent.proc.kill("SIGTERM");
      expect(await agent.exit()).toBe(0);
    } finally {
      if (agent.proc.exitCode === null) agent.proc.kill("SIGKILL");
      await agent.proc.exited;
    }
  });

  test("thoughtgate wrap -- <agent> through the launcher: governed calls, the agent's exit code, the config restored; the shim is a pin of the npm binary", async () => {
    const { prefix, launcher } = await prefixWith(["thoughtgate", hostPackageName()]);
    using dir = tempDir();
    await using wrap = startWrap([launcher], dir.path, ["--call", 'echo:{"message":"hi"}', "--call", "get-env", "--exit", "7"]);
    expect(await wrap.proc.exited).toBe(7);
    const seen = wrap.seen();
    expect(seen?.results.echo).toEqual({ ok: [{ type: "text", text: "Echo: hi" }] });
    expect(seen?.results["get-env"]).toMatchObject({ code: -32014, data: { rule_id: "no-env" } });
    // Not the npm path (which an upgrade replaces) but the session's hard link to the same file.
    expect(seen?.command).toStartWith(join(process.env.XDG_STATE_HOME ?? "", "thoughtgate", "bin"));
    expect(statSync(seen?.command).ino).toBe(statSync(join(prefix, "lib", "node_modules", hostPackageName(), "bin", "thoughtgate")).ino);
    expect(readFileSync(wrap.config, "utf8")).toBe(WRAP_CONFIG);
  });

  test("a prefix without the platform package: the launcher names the missing package and the fix", async () => {
    // Offline, npm cannot fetch the optional dependency and installs the launcher alone, as with --omit=optional.
    const { launcher } = await prefixWith(["thoughtgate"]);
    const result = await run([launcher, "--version"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`thoughtgate: error: ${hostPackageName().replace("-baseline", "")}`);
    expect(result.stderr).toContain("--omit=optional");
    expect(result.stderr).toContain(`fix: npm install -g thoughtgate@${release.version} --include=optional`);
  });

  test("npx of the packed tarballs runs thoughtgate", async () => {
    using home = tempDir();
    const result = await run(["npx", "--yes", "-p", tarball(npm, "thoughtgate"), "-p", tarball(npm, hostPackageName()), "thoughtgate", "--version"], {
      cwd: home.path,
      env: npmEnv(home.path),
    });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `thoughtgate ${release.version} (${hostAsset().target})\n` });
  });
});

describe.skipIf(process.arch !== "x64")("the npm packages on linux-arm64, under qemu", () => {
  test("the launcher picks @thoughtgate/linux-arm64: --version, and wrap -- <agent> with arm64 shims", async () => {
    // --force: npm would refuse an arm64 package on this x64 machine; the launcher decides by /proc.
    const { launcher } = await prefixWith(["thoughtgate", "@thoughtgate/linux-arm64"], ["--force"]);
    using dir = tempDir();
    expect(await run(asArm64([launcher, "--version"], dir.path))).toEqual({ code: 0, stdout: `thoughtgate ${release.version} (bun-linux-arm64)\n`, stderr: "" });

    await using wrap = startWrap(asArm64([launcher], dir.path), dir.path, ["--call", 'echo:{"message":"arm"}', "--exit", "3"]);
    expect(await wrap.proc.exited).toBe(3);
    expect(wrap.seen()?.results.echo).toEqual({ ok: [{ type: "text", text: "Echo: arm" }] });
    expect(readFileSync(wrap.config, "utf8")).toBe(WRAP_CONFIG);
  }, 240_000);
});

describe("npm upgrades mid-session", () => {
  test("npm install -g of a newer version: a running shim keeps its binary, a running wrap keeps its version for new shims, doctor says so", async () => {
    const next = await upgradeSet();
    const { prefix, launcher } = await prefixWith(["thoughtgate", hostPackageName()]);
    const npmBinary = join(prefix, "lib", "node_modules", hostPackageName(), "bin", "thoughtgate");

    // A shim an agent config names by the npm path, and a wrap session, both running the old version.
    const shim = new RawAgent(["--server-id", "s", "--", ...fixture("scripted-server-fixture.ts")], process.env, launcher);
    using dir = tempDir();
    await using wrap = startWrap([launcher], dir.path, ["--wait"]);
    try {
      await shim.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
      await waitFor(() => wrap.seen()?.state === "ready", "the wrapped agent to be ready", 60_000);
      const before = statSync(npmBinary).ino;

      await installGlobal(prefix, [tarball(next, "thoughtgate"), tarball(next, hostPackageName())], join(prefix, ".."));

      expect(statSync(npmBinary).ino).not.toBe(before);
      expect((await run([launcher, "--version"])).stdout).toStartWith(`thoughtgate ${UPGRADE_VERSION} `);
      // The running shim still has the old file (now deleted from the install) and still answers.
      expect(readlinkSync(`/proc/${shim.proc.pid}/exe`)).toEndWith(" (deleted)");
      expect(await shim.request(2, "ping")).toMatchObject({ id: 2, result: {} });
      // The wrap's configs name its pin, which still runs the version the session started with.
      expect((await run([wrap.seen()?.command, "--version"])).stdout).toStartWith(`thoughtgate ${release.version} `);

      const doctor = await run([launcher, "doctor", "--json"]);
      const check = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; details: string[]; data: any }> }).checks.find((c) => c.id === "running-wraps");
      expect(check).toMatchObject({ status: "warn", data: { version: UPGRADE_VERSION, sessions: [{ pid: wrap.proc.pid, version: release.version, sameAsThis: false }] } });
      expect(check?.details.join("\n")).toContain(`this binary (${UPGRADE_VERSION}) is newer than ${release.version}, which a running wrap uses: an upgrade made while it runs`);

      wrap.proc.kill("SIGTERM");
      await wrap.proc.exited;
      expect(readFileSync(wrap.config, "utf8")).toBe(WRAP_CONFIG);
    } finally {
      if (shim.proc.exitCode === null) shim.proc.kill("SIGTERM");
      await shim.proc.exited;
      const agentPid = wrap.seen()?.pid;
      if (agentPid && isAlive(agentPid)) process.kill(agentPid, "SIGKILL");
    }
  }, 300_000);
});
