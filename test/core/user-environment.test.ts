/**
 * Where a shim belongs (src/core/user-environment.ts) and what it may replace itself with
 * (src/core/exec.ts): the user's state directory from the shim's own path, the user's recorded
 * variables over the entry's, and refusals for a directory or a binary that is not the user's own.
 * Through the binary: test/e2e/attacks/session-placement.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { replaceWithStateBinary } from "../../src/core/exec.ts";
import { isSameProcessRunning, processStartId } from "../../src/core/process-identity.ts";
import { placeShim, stateDirOf, writeUserEnvironment } from "../../src/core/user-environment.ts";
import { tempDir } from "../support/harness.ts";

function stateBin(root: string): { state: string; shim: string } {
  const state = join(root, ".local", "state", "thoughtgate");
  mkdirSync(join(state, "bin"), { recursive: true, mode: 0o700 });
  return { state, shim: join(state, "bin", "thoughtgate") };
}

describe("the state directory a shim runs from", () => {
  test("the shim path and a pin name it; an install elsewhere names none", () => {
    expect(stateDirOf("/home/a/.local/state/thoughtgate/bin/thoughtgate")).toBe("/home/a/.local/state/thoughtgate");
    expect(stateDirOf("/home/a/.local/state/thoughtgate/bin/1.2.0-linux-x64-0123456789ab/thoughtgate")).toBe("/home/a/.local/state/thoughtgate");
    for (const path of ["/usr/local/bin/thoughtgate", "/opt/homebrew/Cellar/thoughtgate/1.0/bin/thoughtgate", "/x/node_modules/@thoughtgate/linux-x64/bin/thoughtgate", "/work/dist/thoughtgate", "thoughtgate/bin/thoughtgate"]) {
      expect(stateDirOf(path)).toBeNull();
    }
  });
});

describe("placeShim", () => {
  test("the user's recorded variables replace the entry's, the rest of the environment stays, and it says which it ignored", () => {
    using dir = tempDir();
    const home = join(dir.path, "home");
    const { state, shim } = stateBin(home);
    writeUserEnvironment(state, { HOME: home, XDG_CONFIG_HOME: join(home, "cfg"), THOUGHTGATE_PROFILE: "production", PATH: "/bin", THOUGHTGATE_SESSION: "x" }, dir.path);
    const entry = { HOME: "/repo/.evil", XDG_STATE_HOME: "/repo/.evil/state", THOUGHTGATE_CONFIG: "/repo/allow.yaml", THOUGHTGATE_PROFILE: "development", THOUGHTGATE_SESSION: "s", THOUGHTGATE_HEADER_1: "h", PATH: "/usr/bin", TOKEN: "t" };
    expect(placeShim(shim, entry)).toEqual({
      stateDir: state,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, "cfg"), XDG_STATE_HOME: join(home, ".local", "state"), THOUGHTGATE_PROFILE: "production", THOUGHTGATE_SESSION: "s", THOUGHTGATE_HEADER_1: "h", PATH: "/usr/bin", TOKEN: "t" },
      ignored: ["HOME", "THOUGHTGATE_CONFIG", "THOUGHTGATE_PROFILE", "XDG_STATE_HOME"],
    });
  });

  test("no record under the usual home: the home it lies in; under another directory: refused, saying what to run", () => {
    using dir = tempDir();
    const { shim } = stateBin(join(dir.path, "home"));
    expect(placeShim(shim, { HOME: "/repo" })).toMatchObject({ env: { HOME: join(dir.path, "home"), XDG_STATE_HOME: join(dir.path, "home", ".local", "state") }, ignored: ["HOME"] });
    const odd = join(dir.path, "xdg", "thoughtgate");
    mkdirSync(join(odd, "bin"), { recursive: true, mode: 0o700 });
    expect(placeShim(join(odd, "bin", "thoughtgate"), {})).toEqual({ refused: expect.stringContaining("run thoughtgate wrap or enroll again") });
  });

  test("a state directory others can write, one that is a link, or a record others can write: refused", () => {
    using dir = tempDir();
    const { state, shim } = stateBin(join(dir.path, "home"));
    chmodSync(state, 0o777);
    expect(placeShim(shim, {})).toEqual({ refused: `${state} can be written by anyone (mode 777), so it is not taken for the user's state directory` });
    chmodSync(state, 0o700);
    writeUserEnvironment(state, { HOME: "/h" }, dir.path);
    chmodSync(join(state, "user-environment.json"), 0o666);
    expect(placeShim(shim, {})).toEqual({ refused: `${join(state, "user-environment.json")} can be written by anyone (mode 666)` });
    const linked = join(dir.path, "other", ".local", "state");
    mkdirSync(linked, { recursive: true });
    symlinkSync(state, join(linked, "thoughtgate"));
    expect(placeShim(join(linked, "thoughtgate", "bin", "thoughtgate"), {})).toMatchObject({ refused: expect.stringContaining("is a symbolic link") });
  });
});

describe("replaceWithStateBinary refuses anything but a thoughtgate of the user's state directory", () => {
  test("a script elsewhere, a link in bin, a file others can write: each refused in one line before anything runs", () => {
    using dir = tempDir();
    const { state } = stateBin(join(dir.path, "home"));
    const script = join(dir.path, "run.sh");
    writeFileSync(script, "#!/bin/sh\ntouch ran\n", { mode: 0o755 });
    expect(() => replaceWithStateBinary(".tg/run.sh", state, ["x"], {})).toThrow(`refusing to run .tg/run.sh: it is not a thoughtgate binary of your state directory ${state}/bin`);
    expect(() => replaceWithStateBinary(script, state, ["x"], {})).toThrow("it is not a thoughtgate binary of your state directory");
    const pin = join(state, "bin", "9.9.9-linux-x64-0123456789ab");
    mkdirSync(pin, { mode: 0o700 });
    symlinkSync(script, join(pin, "thoughtgate"));
    expect(() => replaceWithStateBinary(join(pin, "thoughtgate"), state, ["x"], {})).toThrow(`refusing to run ${join(pin, "thoughtgate")}:`);
    const shim = join(state, "bin", "thoughtgate");
    writeFileSync(shim, "#!/bin/sh\n", { mode: 0o777 });
    chmodSync(shim, 0o777);
    expect(() => replaceWithStateBinary(shim, state, ["x"], {})).toThrow(`refusing to run ${shim}: others can write it (mode 777)`);
  });
});

test("a pid with no start stamp is never the same process, however alive the pid is", () => {
  expect(isSameProcessRunning(1, null)).toBe(false);
  expect(isSameProcessRunning(process.pid, null)).toBe(false);
  expect(isSameProcessRunning(process.pid, processStartId(process.pid))).toBe(true);
});
