import { afterEach, beforeEach, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBackup, readBackup } from "../../src/wrap/backup.ts";
import { tempDir } from "../support/harness.ts";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir[Symbol.dispose]());

test("the backup has the config's bytes and mode; an existing backup is reported, not overwritten", () => {
  const file = join(dir.path, "claude_desktop_config.json");
  writeFileSync(file, '{ "mcpServers": {} } // ünïcode\n');
  chmodSync(file, 0o604);
  const result = createBackup(file);
  expect(result).toEqual({ ok: true, backupPath: `${file}.thoughtgate-backup`, original: readFileSync(file) });
  expect(readFileSync(`${file}.thoughtgate-backup`).equals(readFileSync(file))).toBe(true);
  expect(statSync(`${file}.thoughtgate-backup`).mode & 0o7777).toBe(0o604);

  writeFileSync(`${file}.thoughtgate-backup`, "stale");
  expect(createBackup(file)).toEqual({ ok: false, reason: "stale-backup", backupPath: `${file}.thoughtgate-backup` });
  expect(readFileSync(`${file}.thoughtgate-backup`, "utf8")).toBe("stale");
});

test("a backup path planted as a symlink is refused, not followed: neither its target nor the config changes", () => {
  const file = join(dir.path, "mcp.json");
  const victim = join(dir.path, "victim");
  writeFileSync(file, "{}\n");
  writeFileSync(victim, "the user's file\n");
  symlinkSync(victim, `${file}.thoughtgate-backup`);
  expect(() => createBackup(file)).toThrow(`refusing the backup ${file}.thoughtgate-backup: it is a symbolic link, not a regular file`);
  expect({ victim: readFileSync(victim, "utf8"), config: readFileSync(file, "utf8") }).toEqual({ victim: "the user's file\n", config: "{}\n" });
  expect(() => readBackup(`${file}.thoughtgate-backup`)).toThrow("it is a symbolic link");
});
