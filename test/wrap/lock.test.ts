import { expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { ConfigGuard } from "../../src/wrap/config-guard.ts";
import { wrapHolder } from "../../src/wrap/holders.ts";
import { acquireLock, lockPathFor } from "../../src/wrap/lock.ts";
import { rewriteSample, SAMPLE_JSONC, useSampleConfig } from "../support/config-rewrite.ts";
import { deadPid, killHard, runFixture } from "../support/guard-holder.ts";
import { fixture } from "../support/harness.ts";

const sample = useSampleConfig();

function lockError(step: () => unknown): ThoughtGateError {
  try {
    step();
  } catch (error) {
    if (error instanceof ThoughtGateError) return error;
    throw error;
  }
  throw new Error("expected a ThoughtGateError");
}

test("a second acquisition in the same process fails with LOCKED naming the holder's pid; release frees and removes it", () => {
  const path = lockPathFor(sample.config);
  const first = acquireLock(path, { subject: sample.config });
  expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
  const error = lockError(() => acquireLock(path, { subject: sample.config }));
  expect({ code: error.code, exitCode: error.exitCode }).toEqual({ code: "LOCKED", exitCode: 1 });
  expect(error.message).toContain(`${sample.config} is being wrapped by pid ${process.pid}`);
  first.release();
  first.release();
  expect(existsSync(path)).toBe(false);
  acquireLock(path, { subject: sample.config }).release();
});

/** A process holding only the config's lock, as a wrap of an earlier thoughtgate does for its whole session. */
async function lockHolder(config: string) {
  const proc = Bun.spawn(fixture("lock-holder-fixture.ts", config), { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let seen = "";
  while (!seen.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("lock-holder-fixture exited before it was ready");
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return proc;
}

function shareSample(config: string): ConfigGuard {
  const guard = new ConfigGuard({ configPath: config, agentType: "custom", holder: wrapHolder(Bun.randomUUIDv7()) });
  const text = readFileSync(config, "utf8");
  guard.share(text, rewriteSample(text));
  return guard;
}

test("another process holding the config's lock (an earlier thoughtgate's wrap): sharing fails in this process and in a third one", async () => {
  await using holder = await lockHolder(sample.config);
  const here = lockError(() => shareSample(sample.config));
  expect(here.code).toBe("LOCKED");
  expect(here.message).toContain(`is being wrapped by pid ${holder.pid}`);
  const third = await runFixture("try", sample.config);
  expect(third.code).toBe(1);
  expect(JSON.parse(third.stdout)).toMatchObject({ ok: false, code: "LOCKED" });
  expect(JSON.parse(third.stdout).message).toContain(`${sample.config} is being wrapped by pid ${holder.pid}`);
  expect(readFileSync(sample.config, "utf8")).toBe(SAMPLE_JSONC);
  await killHard(holder);
});

test("a stale lock file (its pid gone, no flock held) is taken over, and removed once the share is made", async () => {
  const path = lockPathFor(sample.config);
  writeFileSync(path, `${await deadPid()}\n`);
  const guard = shareSample(sample.config);
  expect(existsSync(path)).toBe(false);
  expect(guard.restore()).toEqual({ status: "restored", configPath: sample.config, kind: "backup" });
  expect(existsSync(path)).toBe(false);
});

test("the kernel drops the lock of a SIGKILLed holder: the lock file it left is taken over", async () => {
  const holder = await lockHolder(sample.config);
  await killHard(holder);
  expect(readFileSync(lockPathFor(sample.config), "utf8")).toBe(`${holder.pid}\n`);
  const lock = acquireLock(lockPathFor(sample.config), { subject: sample.config });
  expect(readFileSync(lockPathFor(sample.config), "utf8")).toBe(`${process.pid}\n`);
  lock.release();
});

test("a lock file planted as a symlink to another file is refused; the file it points to keeps its bytes", () => {
  const victim = `${sample.config}.victim`;
  writeFileSync(victim, "the user's file\n");
  symlinkSync(victim, lockPathFor(sample.config));
  const error = lockError(() => shareSample(sample.config));
  expect({ code: error.code, message: error.message }).toEqual({
    code: "IO",
    message: `refusing the lock file ${lockPathFor(sample.config)}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`,
  });
  expect({ victim: readFileSync(victim, "utf8"), link: lstatSync(lockPathFor(sample.config)).isSymbolicLink() }).toEqual({ victim: "the user's file\n", link: true });
});
