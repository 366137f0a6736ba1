/**
 * Compile `thoughtgate` into standalone binaries.
 *
 *   bun run build                       the host target → dist/thoughtgate
 *   bun run build:all [--out DIR]       every row of TARGETS → dist/release/ (or DIR):
 *                                       thoughtgate-<os>-<arch>[-baseline].tar.gz, SHA256SUMS,
 *                                       thoughtgate.rb (Homebrew formula), install.sh
 *   bun run build:npm [--from DIR] [--out DIR]
 *                                       the npm packages → dist/npm/ (or DIR): thoughtgate/ (the
 *                                       launcher) and one <os>-<arch>[-baseline]/ per target, holding
 *                                       the binaries of the release archives in --from (default: build
 *                                       them first, as build:all does, into dist/release/)
 *
 * Environment: THOUGHTGATE_RELEASE_BASE is the URL the formula downloads archives from (default: the
 * GitHub release of this version); SOURCE_DATE_EPOCH fixes the archives' mtime for reproducible
 * builds. Cross targets fetch their Bun runtime from the npm registry on first use (then cached).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };
import { formatSha256Sums, sha256Hex } from "./src/release/checksums.ts";
import { renderFormula, type ReleaseAsset } from "./src/release/formula.ts";
import { binaryFromArchive, writeNpmPackages, type NpmPackage } from "./src/release/npm.ts";
import { gzipTar } from "./src/release/tar.ts";

export type ReleaseTarget = {
  bunTarget: Bun.Build.CompileTarget;
  os: ReleaseAsset["os"];
  arch: ReleaseAsset["arch"];
  /** For x64 CPUs without AVX2 (Bun's default x64 build needs AVX2). */
  baseline: boolean;
  /**
   * Precompiled JavaScriptCore bytecode: start-up drops from ~20 ms to under 10 ms. Verified running
   * on linux-x64, linux-x64-baseline and (under qemu) linux-arm64; the darwin rows build but are
   * only run by the formula's `test do` on a Mac.
   */
  bytecode: boolean;
};

/** Every platform a release ships. The archive name is derived from os, arch and baseline. */
export const TARGETS = [
  { bunTarget: "bun-linux-x64", os: "linux", arch: "x64", baseline: false, bytecode: true },
  { bunTarget: "bun-linux-x64-baseline", os: "linux", arch: "x64", baseline: true, bytecode: true },
  { bunTarget: "bun-linux-arm64", os: "linux", arch: "arm64", baseline: false, bytecode: true },
  { bunTarget: "bun-darwin-x64", os: "darwin", arch: "x64", baseline: false, bytecode: true },
  { bunTarget: "bun-darwin-x64-baseline", os: "darwin", arch: "x64", baseline: true, bytecode: true },
  { bunTarget: "bun-darwin-arm64", os: "darwin", arch: "arm64", baseline: false, bytecode: true },
] as const satisfies readonly ReleaseTarget[];

export const DEFAULT_RELEASE_DIR = "dist/release";
export const DEFAULT_NPM_DIR = "dist/npm";

/**
 * The project's home, from package.json's `repository` (npm's provenance checks that field against
 * the repository that built the package). Every download URL derives from it: the formula's, the
 * npm packages', and install.sh's, which build.ts writes into the released copy.
 */
export const PROJECT_URL = pkg.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");

export function defaultReleaseBase(version: string): string {
  return `${PROJECT_URL}/releases/download/v${version}`;
}

export function assetName(target: Pick<ReleaseTarget, "os" | "arch" | "baseline">): string {
  return `thoughtgate-${target.os}-${target.arch}${target.baseline ? "-baseline" : ""}.tar.gz`;
}

export type Target = {
  bunTarget: Bun.Build.CompileTarget | "host";
  outfile: string;
  bytecode?: boolean;
  /** Code run before any module (scripts/mutation.ts selects the mutant a test run builds in). */
  banner?: string;
  /** The machine-wide settings directory baked into the binary (default /etc/thoughtgate): a test's own build only. */
  machineDir?: string;
};

const HOST_TARGET: Target = { bunTarget: "host", outfile: "dist/thoughtgate", bytecode: true };

export async function compileTarget(target: Target, version = pkg.version): Promise<string> {
  const targetName = target.bunTarget === "host" ? `bun-${process.platform}-${process.arch}` : target.bunTarget;
  const result = await Bun.build({
    entrypoints: ["./src/cli.ts"],
    minify: true,
    sourcemap: "none",
    // Bytecode for ES modules needs an explicit format (the CLI uses top-level await, so not CommonJS).
    format: "esm",
    bytecode: target.bytecode ?? false,
    // Each module loaded with import() (a subcommand, Cedar, the OTLP exporter) is a chunk of its
    // own in the binary, read only when imported. In one chunk, the exporter's bytecode alone cost
    // every shim 0.4 MB more memory at start even with tracing off (measured: anonymous memory of
    // an idle shim 6.3 → 6.7 MB one chunk, 5.8 MB split; start-up CPU 18 → 16 ms).
    splitting: true,
    ...(target.banner === undefined ? {} : { banner: target.banner }),
    compile: {
      ...(target.bunTarget === "host" ? {} : { target: target.bunTarget }),
      outfile: target.outfile,
      // A user's .env or bunfig.toml next to where they run us must not change the binary's behaviour.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    define: {
      THOUGHTGATE_VERSION: JSON.stringify(version),
      THOUGHTGATE_TARGET: JSON.stringify(targetName),
      ...(target.machineDir === undefined ? {} : { THOUGHTGATE_MACHINE_DIR: JSON.stringify(target.machineDir) }),
    },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`build failed for ${targetName}`);
  }
  if (!existsSync(target.outfile) || statSync(target.outfile).size === 0) throw new Error(`build for ${targetName} wrote no ${target.outfile}`);
  return target.outfile;
}

export type ReleaseOptions = { outDir: string; version?: string; releaseBase?: string; mtimeSeconds?: number };
export type BuiltAsset = ReleaseAsset & { bunTarget: string; binaryBytes: number; archiveBytes: number };

/** Build every target, archive each, and write SHA256SUMS, the formula and the installer next to them. */
export async function buildRelease({
  outDir,
  version = pkg.version,
  releaseBase = defaultReleaseBase(version),
  mtimeSeconds = Math.floor(Date.now() / 1000),
}: ReleaseOptions): Promise<BuiltAsset[]> {
  const staging = join(outDir, ".staging");
  mkdirSync(staging, { recursive: true });
  // Stale archives from an older table must not end up next to a new SHA256SUMS.
  for (const name of readdirSync(outDir)) if (/^thoughtgate-.*\.tar\.gz$/.test(name)) rmSync(join(outDir, name));

  const assets: BuiltAsset[] = [];
  try {
    for (const target of TARGETS) {
      const started = performance.now();
      const binary = await compileTarget({ bunTarget: target.bunTarget, outfile: join(staging, target.bunTarget, "thoughtgate"), bytecode: target.bytecode }, version);
      const bytes = new Uint8Array(await Bun.file(binary).arrayBuffer());
      const archive = gzipTar({ name: "thoughtgate", bytes, mtimeSeconds });
      const file = assetName(target);
      await Bun.write(join(outDir, file), archive);
      rmSync(binary);
      assets.push({ ...target, file, sha256: sha256Hex(archive), binaryBytes: bytes.length, archiveBytes: archive.length });
      console.error(`built ${file} in ${Math.round(performance.now() - started)} ms`);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }

  await Bun.write(join(outDir, "SHA256SUMS"), formatSha256Sums(new Map(assets.map((a) => [a.file, a.sha256]))));
  await Bun.write(join(outDir, "thoughtgate.rb"), renderFormula({ version, description: pkg.description, homepage: PROJECT_URL, releaseBase, assets }));
  writeFileSync(join(outDir, "install.sh"), releasedInstaller(readFileSync(join(import.meta.dir, "install.sh"), "utf8")), { mode: 0o755 });
  return assets;
}

/** install.sh with its release URL set from PROJECT_URL (the repository's copy holds the same value; a test keeps them equal). */
export function releasedInstaller(text: string): string {
  const line = /^RELEASES_URL="[^"]*"$/m;
  if (!line.test(text)) throw new Error("install.sh has no RELEASES_URL line");
  return text.replace(line, `RELEASES_URL="${PROJECT_URL}/releases"`);
}

/**
 * The npm packages of the release in `releaseDir`, written to `outDir`. The archives' binaries are
 * unpacked (after checking SHA256SUMS), never rebuilt; the formula names the version they were
 * built as, which must be this one.
 */
export function buildNpm({ releaseDir, outDir, version = pkg.version }: { releaseDir: string; outDir: string; version?: string }): NpmPackage[] {
  const formula = join(releaseDir, "thoughtgate.rb");
  const built = existsSync(formula) ? /^ {2}version "([^"]+)"$/m.exec(readFileSync(formula, "utf8"))?.[1] : undefined;
  if (built !== version) throw new Error(`${releaseDir} holds release ${built ?? "(none)"}, not ${version}: run \`bun run build:all\` first`);
  return writeNpmPackages(outDir, { version, description: pkg.description, homepage: PROJECT_URL, repository: pkg.repository.url }, TARGETS, (target) =>
    binaryFromArchive(releaseDir, assetName(target)),
  );
}

function sizeTable(assets: readonly BuiltAsset[]): string {
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  const rows = assets.map((a) => `| ${a.bunTarget} | ${mib(a.binaryBytes)} | ${mib(a.archiveBytes)} |`);
  return ["| target | binary | .tar.gz |", "|---|---|---|", ...rows].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { all: { type: "boolean" }, npm: { type: "boolean" }, out: { type: "string" }, from: { type: "string" } },
    strict: true,
  });
  const started = performance.now();
  const release = async (outDir: string) => {
    const sourceDateEpoch = process.env.SOURCE_DATE_EPOCH;
    if (sourceDateEpoch && !/^\d+$/.test(sourceDateEpoch)) throw new Error(`SOURCE_DATE_EPOCH must be whole seconds, got ${JSON.stringify(sourceDateEpoch)}`);
    const assets = await buildRelease({
      outDir,
      releaseBase: process.env.THOUGHTGATE_RELEASE_BASE || undefined,
      mtimeSeconds: sourceDateEpoch ? Number(sourceDateEpoch) : undefined,
    });
    console.error(`${sizeTable(assets)}\nwrote ${assets.length} archives, SHA256SUMS, thoughtgate.rb and install.sh to ${outDir} in ${Math.round(performance.now() - started)} ms`);
  };
  try {
    if (values.all && values.npm) throw new Error("--all and --npm are separate steps: build:all, then build:npm --from DIR");
    if (values.from !== undefined && !values.npm) throw new Error("--from only applies with --npm");
    if (values.all) {
      await release(values.out ?? DEFAULT_RELEASE_DIR);
    } else if (values.npm) {
      const releaseDir = values.from ?? DEFAULT_RELEASE_DIR;
      if (values.from === undefined) await release(releaseDir);
      const outDir = values.out ?? DEFAULT_NPM_DIR;
      const packages = buildNpm({ releaseDir, outDir });
      console.error(`wrote ${packages.length} npm packages (${packages.map((p) => p.name).join(", ")}) at ${pkg.version} to ${outDir}`);
    } else {
      if (values.out !== undefined) throw new Error("--out only applies with --all or --npm");
      const outfile = await compileTarget(HOST_TARGET);
      console.error(`built ${outfile} in ${Math.round(performance.now() - started)} ms`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
