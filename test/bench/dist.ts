/**
 * `bun run bench:dist`: what the npm distribution costs (start-up through each launcher, package sizes). Needs the output of
 * `bun run build:npm` (dist/release and dist/npm).
 *
 * - start-up: `thoughtgate --version`, spawn → exit, run directly from the platform package, through
 *   the npm launcher (`<prefix>/bin/thoughtgate` after `npm install -g` of the packed tarballs),
 *   through a minimal Node.js launcher (what the launcher would cost as a Node script: spawnSync with
 *   inherited stdio, the shape esbuild's and Codex's take) and through `npx` (offline, its cache
 *   warm); interleaved rounds after warm-up, p50 and p90 of 20 runs each.
 *   `--runs N --no-npx` measures more runs without npx (seconds a run).
 * - sizes: each target's binary, release archive, npm tarball (`npm pack`) and unpacked package.
 *
 * The report goes to stdout as Markdown; progress to stderr. npm runs offline with a temporary cache.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../../package.json" with { type: "json" };
import { assetName, DEFAULT_NPM_DIR, DEFAULT_RELEASE_DIR, TARGETS } from "../../build.ts";
import { platformPackageName, platformSlug } from "../../src/release/npm.ts";
import { hostAsset } from "../support/release.ts";
import { percentile, progress, renderTable, type Row } from "./report.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  // --runs 200 --no-npx: enough runs to resolve the launcher's millisecond on a busy machine (npx takes seconds a run).
  options: { runs: { type: "string", default: "20" }, warmup: { type: "string", default: "3" }, "no-npx": { type: "boolean", default: false } },
  strict: true,
});
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
const ROOT = join(import.meta.dir, "..", "..");
const releaseDir = join(ROOT, DEFAULT_RELEASE_DIR);
const npmDir = join(ROOT, DEFAULT_NPM_DIR);
if (!existsSync(join(npmDir, "thoughtgate", "package.json")) || !existsSync(join(releaseDir, "SHA256SUMS"))) {
  console.error(`bench:dist needs ${DEFAULT_RELEASE_DIR} and ${DEFAULT_NPM_DIR}: run \`bun run build:npm\` first`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "thoughtgate-bench-dist-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const npmEnv = { HOME: work, PATH: process.env.PATH ?? "/usr/bin:/bin", npm_config_cache: join(work, ".npm"), npm_config_offline: "true", npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_loglevel: "error" };

async function run(cmd: string[], env: Record<string, string> = npmEnv) {
  await using proc = Bun.spawn(cmd, { cwd: work, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}:\n${stderr}`);
  return stdout;
}

// --- pack every package, install the host's ---------------------------------------------------------
type Packed = { name: string; filename: string; size: number; unpackedSize: number };
progress("npm pack of every package");
const packsDir = join(work, "packs");
mkdirSync(packsDir);
const dirs = ["thoughtgate", ...TARGETS.map(platformSlug)].map((name) => join(npmDir, name));
const halves = [dirs.filter((_, i) => i % 2 === 0), dirs.filter((_, i) => i % 2 === 1)];
const packed = new Map(
  (await Promise.all(halves.map(async (half) => JSON.parse(await run(["npm", "pack", "--json", "--pack-destination", packsDir, ...half])) as Packed[])))
    .flat()
    .map((p) => [p.name, p]),
);
const tarball = (name: string) => join(packsDir, packed.get(name)?.filename ?? `(${name} not packed)`);

const host = TARGETS.find((t) => t.bunTarget === hostAsset().target);
if (!host) throw new Error(`no release target for ${hostAsset().target}`);
const hostPackage = platformPackageName(host);
progress(`npm install -g thoughtgate ${hostPackage} (tarballs, offline)`);
const prefix = join(work, "prefix");
await run(["npm", "install", "-g", "--prefix", prefix, tarball("thoughtgate"), tarball(hostPackage)]);
const binary = join(prefix, "lib", "node_modules", hostPackage, "bin", "thoughtgate");
const launcher = join(prefix, "bin", "thoughtgate");

// The launcher written as a Node.js script instead, reduced to what any such launcher must do.
const nodeLauncher = join(work, "node-launcher.cjs");
writeFileSync(
  nodeLauncher,
  `const r = require("node:child_process").spawnSync(${JSON.stringify(binary)}, process.argv.slice(2), { stdio: "inherit" });
process.exitCode = r.status ?? 1;\n`,
);

const npx = ["npx", "--offline", "-p", tarball("thoughtgate"), "-p", tarball(hostPackage), "thoughtgate"];
if (!values["no-npx"]) {
  progress("npx once, to fill its cache");
  await run([...npx, "--version"]);
}

// --- start-up ---------------------------------------------------------------------------------------
const configs: Array<{ name: string; cmd: string[] }> = [
  { name: "binary, directly", cmd: [binary, "--version"] },
  { name: "npm launcher (sh)", cmd: [launcher, "--version"] },
  { name: "Node.js launcher", cmd: ["node", nodeLauncher, "--version"] },
  ...(values["no-npx"] ? [] : [{ name: "npx thoughtgate", cmd: [...npx, "--version"] }]),
];
const expected = `thoughtgate ${pkg.version} (${host.bunTarget})\n`;
for (const config of configs) {
  const out = await run(config.cmd);
  if (out !== expected) throw new Error(`${config.name} printed ${JSON.stringify(out)}, not ${JSON.stringify(expected)}`);
}

async function wallMs(cmd: string[]): Promise<number> {
  const started = performance.now();
  await using proc = Bun.spawn(cmd, { cwd: work, env: npmEnv, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const code = await proc.exited;
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}`);
  return elapsed;
}

progress(`start-up: ${WARMUP} warm-up and ${RUNS} measured runs per configuration, interleaved`);
const samples = new Map(configs.map((c) => [c.name, [] as number[]]));
for (let round = 0; round < WARMUP + RUNS; round++) {
  for (const config of configs) {
    const ms = await wallMs(config.cmd);
    if (round >= WARMUP) samples.get(config.name)?.push(ms);
  }
}

const direct = samples.get("binary, directly") ?? [];
const rows: Row[] = [];
for (const [q, label] of [[0.5, "p50"], [0.9, "p90"]] as const) {
  const base = percentile(direct, q);
  for (const config of configs) {
    const value = percentile(samples.get(config.name) ?? [], q);
    const isBase = config.name === "binary, directly";
    rows.push({
      figure: `thoughtgate --version, spawn → exit, ${label} of ${RUNS}`,
      config: config.name,
      value: `${value.toFixed(2)} ms`,
      baseline: isBase ? "(baseline)" : `${base.toFixed(2)} ms`,
      delta: isBase ? "" : `${value >= base ? "+" : "−"}${Math.abs(value - base).toFixed(2)} ms, ${(value / base).toFixed(2)}×`,
      target: "",
      result: "",
    });
  }
}

// --- sizes ----------------------------------------------------------------------------------------------
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const sizeRows = TARGETS.map((target) => {
  const p = packed.get(platformPackageName(target));
  const binaryBytes = statSync(join(npmDir, platformSlug(target), "bin", "thoughtgate")).size;
  return `| ${platformPackageName(target)} | ${mib(binaryBytes)} | ${mib(statSync(join(releaseDir, assetName(target))).size)} | ${mib(p?.size ?? 0)} | ${mib(p?.unpackedSize ?? 0)} |`;
});
const main = packed.get("thoughtgate");
const launcherBytes = readFileSync(join(npmDir, "thoughtgate", "bin", "thoughtgate")).length;

console.log(`## npm launcher and package sizes

- date: ${new Date().toISOString()}
- machine: ${navigator.hardwareConcurrency} cores, ${process.platform} ${process.arch}, bun ${Bun.version}, node ${(await run(["node", "--version"])).trim()}, npm ${(await run(["npm", "--version"])).trim()}; 1-minute load average ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]}
- packages: ${DEFAULT_NPM_DIR} (thoughtgate ${pkg.version}), packed with npm pack and installed offline with npm install -g into a temporary prefix; host package ${hostPackage}
- plan: ${WARMUP} warm-up and ${RUNS} measured runs of each configuration, interleaved; wall time from spawn to exit, stdout and stderr discarded

${renderTable(rows)}

| package | binary | release .tar.gz | npm .tgz | npm unpacked |
|---|---|---|---|---|
${sizeRows.join("\n")}
| thoughtgate (the launcher) | ${launcherBytes} B (bin/thoughtgate) | — | ${((main?.size ?? 0) / 1024).toFixed(1)} KiB | ${((main?.unpackedSize ?? 0) / 1024).toFixed(1)} KiB |
`);
