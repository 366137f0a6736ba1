/**
 * `doctor`'s view of upgrades: whether a running wrap uses another thoughtgate than this one (an
 * upgrade, or a downgrade, made while it runs), and whether `thoughtgate` on PATH is the npm
 * launcher of this very binary rather than another install.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { runningWraps } from "../wrap/session-info.ts";
import { npmPackageOf } from "../wrap/shim-path.ts";
import { TARGET, VERSION } from "../version.ts";
import type { CheckBody, DoctorContext } from "./report.ts";

const RESTART = "end the agent and start it again with `thoughtgate wrap` to run this version";

export function checkRunningWraps({ env }: DoctorContext): CheckBody {
  const running = runningWraps(env).toSorted((a, b) => a.startedAt.localeCompare(b.startedAt));
  const sessions = running.map((s) => ({ runId: s.runId, pid: s.pid, version: s.version, target: s.target, shim: s.shim, startedAt: s.startedAt, sameAsThis: s.version === VERSION && s.target === TARGET }));
  const data = { version: VERSION, target: TARGET, sessions };
  if (running.length === 0) return { status: "pass", summary: "none running", details: [], data };
  const others = running.filter((s) => s.version !== VERSION || s.target !== TARGET);
  const details = running.map((s) => {
    const what = s.version === VERSION && s.target === TARGET ? "this version" : `thoughtgate ${s.version} (${s.target})`;
    return `wrap pid ${s.pid} since ${s.startedAt} runs ${what}; its shims run ${s.shim}`;
  });
  if (others.length === 0) return { status: "pass", summary: `${running.length} running, on this version`, details, data };
  const newest = others.map((s) => s.version).reduce((a, b) => (Bun.semver.order(a, b) >= 0 ? a : b));
  const order = Bun.semver.order(VERSION, newest);
  const relation =
    order > 0
      ? `newer than ${newest}, which a running wrap uses: an upgrade made while it runs`
      : order < 0
        ? `older than ${newest}, which a running wrap uses: a downgrade made while it runs, or another install of thoughtgate`
        : "built for another target than the one a running wrap uses";
  details.push(`this binary (${VERSION}) is ${relation}. That session keeps its own version for every shim it starts; ${RESTART}`);
  return { status: "warn", summary: `${others.length} running wrap${others.length === 1 ? " uses" : "s use"} another version than this ${VERSION}`, details, data };
}

/**
 * The npm install this binary belongs to, and whether `onPath` is that install's launcher (then
 * `thoughtgate` on PATH and this binary are one install, not one shadowing the other).
 */
export function npmInstall(execPath: string, onPath: string | null): { launchedBy: boolean; details: string[]; data: Record<string, unknown> } {
  const binary = safeRealpath(execPath);
  const npm = npmPackageOf(binary);
  if (!npm) return { launchedBy: false, details: [], data: {} };
  const launcher = npm.launcherPackage ? join(npm.launcherPackage, "bin", "thoughtgate") : null;
  const launchedBy = onPath !== null && launcher !== null && safeRealpath(onPath) === launcher;
  const details = [`installed with npm: ${npm.platformPackage}${launcher ? `, launched by ${launcher}` : ""}`];
  return { launchedBy, details, data: { npm: { platformPackage: npm.platformPackage, launcher } } };
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
