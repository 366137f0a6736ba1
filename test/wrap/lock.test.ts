import { expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { ConfigGuard } from "../../src/wrap/config-guard.ts";
import { acquireLock, lockPathFor } from "../../src/wrap/lock.ts";
import { useSampleConfig } from "../support/config-rewrite.ts";
import { deadPid, killHard, runFixture, startHolder } from "../support/guard-holder.ts";

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

test("another process holding the guard: acquire fails in this process and in a third one", async () => {
  await using holder = await startHolder(sample.config);
  const here = lockError(() => new ConfigGuard({ configPath: sample.config, agentType: "custom" }).acquire());
  expect(here.code).toBe("LOCKED");
  expect(here.message).toContain(`is being wrapped by pid ${holder.pid}`);
  const third = await runFixture("try", sample.config);
  expect(third.code).toBe(1);
  expect(JSON.parse(third.stdout)).toMatchObject({ ok: false, code: "LOCKED" });
  expect(JSON.parse(third.stdout).message).toContain(`${sample.config} is being wrapped by pid ${holder.pid}`);
  await killHard(holder);
});

test("a stale lock file (its pid gone, no flock held) is taken over, and the guard's restore removes it", async () => {
  const path = lockPathFor(sample.config);
  writeFileSync(path, `${await deadPid()}\n`);
  const guard = new ConfigGuard({ configPath: sample.config, agentType: "custom" });
  guard.acquire();
  expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
  expect(guard.restore()).toEqual({ status: "restored", configPath: sample.config, kind: "never-rewritten" });
  expect(existsSync(path)).toBe(false);
});

test("the kernel drops the lock of a SIGKILLed holder: the lock file it left is taken over", async () => {
  const holder = await startHolder(sample.config);
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
  const error = lockError(() => new ConfigGuard({ configPath: sample.config, agentType: "custom" }).acquire());
  expect({ code: error.code, message: error.message }).toEqual({
    code: "IO",
    message: `refusing the lock file ${lockPathFor(sample.config)}: it is a symbolic link, not a regular file; wrap neither reads nor writes through it (remove it, then run wrap again)`,
  });
  expect({ victim: readFileSync(victim, "utf8"), link: lstatSync(lockPathFor(sample.config)).isSymbolicLink() }).toEqual({ victim: "the user's file\n", link: true });
});
