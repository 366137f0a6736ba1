/**
 * The npm packages for tests, made once per `bun test` process from the release set that
 * support/release.ts builds (never a second build of every target): `build.ts --npm --from`, then
 * `npm pack` of each. npm runs offline with a temporary cache: no test reaches a registry.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { compileTarget, PROJECT_URL, TARGETS } from "../../build.ts";
import { platformPackageName, platformSlug, writeNpmPackages } from "../../src/release/npm.ts";
import { ROOT } from "./harness.ts";
import { hostAsset, releaseSet } from "./release.ts";

export type Packed = { name: string; version: string; tarball: string; size: number; unpackedSize: number };
export type NpmSet = { packagesDir: string; version: string; packs: Map<string, Packed> };

export type Run = { code: number; stdout: string; stderr: string };

export async function run(cmd: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<Run> {
  // process.env as this test process sees it, unless told otherwise: without `env`, Bun.spawn passes
  // the environment the test run started with, and a state dir set since would not be shared.
  await using proc = Bun.spawn(cmd, { env: process.env, ...options, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

function scratch(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** npm's environment: its own cache and config under `home`, offline, quiet. */
export function npmEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    npm_config_cache: join(home, ".npm"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    npm_config_loglevel: "error",
    ...extra,
  };
}

/** `npm pack` of each directory (two npm processes at a time), returning what npm reports. */
async function pack(dirs: string[], destination: string, home: string): Promise<Packed[]> {
  const halves = [dirs.filter((_, i) => i % 2 === 0), dirs.filter((_, i) => i % 2 === 1)].filter((half) => half.length > 0);
  const results = await Promise.all(
    halves.map(async (half) => {
      const result = await run(["npm", "pack", "--json", "--pack-destination", destination, ...half], { env: npmEnv(home) });
      if (result.code !== 0) throw new Error(`npm pack exited ${result.code}:\n${result.stderr}`);
      return JSON.parse(result.stdout) as Array<{ name: string; version: string; filename: string; size: number; unpackedSize: number }>;
    }),
  );
  return results.flat().map((p) => ({ name: p.name, version: p.version, tarball: join(destination, p.filename), size: p.size, unpackedSize: p.unpackedSize }));
}

let building: Promise<NpmSet> | undefined;

export function npmSet(): Promise<NpmSet> {
  building ??= buildSet();
  return building;
}

async function buildSet(): Promise<NpmSet> {
  const release = await releaseSet();
  const root = scratch("thoughtgate-npm-");
  const packagesDir = join(root, "packages");
  const built = await run([process.execPath, "run", join(ROOT, "build.ts"), "--npm", "--from", release.dir, "--out", packagesDir], { env: { ...process.env } });
  if (built.code !== 0) throw new Error(`build.ts --npm exited ${built.code}:\n${built.stderr}`);
  const packsDir = join(root, "packs");
  mkdirSync(packsDir);
  const dirs = ["thoughtgate", ...TARGETS.map(platformSlug)].map((name) => join(packagesDir, name));
  const packs = await pack(dirs, packsDir, root);
  return { packagesDir, version: release.version, packs: new Map(packs.map((p) => [p.name, p])) };
}

/** The platform package npm would pick on this machine (by CPU: baseline without AVX2). */
export function hostPackageName(): string {
  const target = TARGETS.find((t) => t.bunTarget === hostAsset().target);
  if (!target) throw new Error(`no release target for ${hostAsset().target}`);
  return platformPackageName(target);
}

/** The next patch version: what an upgrade installs. */
export const UPGRADE_VERSION = pkg.version.replace(/^(\d+)\.(\d+)\.(\d+).*$/, (_, major, minor, patch) => `${major}.${minor}.${Number(patch) + 1}`);

let upgrading: Promise<NpmSet> | undefined;

/** `thoughtgate` and the host's platform package at UPGRADE_VERSION: one more host build, packed. */
export function upgradeSet(): Promise<NpmSet> {
  upgrading ??= buildUpgrade();
  return upgrading;
}

async function buildUpgrade(): Promise<NpmSet> {
  const target = TARGETS.find((t) => t.bunTarget === hostAsset().target);
  if (!target) throw new Error(`no release target for ${hostAsset().target}`);
  const root = scratch("thoughtgate-npm-upgrade-");
  const binary = await compileTarget({ bunTarget: target.bunTarget, outfile: join(root, "thoughtgate"), bytecode: target.bytecode }, UPGRADE_VERSION);
  const packagesDir = join(root, "packages");
  const meta = { version: UPGRADE_VERSION, description: pkg.description, homepage: PROJECT_URL, repository: pkg.repository.url };
  writeNpmPackages(packagesDir, meta, [target], () => new Uint8Array(readFileSync(binary)));
  const packsDir = join(root, "packs");
  mkdirSync(packsDir);
  const packs = await pack([join(packagesDir, "thoughtgate"), join(packagesDir, platformSlug(target))], packsDir, root);
  return { packagesDir, version: UPGRADE_VERSION, packs: new Map(packs.map((p) => [p.name, p])) };
}

/** `npm install -g` of tarballs into `prefix`, offline (optional dependencies not given are skipped). */
export async function installGlobal(prefix: string, tarballs: string[], home: string, extra: string[] = []): Promise<Run> {
  const result = await run(["npm", "install", "-g", "--prefix", prefix, ...extra, ...tarballs], { env: npmEnv(home) });
  if (result.code !== 0) throw new Error(`npm install -g exited ${result.code}:\n${result.stderr}`);
  return result;
}
