import { beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assetName, TARGETS } from "../../build.ts";
import { sha256Hex } from "../../src/release/checksums.ts";
import { renderFormula } from "../../src/release/formula.ts";
import { RELEASE_BUILD_TIMEOUT_MS, releaseSet, TEST_RELEASE_BASE, type ReleaseSet } from "../support/release.ts";

let release: ReleaseSet;
let formula: string;
beforeAll(async () => {
  release = await releaseSet();
  formula = readFileSync(join(release.dir, "thoughtgate.rb"), "utf8");
}, RELEASE_BUILD_TIMEOUT_MS);

test("the release holds one archive per target, and SHA256SUMS matches their bytes", () => {
  expect([...release.sums.keys()].toSorted()).toEqual(TARGETS.map(assetName).toSorted());
  for (const [file, sum] of release.sums) expect({ file, sum: sha256Hex(readFileSync(join(release.dir, file))) }).toEqual({ file, sum });
});

test("the formula passes ruby -c", async () => {
  await using proc = Bun.spawn(["ruby", "-c", join(release.dir, "thoughtgate.rb")], { stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: "Syntax OK\n", stderr: "" });
});

test("the formula names exactly the SHA256SUMS values, each next to its archive's URL under the configured base", () => {
  const pairs = [...formula.matchAll(/url "([^"]+)"\n\s*sha256 "([0-9a-f]{64})"/g)].map(([, url, sha]) => [url, sha]);
  const expected = [...release.sums].map(([file, sha]) => [`${TEST_RELEASE_BASE}/${file}`, sha]);
  expect(pairs.toSorted()).toEqual(expected.toSorted());
  expect(formula).toContain(`version "${release.version}"`);
  expect(formula).toContain('bin.install "thoughtgate"');
  expect(formula).toContain('shell_output("#{bin}/thoughtgate --version")');
});

test("the formula refuses a base URL that would break out of a Ruby string", () => {
  const assets = TARGETS.map((t) => ({ ...t, file: assetName(t), sha256: "0".repeat(64) }));
  const input = { version: "1.0.0", description: "d", homepage: "https://example.test", assets };
  expect(renderFormula({ ...input, releaseBase: "https://example.test/v1/" })).toContain('url "https://example.test/v1/thoughtgate-linux-x64.tar.gz"');
  expect(() => renderFormula({ ...input, releaseBase: 'https://example.test/"; system("x' })).toThrow("refusing URL");
  expect(() => renderFormula({ ...input, releaseBase: "https://example.test/#{`id`}" })).toThrow("refusing URL");
  expect(() => renderFormula({ ...input, releaseBase: "https://x.test", assets: assets.slice(1) })).toThrow("no linux-x64 asset");
});
