import { afterEach, beforeEach, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../src/core/atomic-write.ts";
import { tempDir } from "../support/harness.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir[Symbol.dispose]());

test("atomic write replaces the content, keeps the file's mode and leaves no temp file", () => {
  const file = join(dir.path, "mcp.json");
  writeFileSync(file, "{}");
  chmodSync(file, 0o640);
  writeFileAtomic(file, '{"a": 1}\n');
  expect({ text: readFileSync(file, "utf8"), mode: statSync(file).mode & 0o7777, files: readdirSync(dir.path) }).toEqual({ text: '{"a": 1}\n', mode: 0o640, files: ["mcp.json"] });
});

test("a symlink at the target is refused and nothing is written through it (a config is resolved by its guard, not here)", () => {
  const real = join(dir.path, "dotfiles", "settings.json");
  mkdirSync(join(dir.path, "dotfiles"));
  writeFileSync(real, "{}");
  const link = join(dir.path, "settings.json");
  symlinkSync(real, link);
  expect(() => writeFileAtomic(link, "{ }")).toThrow(`refusing to write ${link}: it is a symbolic link, not a regular file`);
  expect({ isLink: lstatSync(link).isSymbolicLink(), target: readFileSync(real, "utf8"), files: readdirSync(dir.path).toSorted() }).toEqual({ isLink: true, target: "{}", files: ["dotfiles", "settings.json"] });
});

test("a directory at the target is an IO error that leaves the target and the directory as they were", () => {
  const target = join(dir.path, "a-directory");
  mkdirSync(target);
  expect(() => writeFileAtomic(target, "x")).toThrow(`refusing to write ${target}: it is a directory, not a regular file`);
  expect(readdirSync(dir.path)).toEqual(["a-directory"]);
});

test("a directory that does not exist: an IO error naming the temp file, nothing created", () => {
  const target = join(dir.path, "missing-dir", "mcp.json");
  expect(() => writeFileAtomic(target, "x")).toThrow(/cannot open a temporary file .*missing-dir/);
  expect(readdirSync(dir.path)).toEqual([]);
});
