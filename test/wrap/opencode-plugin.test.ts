/**
 * opencode's plugin as wrap and enroll give it (src/wrap/opencode-plugin.ts): the session's
 * environment keeps the user's own OPENCODE_CONFIG_CONTENT and its plugins, a value that is not a
 * JSON object stops wrap with one line, `--pure` and OPENCODE_PURE are said, and unenroll removes
 * only a plugin file as enroll wrote it.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { enrolledPluginState, enrollOpencodePlugin, opencodePluginsOff, opencodeSessionEnv, unenrollOpencodePlugin } from "../../src/wrap/opencode-plugin.ts";

function tempDir() {
  const path = mkdtempSync(join(tmpdir(), "thoughtgate-opencode-plugin-"));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

test("the session's environment names the plugin after the user's own config and plugins, which stay", () => {
  using dir = tempDir();
  const env = opencodeSessionEnv("/bin/thoughtgate", dir.path, { OPENCODE_CONFIG_CONTENT: JSON.stringify({ model: "a/b", plugin: ["their-plugin"] }) });
  const plugin = join(dir.path, "opencode-plugin.js");
  expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT as string)).toEqual({ model: "a/b", plugin: ["their-plugin", pathToFileURL(plugin).href] });
  expect(readFileSync(plugin, "utf8")).toContain('const BINARY = "/bin/thoughtgate";');
  expect(JSON.parse(opencodeSessionEnv("/bin/thoughtgate", dir.path, {}).OPENCODE_CONFIG_CONTENT as string)).toEqual({ plugin: [pathToFileURL(plugin).href] });
});

test("a user's OPENCODE_CONFIG_CONTENT that is not a JSON object stops wrap, saying so", () => {
  using dir = tempDir();
  expect(() => opencodeSessionEnv("/bin/thoughtgate", dir.path, { OPENCODE_CONFIG_CONTENT: "{ model: a" })).toThrow(/^OPENCODE_CONFIG_CONTENT: .*; opencode was not started \(ThoughtGate's plugin could not be added to it\)$/);
  expect(() => opencodeSessionEnv("/bin/thoughtgate", dir.path, { OPENCODE_CONFIG_CONTENT: "[]" })).toThrow("OPENCODE_CONFIG_CONTENT: not a JSON object");
});

test("--pure and OPENCODE_PURE turn opencode's plugins off", () => {
  expect(opencodePluginsOff(["opencode", "run", "--pure", "x"], {})).toBe("--pure");
  expect(opencodePluginsOff(["opencode", "run", "x"], { OPENCODE_PURE: "1" })).toBe("OPENCODE_PURE");
  expect(opencodePluginsOff(["opencode", "run", "x"], { OPENCODE_PURE: "0" })).toBeNull();
});

test("unenroll removes the plugin enroll wrote (whichever thoughtgate wrote it), and leaves one changed since", () => {
  using dir = tempDir();
  const ctx = { home: dir.path, cwd: dir.path, env: {}, platform: "linux" as const };
  const enrolled = enrollOpencodePlugin(ctx, "/old/thoughtgate");
  expect(enrolled).toEqual({ path: join(dir.path, ".config", "opencode", "plugins", "thoughtgate.js"), outcome: "rewritten" });
  expect(enrollOpencodePlugin(ctx, "/old/thoughtgate")).toEqual({ path: enrolled.path, outcome: "joined" });
  expect(enrolledPluginState(ctx, "/new/thoughtgate")).toBe("changed");
  expect(unenrollOpencodePlugin(ctx)).toEqual({ path: enrolled.path, status: "removed" });
  expect(existsSync(enrolled.path)).toBe(false);
  expect(unenrollOpencodePlugin(ctx)).toEqual({ path: enrolled.path, status: "absent" });

  enrollOpencodePlugin(ctx, "/bin/thoughtgate");
  writeFileSync(enrolled.path, `${readFileSync(enrolled.path, "utf8")}// mine\n`);
  expect(unenrollOpencodePlugin(ctx)).toEqual({ path: enrolled.path, status: "changed" });
  expect(existsSync(enrolled.path)).toBe(true);
});
