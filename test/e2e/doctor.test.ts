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

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const touch = (path: string) => write(path, "{}");

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
    ["enrolled-agents", "pass"],
    ["running-wraps", "pass"],
    ["governance-bind", "pass"],
    ["cedar", "pass"],
  ]);
  expect(report.checks[0]?.data).toMatchObject({ path: requireBinary(), compiled: true, onPath: null, version: report.version, target: report.target });
  const agents = report.checks[1]?.data.agents as Array<{ label: string; files: Array<{ scope: string; exists: boolean }> }>;
  const found = agents.flatMap((agent) => agent.files.filter((file) => file.exists).map((file) => `${agent.label} (${file.scope})`));
  // Copilot CLI reads the project's .mcp.json as well.
  expect(found).toEqual(["Claude Code (project)", "Cursor (user)", "Copilot CLI (project)"]);
  expect(report.checks[5]?.data.port).toBeGreaterThan(0);
});

/** A journal record for `config`, held by `holders`. */
function journal(home: string, config: string, holders: unknown[]) {
  const record = { configPath: config, backupPath: `${config}.thoughtgate-backup`, agentType: "claude-code", owned: [["mcpServers", "a"]], rewrittenSha256: "0".repeat(64), backupSha256: null, holders };
  write(join(home, "state", "thoughtgate", "journal.json"), JSON.stringify({ version: 2, records: [record] }));
}

test("a config left rewritten by a wrap that is gone fails the report with exit 1 and says what to do", async () => {
  using home = tempDir();
  const config = join(home.path, ".claude.json");
  journal(home.path, config, [{ kind: "wrap", pid: 999_999_999, pidStart: null, startedAt: "2026-11-28T10:00:00Z", runId: "x" }]);
  const { code, stdout } = await doctor([], home.path, home.path);
  expect(code).toBe(1);
  expect(stdout).toMatch(/^FAIL  wrap journal +1 config left rewritten by a wrap that ended without restoring$/m);
  expect(stdout).toContain(`left rewritten: ${config}`);
  expect(stdout).toMatch(/^ +fix: run `thoughtgate unwrap --all`/m);
  expect(stdout).toMatch(/^ok    cedar engine +cedar \d+\.\d+\.\d+ evaluates policies/m);
  expect(stdout.trimEnd().split("\n").at(-1)).toBe("failed: wrap journal");
});

test("agent configs: servers wrap would govern or leave alone; a config that does not parse is a warning, exit 0", async () => {
  using home = tempDir();
  using project = tempDir();
  const cursor = join(home.path, ".cursor", "mcp.json");
  write(cursor, '{ "mcpServers": { "github": { "command": "npx", } ');
  write(
    join(project.path, ".mcp.json"),
    JSON.stringify({ mcpServers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] }, linear: { type: "http", url: "https://mcp.linear.app/mcp" }, old: { type: "sse", url: "https://old.example/sse" } } }),
  );
  const { code, stdout } = await doctor([], home.path, project.path);
  expect(code).toBe(0);
  // The project's .mcp.json counts for Claude Code and for Copilot CLI; its Streamable HTTP server is
  // governed (through shim --url), its SSE one is not.
  expect(stdout).toMatch(/^warn  agent configs +3 config files of 3 agents: 4 servers wrap would govern, 2 left alone; 1 warning$/m);
  expect(stdout).toMatch(/^ +Claude Code: 2 servers to govern, 1 left alone \(1 remote\)$/m);
  expect(stdout).toContain(`warning: ${cursor} does not parse (line 1, column `);
  expect(stdout.trimEnd().split("\n").at(-1)).toBe("no check failed; warnings: agent configs");
});

test("enrolled agents: which are, and a server added since (ungoverned in a plain run) is a warning naming the fix", async () => {
  using home = tempDir();
  const config = join(home.path, ".claude.json");
  // The entry the enrollment wrote runs a shim; `later` was added since, with the agent's own `mcp add`.
  const shim = join(home.path, "state", "thoughtgate", "bin", "thoughtgate");
  mkdirSync(dirname(shim), { recursive: true });
  Bun.spawnSync(["ln", requireBinary(), shim]);
  write(config, JSON.stringify({ mcpServers: { a: { command: shim, args: ["shim", "--server-id", "a", "--", "npx", "a"] }, later: { command: "npx", args: ["later"] } } }));
  journal(home.path, config, [{ kind: "enroll", agent: "claude-code", since: "2026-11-28T10:00:00Z" }]);
  const { code, stdout } = await doctor([], home.path, home.path);
  expect(code).toBe(0);
  expect(stdout).toMatch(/^ok    wrap journal +none left over \(1 config in use by a running wrap or an enrollment\)$/m);
  expect(stdout).toMatch(/^warn  enrolled agents +claude-code; 1 server added since run ungoverned$/m);
  expect(stdout).toContain(`ungoverned: later in ${config}, added since; \`thoughtgate enroll claude-code\` (or a wrap) governs it`);
  expect(stdout).toMatch(/Claude Code: 2 servers to govern$/m);
});

test("doctor rejects flags it does not know", async () => {
  using home = tempDir();
  const { code, stderr } = await doctor(["--jsn"], home.path, home.path);
  expect(code).toBe(2);
  expect(stderr).toContain("unknown flag --jsn");
});
