import { expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isEphemeral, pinsDir, prunePins, shimBinary } from "../../src/wrap/shim-path.ts";
import { tempDir } from "../support/harness.ts";

function setup() {
  const home = tempDir();
  const env = { HOME: home.path, XDG_STATE_HOME: join(home.path, "state") };
  const binary = join(home.path, "install", "thoughtgate");
  mkdirSync(join(home.path, "install"));
  writeFileSync(binary, "a binary", { mode: 0o755 });
  return { home, env, binary };
}

test("the shim is a hard link to the binary in the state directory, made once per binary file", () => {
  const { home, env, binary } = setup();
  const planned = shimBinary({ execPath: binary, env, compiled: true, create: false });
  expect(existsSync(planned.path)).toBe(false);
  const first = shimBinary({ execPath: binary, env, compiled: true });
  expect(first).toEqual({ path: planned.path, source: realpathSync(binary), how: "linked" });
  expect(first.path.startsWith(join(pinsDir(env), ""))).toBe(true);
  expect(statSync(first.path).ino).toBe(statSync(binary).ino);
  expect(shimBinary({ execPath: binary, env, compiled: true })).toEqual(first);

  // An upgrade puts a new file at the same path: a new pin; the old one still holds the old file.
  writeFileSync(`${binary}.new`, "another binary", { mode: 0o755 });
  Bun.spawnSync(["mv", "-f", `${binary}.new`, binary]);
  const second = shimBinary({ execPath: binary, env, compiled: true });
  expect(second.path).not.toBe(first.path);
  expect(Bun.file(first.path).size).toBe("a binary".length);
  home[Symbol.dispose]();
});

test("run from source, the binary is Bun itself: its path is used as it is", () => {
  const { home, env, binary } = setup();
  expect(shimBinary({ execPath: binary, env, compiled: false })).toEqual({ path: realpathSync(binary), source: realpathSync(binary), how: "as-is" });
  expect(existsSync(pinsDir(env))).toBe(false);
  home[Symbol.dispose]();
});

test("prunePins removes old pins no running wrap names, and reads the sessions only when one is old", () => {
  const { home, env, binary } = setup();
  const pin = shimBinary({ execPath: binary, env, compiled: true }).path;
  let asked = 0;
  const keep = () => {
    asked += 1;
    return new Set<string>();
  };
  expect(prunePins(keep, env)).toEqual([]);
  expect(asked).toBe(0);

  const hourAgo = (Date.now() - 3_600_000) / 1000;
  utimesSync(join(pin, ".."), hourAgo, hourAgo);
  expect(prunePins(() => new Set([pin]), env)).toEqual([]);
  expect(existsSync(pin)).toBe(true);
  expect(prunePins(keep, env)).toEqual([join(pin, "..")]);
  expect(asked).toBe(1);
  expect(existsSync(pin)).toBe(false);
  expect(existsSync(binary)).toBe(true);
  home[Symbol.dispose]();
});

test("package runners' caches are ephemeral; installs are not", () => {
  expect(isEphemeral("/home/u/.npm/_npx/0a1b2c/node_modules/@thoughtgate/linux-x64/bin/thoughtgate")).toBe(true);
  expect(isEphemeral("/home/u/.cache/pnpm/dlx/abc/node_modules/@thoughtgate/linux-x64/bin/thoughtgate")).toBe(true);
  expect(isEphemeral(join(realpathSync("/tmp"), "bunx-0-thoughtgate@latest/node_modules/@thoughtgate/linux-x64/bin/thoughtgate"))).toBe(true);
  expect(isEphemeral("/usr/local/lib/node_modules/thoughtgate/node_modules/@thoughtgate/linux-x64/bin/thoughtgate")).toBe(false);
  expect(isEphemeral("/home/u/.local/bin/thoughtgate")).toBe(false);
});
