import { expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatSha256Sums, parseSha256Sums, sha256Hex } from "../../src/release/checksums.ts";
import { gzipTar } from "../../src/release/tar.ts";
import { tempDir } from "../support/harness.ts";

async function run(cmd: string[], cwd: string) {
  await using proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

test("system tar unpacks the archive to an executable with the exact bytes", async () => {
  using dir = tempDir();
  // Not a multiple of 512, so the padding path runs.
  const bytes = crypto.getRandomValues(new Uint8Array(70_001));
  writeFileSync(join(dir.path, "a.tar.gz"), gzipTar({ name: "thoughtgate", bytes, mtimeSeconds: 1_699_963_200 /* 2023-11-14 12:00 UTC: the same date in any time zone */ }));

  const listing = await run(["tar", "-tvzf", "a.tar.gz"], dir.path);
  expect(listing.stdout).toMatch(/^-rwxr-xr-x root\/root +70001 2023-11-14 \d\d:\d\d thoughtgate\n$/);
  expect(await run(["tar", "-xzf", "a.tar.gz"], dir.path)).toEqual({ code: 0, stdout: "", stderr: "" });
  expect(new Uint8Array(readFileSync(join(dir.path, "thoughtgate")))).toEqual(bytes);
  expect(statSync(join(dir.path, "thoughtgate")).mode & 0o777).toBe(0o755);
});

test("the same input gives the same archive, byte for byte", () => {
  const bytes = new TextEncoder().encode("#!/bin/sh\n");
  expect(sha256Hex(gzipTar({ name: "thoughtgate", bytes, mtimeSeconds: 0 }))).toBe(sha256Hex(gzipTar({ name: "thoughtgate", bytes, mtimeSeconds: 0 })));
});

test("SHA256SUMS round-trips and is what sha256sum -c accepts", async () => {
  using dir = tempDir();
  writeFileSync(join(dir.path, "b.tar.gz"), "bee");
  writeFileSync(join(dir.path, "a.tar.gz"), "ay");
  const sums = new Map([
    ["b.tar.gz", sha256Hex(new TextEncoder().encode("bee"))],
    ["a.tar.gz", sha256Hex(new TextEncoder().encode("ay"))],
  ]);
  const text = formatSha256Sums(sums);
  expect(text.split("\n")[0]).toEndWith("  a.tar.gz");
  expect(parseSha256Sums(text)).toEqual(sums);
  writeFileSync(join(dir.path, "SHA256SUMS"), text);
  expect((await run(["sha256sum", "-c", "SHA256SUMS"], dir.path)).stdout).toBe("a.tar.gz: OK\nb.tar.gz: OK\n");
  expect(() => parseSha256Sums("not a sum line\n")).toThrow("not a SHA256SUMS line");
});
