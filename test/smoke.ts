/**
 * A release binary's smoke test, run on the machine it was built for (CI: the darwin-arm64 archive
 * on an Apple silicon Mac, where the Linux test suite cannot run it):
 *
 *   bun run smoke ARCHIVE_OR_BINARY [--npm DIST_NPM_DIR]
 *
 * It checks that `--version` names this version and this machine's target, that `doctor` evaluates
 * Cedar with the engine embedded in the binary, and that `shim` proxies a governed tool call; with
 * --npm, that the same binary runs through its npm packages (packed, installed offline into a
 * temporary prefix, started by the launcher). Everything runs with a temporary HOME.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), options: { npm: { type: "string" } }, allowPositionals: true, strict: true });
const input = positionals[0];
if (!input || positionals.length > 1) {
  console.error("usage: bun run smoke ARCHIVE_OR_BINARY [--npm DIST_NPM_DIR]");
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "thoughtgate-smoke-"));
const env = { HOME: work, PATH: process.env.PATH ?? "/usr/bin:/bin", npm_config_cache: join(work, ".npm"), npm_config_offline: "true", npm_config_update_notifier: "false", npm_config_loglevel: "error" };
const target = `bun-${process.platform}-${process.arch}`;

async function run(cmd: string[], stdin?: string) {
  await using proc = Bun.spawn(cmd, { cwd: work, env, stdin: stdin === undefined ? "ignore" : new Blob([stdin]), stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

/** Send `lines`, read until the answer to id 2, then close stdin (the agent's EOF) and wait for the exit. */
async function shimRoundTrip(cmd: string[], lines: unknown[]) {
  await using proc = Bun.spawn(cmd, { cwd: work, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  for (const line of lines) proc.stdin.write(`${JSON.stringify(line)}\n`);
  proc.stdin.flush();
  const stderr = new Response(proc.stderr).text();
  let buffered = "";
  let answer: unknown;
  for await (const chunk of proc.stdout) {
    buffered += new TextDecoder().decode(chunk);
    const found = buffered.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { id?: number; result?: unknown }).find((a) => a.id === 2);
    if (found) {
      answer = found.result ?? found;
      break;
    }
  }
  proc.stdin.end();
  return { code: await proc.exited, answer, stderr: await stderr };
}

function check(ok: boolean, what: string, detail: unknown) {
  if (!ok) throw new Error(`${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  console.log(`smoke: ok  ${what}`);
}

async function checkVersion(binary: string, how: string) {
  const version = await run([binary, "--version"]);
  // The x64 machine may run the -baseline build; the version line names the build target.
  check(version.code === 0 && version.stdout.startsWith(`thoughtgate ${pkg.version} (${target}`), `${how} --version is ${pkg.version} for ${target}`, version);
}

try {
  let binary = resolve(input);
  if (input.endsWith(".tar.gz")) {
    const untar = await run(["tar", "-xzf", binary, "-C", work, "thoughtgate"]);
    check(untar.code === 0, `unpacked ${input}`, untar);
    binary = join(work, "thoughtgate");
  }
  await checkVersion(binary, "binary");

  const doctor = await run([binary, "doctor", "--json"]);
  const cedar = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; data: { embedded?: boolean } }> }).checks.find((c) => c.id === "cedar");
  check(cedar?.status === "pass" && cedar.data.embedded === true, "doctor: the embedded Cedar engine decides", cedar ?? doctor);

  const server = [process.execPath, resolve(import.meta.dir, "fixtures", "scripted-server-fixture.ts")];
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "smoke", version: "1" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { message: "smoke" } } },
  ];
  const shim = await shimRoundTrip([binary, "shim", "--server-id", "smoke", "--", ...server], lines);
  check(
    shim.code === 0 && JSON.stringify(shim.answer) === JSON.stringify({ content: [{ type: "text", text: '{"message":"smoke"}' }] }),
    "shim: a governed tools/call round trip",
    shim,
  );

  if (values.npm) {
    const npmDir = resolve(values.npm);
    const slugs = [`${process.platform}-${process.arch}`, `${process.platform}-${process.arch}-baseline`];
    const slug = slugs.find((s) => Bun.file(join(npmDir, s, "bin", "thoughtgate")).size === readFileSync(binary).length) ?? slugs[0];
    const pack = await run(["npm", "pack", "--json", "--pack-destination", work, join(npmDir, "thoughtgate"), join(npmDir, slug ?? "")]);
    check(pack.code === 0, `npm pack thoughtgate and ${slug}`, pack.stderr);
    const tarballs = (JSON.parse(pack.stdout) as Array<{ filename: string }>).map((p) => join(work, p.filename));
    const prefix = join(work, "prefix");
    const install = await run(["npm", "install", "-g", "--prefix", prefix, ...tarballs]);
    check(install.code === 0, "npm install -g of the tarballs", install.stderr);
    await checkVersion(join(prefix, "bin", "thoughtgate"), "npm launcher");
  }
  console.log(`smoke: all checks passed for ${input}`);
} catch (error) {
  console.error(`smoke: FAILED ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
