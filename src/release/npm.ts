/**
 * The npm packages of a release: `thoughtgate`, a launcher (a POSIX sh script, `npm-launcher.sh`)
 * whose `optionalDependencies` name one `@thoughtgate/<os>-<arch>` package per platform, each
 * holding that platform's compiled binary and declaring `os`, `cpu` and (Linux) `libc`, so npm
 * installs only the one that runs here. Every package has the release's version, and the binaries
 * are the bytes of the release archives (SHA256SUMS). Build-time only: nothing in `src/cli.ts`
 * imports this.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSha256Sums, sha256Hex } from "./checksums.ts";
import type { ReleaseAsset } from "./formula.ts";

const NPM_SCOPE = "@thoughtgate";
const MAIN_PACKAGE = "thoughtgate";
const LAUNCHER_TEMPLATE = join(import.meta.dir, "npm-launcher.sh");

export type NpmTarget = Pick<ReleaseAsset, "os" | "arch" | "baseline">;

/** `linux-x64`, `darwin-x64-baseline`: the package's name in the scope and its folder in dist/npm. */
export function platformSlug({ os, arch, baseline }: NpmTarget): string {
  return `${os}-${arch}${baseline ? "-baseline" : ""}`;
}

export function platformPackageName(target: NpmTarget): string {
  return `${NPM_SCOPE}/${platformSlug(target)}`;
}

export type NpmMeta = { version: string; description: string; homepage: string; repository: string };

/**
 * The optional dependencies npm picks from by os/cpu/libc. The -baseline builds are published but
 * not listed: npm cannot tell an x64 CPU without AVX2 from one with it, so listing both would make
 * every x64 install download two 50 MB binaries; the launcher names the baseline package when the
 * CPU needs it.
 */
function mainPackageJson(meta: NpmMeta, targets: readonly NpmTarget[]): Record<string, unknown> {
  const optional = Object.fromEntries(
    targets
      .filter((t) => !t.baseline)
      .map((t) => [platformPackageName(t), meta.version])
      .toSorted(([a], [b]) => String(a).localeCompare(String(b))),
  );
  return {
    name: MAIN_PACKAGE,
    version: meta.version,
    description: meta.description,
    homepage: meta.homepage,
    repository: { type: "git", url: meta.repository },
    bin: { thoughtgate: "bin/thoughtgate" },
    files: ["bin/thoughtgate", "README.md"],
    // The launcher is a POSIX sh script and the builds are for these two; anywhere else npm refuses
    // with EBADPLATFORM rather than installing something that cannot run.
    os: ["darwin", "linux"],
    optionalDependencies: optional,
  };
}

function platformPackageJson(meta: NpmMeta, target: NpmTarget): Record<string, unknown> {
  const system = target.os === "darwin" ? "macOS" : "Linux (glibc)";
  const cpu = target.baseline ? "x86_64 CPUs without AVX2" : target.arch === "x64" ? "x86_64 with AVX2" : "arm64";
  return {
    name: platformPackageName(target),
    version: meta.version,
    description: `The thoughtgate binary for ${system} on ${cpu}. Install \`thoughtgate\`, which runs it.`,
    homepage: meta.homepage,
    repository: { type: "git", url: meta.repository },
    files: ["bin/thoughtgate"],
    os: [target.os],
    cpu: [target.arch],
    // Bun's Linux builds link against glibc: on musl (Alpine) npm skips the package, and the
    // launcher says why.
    ...(target.os === "linux" ? { libc: ["glibc"] } : {}),
    // Yarn's Plug'n'Play would otherwise keep the binary inside a zip, where it cannot be executed.
    preferUnplugged: true,
  };
}

export function renderLauncher(version: string, template = readFileSync(LAUNCHER_TEMPLATE, "utf8")): string {
  if (!/^[0-9A-Za-z.+-]+$/.test(version)) throw new Error(`npm: refusing version ${JSON.stringify(version)}`);
  if (!template.includes("@VERSION@")) throw new Error("npm: the launcher template has no @VERSION@");
  return template.replaceAll("@VERSION@", version);
}

function mainReadme(meta: NpmMeta): string {
  return `# thoughtgate

Governance between AI agents and their MCP servers: one binary that sits on the stdio pipe between an
agent and each MCP server, checks every JSON-RPC line, and audits every tool call.

\`\`\`sh
npx thoughtgate wrap -- claude      # or: npm install -g thoughtgate && thoughtgate wrap -- claude
\`\`\`

This package is a launcher: npm also installs the one \`${NPM_SCOPE}/<os>-<arch>\` package that holds the
compiled binary for your platform (Linux with glibc, macOS; x86_64, arm64), and \`thoughtgate\` runs it.
No Node.js or Bun is used at run time. Documentation: ${meta.homepage}
`;
}

export type NpmPackage = { name: string; dir: string; binaryBytes?: number };

/**
 * Write every package into `outDir` (emptied first): `thoughtgate/` and one folder per target,
 * named by `platformSlug`. `binaryFor` returns each target's binary.
 */
export function writeNpmPackages(outDir: string, meta: NpmMeta, targets: readonly NpmTarget[], binaryFor: (target: NpmTarget) => Uint8Array): NpmPackage[] {
  rmSync(outDir, { recursive: true, force: true });
  const packages: NpmPackage[] = [];
  const main = join(outDir, MAIN_PACKAGE);
  mkdirSync(join(main, "bin"), { recursive: true });
  writeJson(join(main, "package.json"), mainPackageJson(meta, targets));
  writeFileSync(join(main, "README.md"), mainReadme(meta));
  writeFileSync(join(main, "bin", "thoughtgate"), renderLauncher(meta.version), { mode: 0o755 });
  packages.push({ name: MAIN_PACKAGE, dir: main });
  for (const target of targets) {
    const dir = join(outDir, platformSlug(target));
    mkdirSync(join(dir, "bin"), { recursive: true });
    writeJson(join(dir, "package.json"), platformPackageJson(meta, target));
    const bytes = binaryFor(target);
    const binary = join(dir, "bin", "thoughtgate");
    writeFileSync(binary, bytes);
    // npm keeps the executable bit it finds when it packs; the binary is not a `bin` entry, so
    // nothing else would set it.
    chmodSync(binary, 0o755);
    packages.push({ name: platformPackageName(target), dir, binaryBytes: bytes.length });
  }
  return packages;
}

function writeJson(path: string, value: unknown) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The binary inside a release archive (`src/release/tar.ts` writes one ustar entry), after checking
 * the archive against SHA256SUMS: the npm packages must carry exactly the released bytes.
 */
export function binaryFromArchive(releaseDir: string, file: string): Uint8Array {
  const archive = new Uint8Array(readFileSync(join(releaseDir, file)));
  const expected = parseSha256Sums(readFileSync(join(releaseDir, "SHA256SUMS"), "utf8")).get(file);
  if (!expected) throw new Error(`npm: SHA256SUMS in ${releaseDir} has no ${file}`);
  if (sha256Hex(archive) !== expected) throw new Error(`npm: ${file} does not match SHA256SUMS`);
  const tar = Bun.gunzipSync(archive);
  const field = (offset: number, length: number) => new TextDecoder().decode(tar.subarray(offset, offset + length)).replace(/\0.*$/s, "").trim();
  if (field(0, 100) !== "thoughtgate" || field(156, 1) !== "0") throw new Error(`npm: ${file} does not start with the thoughtgate binary`);
  const size = Number.parseInt(field(124, 12), 8);
  if (!Number.isSafeInteger(size) || 512 + size > tar.length) throw new Error(`npm: ${file} has a bad size field`);
  return tar.slice(512, 512 + size);
}
