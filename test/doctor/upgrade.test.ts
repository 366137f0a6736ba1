import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkRunningWraps, npmInstall } from "../../src/doctor/upgrade.ts";
import { processStartId } from "../../src/core/process-identity.ts";
import { tempDir } from "../support/harness.ts";
import { TARGET, VERSION } from "../../src/version.ts";

/** A state dir with one session per entry; `pid` must be a live process (this one) to count as running. */
function stateWith(sessions: Array<{ runId: string; version: string; target?: string; pid?: number; startId?: string | null }>) {
  const home = tempDir();
  for (const s of sessions) {
    const dir = join(home.path, "state", "thoughtgate", "sessions", s.runId);
    mkdirSync(dir, { recursive: true });
    const pid = s.pid ?? process.pid;
    const info = { version: s.version, target: s.target ?? TARGET, pid, startId: s.startId === undefined ? processStartId(pid) : s.startId, binary: "/b", shim: `/pins/${s.version}/thoughtgate`, startedAt: `2026-11-23T10:00:0${sessions.indexOf(s)}Z` };
    writeFileSync(join(dir, "wrap.json"), JSON.stringify(info));
  }
  return { home, ctx: { env: { HOME: home.path, XDG_STATE_HOME: join(home.path, "state") }, home: home.path, cwd: home.path, platform: process.platform, execPath: process.execPath } };
}

test("no running wrap, or only ones on this version: pass", () => {
  const none = stateWith([]);
  expect(checkRunningWraps(none.ctx)).toMatchObject({ status: "pass", summary: "none running" });
  none.home[Symbol.dispose]();

  const same = stateWith([{ runId: "a", version: VERSION }]);
  expect(checkRunningWraps(same.ctx)).toMatchObject({ status: "pass", summary: "1 running, on this version", data: { sessions: [{ runId: "a", sameAsThis: true }] } });
  same.home[Symbol.dispose]();
});

test("a running wrap on a newer version than this binary (it was downgraded, or an older install comes first): warn, and say the session keeps its version", () => {
  const { home, ctx } = stateWith([{ runId: "a", version: VERSION }, { runId: "b", version: "99.0.0" }]);
  const check = checkRunningWraps(ctx);
  expect(check).toMatchObject({ status: "warn", summary: `1 running wrap uses another version than this ${VERSION}` });
  expect(check.details.at(-1)).toContain(`this binary (${VERSION}) is older than 99.0.0, which a running wrap uses: a downgrade made while it runs, or another install of thoughtgate`);
  expect(check.details.at(-1)).toContain("start it again with `thoughtgate wrap`");
  expect(check.details[1]).toBe(`wrap pid ${process.pid} since 2026-11-23T10:00:01Z runs thoughtgate 99.0.0 (${TARGET}); its shims run /pins/99.0.0/thoughtgate`);
  home[Symbol.dispose]();
});

test("a session whose wrap is gone, or whose pid now belongs to another process, is not running", () => {
  const { home, ctx } = stateWith([
    { runId: "reused", version: "99.0.0", startId: "another-boot:1" },
    { runId: "gone", version: "99.0.0", pid: 2 ** 22 + 1 },
  ]);
  expect(checkRunningWraps(ctx)).toMatchObject({ status: "pass", summary: "none running" });
  home[Symbol.dispose]();
});

test("npm's launcher on PATH is this binary's install, not another one shadowing it", () => {
  using dir = tempDir();
  const pkg = join(dir.path, "lib", "node_modules", "thoughtgate");
  const binary = join(pkg, "node_modules", "@thoughtgate", "linux-x64", "bin", "thoughtgate");
  mkdirSync(join(pkg, "bin"), { recursive: true });
  mkdirSync(join(binary, ".."), { recursive: true });
  writeFileSync(join(pkg, "bin", "thoughtgate"), "#!/bin/sh\n");
  writeFileSync(binary, "");
  expect(npmInstall(binary, join(pkg, "bin", "thoughtgate"))).toEqual({
    launchedBy: true,
    details: [`installed with npm: @thoughtgate/linux-x64, launched by ${join(pkg, "bin", "thoughtgate")}`],
    data: { npm: { platformPackage: "@thoughtgate/linux-x64", launcher: join(pkg, "bin", "thoughtgate") } },
  });
  expect(npmInstall(binary, "/usr/local/bin/thoughtgate").launchedBy).toBe(false);
  expect(npmInstall("/usr/local/bin/thoughtgate", "/usr/local/bin/thoughtgate")).toEqual({ launchedBy: false, details: [], data: {} });
});
