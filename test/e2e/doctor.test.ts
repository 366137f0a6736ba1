import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { requireBinary, tempDir } from "../support/harness.ts";

type Report = { ok: boolean; version: string; target: string; checks: Array<{ id: string; status: string; summary: string; data: Record<string, unknown> }> };

async function doctor(args: string[], home: string, cwd: string) {
  const env = { HOME: home, PATH: "/usr/bin:/bin", XDG_STATE_HOME: join(home, "state") };
  await using proc = Bun.spawn([requireBinary(), "doctor", ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

function touch(path: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "{}");
}

test("a healthy install: every check passes, and it lists the agent configs that exist", async () => {
  using home = tempDir();
  using project = tempDir();
  touch(join(home.path, ".cursor", "mcp.json"));
  touch(join(project.path, ".mcp.json"));
  const { code, stdout } = await doctor(["--json"], home.path, project.path);
  const report = JSON.parse(stdout) as Report;
  expect(code).toBe(0);
  expect(report.ok).toBe(true);
  expect(report.checks.map((c) => [c.id, c.status])).toEqual([
    ["binary", "pass"],
    ["agent-configs", "info"],
    ["wrap-journal", "pass"],
    ["governance-bind", "pass"],
    ["cedar", "pass"],
  ]);
  expect(report.checks[0]?.data).toMatchObject({ path: requireBinary(), compiled: true, onPath: null, version: report.version, target: report.target });
  const found = (report.checks[1]?.data.locations as Array<{ agent: string; scope: string; exists: boolean }>).filter((l) => l.exists);
  expect(found.map((l) => `${l.agent} (${l.scope})`)).toEqual(["Claude Code (project)", "Cursor (user)"]);
  expect(report.checks[3]?.data.port).toBeGreaterThan(0);
});

test("a left-over wrap journal fails the report with exit 1 and says what to do", async () => {
  using home = tempDir();
  touch(join(home.path, "state", "thoughtgate", "journal.json"));
  const { code, stdout } = await doctor([], home.path, home.path);
  expect(code).toBe(1);
  expect(stdout).toMatch(/^FAIL  wrap journal +left over at .*journal\.json$/m);
  expect(stdout).toContain("thoughtgate unwrap");
  expect(stdout).toMatch(/^ok    cedar engine +cedar \d+\.\d+\.\d+ evaluates policies/m);
  expect(stdout.trimEnd().split("\n").at(-1)).toBe("failed: wrap journal");
});

test("doctor rejects flags it does not know", async () => {
  using home = tempDir();
  const { code, stderr } = await doctor(["--jsn"], home.path, home.path);
  expect(code).toBe(2);
  expect(stderr).toContain("unknown flag --jsn");
});
