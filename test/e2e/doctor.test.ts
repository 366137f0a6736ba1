import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fakeNotifySend } from "../support/fake-notify.ts";
import { requireBinary, tempDir } from "../support/harness.ts";
import { EMBEDDED_DEFAULT_WORDS } from "../../src/governance/engine/default-policy.ts";

type Report = { ok: boolean; version: string; target: string; checks: Array<{ id: string; status: string; summary: string; data: Record<string, unknown> }> };

async function doctor(args: string[], home: string, cwd: string, extraEnv: Record<string, string> = {}) {
  const env = { HOME: home, PATH: "/usr/bin:/bin", XDG_STATE_HOME: join(home, "state"), ...extraEnv };
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
    ["policy", "pass"],
    ["wrap-journal", "pass"],
    ["enrolled-agents", "pass"],
    ["agent-hooks", "pass"],
    ["running-wraps", "pass"],
    ["governance-bind", "pass"],
    ["approval-channels", "pass"],
    ["cedar", "pass"],
  ]);
  expect(report.checks[0]?.data).toMatchObject({ path: requireBinary(), compiled: true, onPath: null, version: report.version, target: report.target });
  const agents = report.checks[1]?.data.agents as Array<{ label: string; files: Array<{ scope: string; exists: boolean }> }>;
  const found = agents.flatMap((agent) => agent.files.filter((file) => file.exists).map((file) => `${agent.label} (${file.scope})`));
  // Copilot CLI reads the project's .mcp.json as well.
  expect(found).toEqual(["Claude Code (project)", "Cursor (user)", "Copilot CLI (project)"]);
  expect(report.checks.find((c) => c.id === "governance-bind")?.data.port).toBeGreaterThan(0);
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

describe("the policy in force: which files, from where, valid or the one-line error", () => {
  test("none: the embedded default policy, and the profile", async () => {
    using home = tempDir();
    const { code, stdout } = await doctor([], home.path, home.path);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ok    policy +the embedded default policy$/m);
    expect(stdout).toContain(`no ~/.config/thoughtgate/thoughtgate.yaml: the embedded default policy (${EMBEDDED_DEFAULT_WORDS})\n`);
    expect(stdout).toMatch(/^ +profile production \(the default; --profile development logs WOULD_BLOCK and forwards instead\)$/m);
  });

  test("the user's policy restricted by the project's, each valid; the JSON says which is which", async () => {
    using home = tempDir();
    using project = tempDir();
    write(join(home.path, ".config", "thoughtgate", "thoughtgate.yaml"), "schema: 1\n");
    write(join(project.path, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules:\n    - { match: delete_*, action: deny }\n");
    const text = await doctor([], home.path, project.path, { THOUGHTGATE_PROFILE: "development" });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^ok    policy +~/\\.config/thoughtgate/thoughtgate\\.yaml, restricted by ${project.path}/thoughtgate\\.yaml$`, "m"));
    expect(text.stdout).toMatch(/^ +~\/\.config\/thoughtgate\/thoughtgate\.yaml \(your policy\): valid$/m);
    expect(text.stdout).toContain(`${project.path}/thoughtgate.yaml (this directory's project policy: it can only add restrictions to yours): valid`);
    expect(text.stdout).toMatch(/^ +profile development \(from \$THOUGHTGATE_PROFILE\)$/m);
    const report = JSON.parse((await doctor(["--json"], home.path, project.path)).stdout) as Report;
    expect(report.checks.find((c) => c.id === "policy")?.data).toEqual({
      files: [
        { file: join(home.path, ".config", "thoughtgate", "thoughtgate.yaml"), origin: "user", valid: true },
        { file: join(project.path, "thoughtgate.yaml"), origin: "project", valid: true },
      ],
      embedded: false,
      profile: "production",
    });
  });

  test("an invalid policy fails the report (wrap would refuse to start) with its first problem in one line", async () => {
    using home = tempDir();
    write(join(home.path, ".config", "thoughtgate", "thoughtgate.yaml"), "schema: 1\ngovernance:\n  defualts: { action: deny }\n  rules:\n    - { mach: delete_*, action: deny }\n");
    const { code, stdout } = await doctor([], home.path, home.path);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL  policy +~\/\.config\/thoughtgate\/thoughtgate\.yaml is invalid: wrap, serve and shims refuse to start on it \(fail closed\); `thoughtgate validate-config` lists every problem$/m);
    expect(stdout).toMatch(/^ +~\/\.config\/thoughtgate\/thoughtgate\.yaml \(your policy\): INVALID: line 3, column 3: governance\.defualts: unknown key "defualts" \(did you mean "defaults"\?\); allowed keys: .* \(and 1 more problem\)$/m);
    expect(stdout.trimEnd().split("\n").at(-1)).toBe("failed: policy");
  });

  test("$THOUGHTGATE_CONFIG names the one file used alone; a missing one fails", async () => {
    using home = tempDir();
    const missing = join(home.path, "nowhere.yaml");
    const { code, stdout } = await doctor([], home.path, home.path, { THOUGHTGATE_CONFIG: missing });
    expect(code).toBe(1);
    expect(stdout).toContain(`~/nowhere.yaml (named by $THOUGHTGATE_CONFIG, used alone): INVALID: ${missing}: no such file`);
  });
});

describe("approval channels: which ways of reaching a person work on this machine", () => {
  test("a desktop with notify-send, a session bus and a display; Slack configured in the policy", async () => {
    using home = tempDir();
    using notify = fakeNotifySend("/usr/bin:/bin");
    write(
      join(home.path, ".config", "thoughtgate", "thoughtgate.yaml"),
      "schema: 1\napproval:\n  oncall:\n    destination: { type: slack, channel: C0123ABCD, token: xoxb-test-token, approvers: [U0123ABCD] }\n",
    );
    const { code, stdout } = await doctor([], home.path, home.path, { ...notify.env, DISPLAY: ":0", DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus" });
    expect(code).toBe(0);
    const bin = notify.env.PATH?.split(":")[0];
    expect(stdout).toMatch(/^ok    approval channels +approvals page, thoughtgate approve, desktop notification, Slack; the agent's form where it has one$/m);
    expect(stdout).toMatch(/^ +- {3}the agent's own form: in agents that show MCP forms .*; not in claude -p, codex exec, opencode run, gemini -p, qwen -p, copilot -p: their approvals go to the channels below$/m);
    expect(stdout).toMatch(/^ +yes approvals page \(the link wrap prints\): the governance service can listen on 127\.0\.0\.1$/m);
    expect(stdout).toContain(`yes desktop notification: ${bin}/notify-send on display :0, with Allow once, Allow for this session and Deny buttons`);
    expect(stdout).toContain("yes Slack: configured, workflow oncall posts to C0123ABCD (1 approver, reactions); doctor does not contact Slack");
    expect(stdout).not.toContain("xoxb-test-token");
    expect(notify.notifications()).toEqual([]);
  });

  test("notify-send without a session bus (SSH, a container), without a display, or absent; Slack not configured", async () => {
    using home = tempDir();
    using empty = tempDir();
    using notify = fakeNotifySend(empty.path);
    const noBus = await doctor([], home.path, home.path, { ...notify.env, DISPLAY: ":0", XDG_RUNTIME_DIR: empty.path });
    expect(noBus.code).toBe(0);
    expect(noBus.stdout).toMatch(/^ +no  desktop notification: \S+\/notify-send is here, but no session bus \(\$DBUS_SESSION_BUS_ADDRESS unset, no \$XDG_RUNTIME_DIR\/bus\)/m);
    expect(noBus.stdout).toMatch(/^ +no  Slack: not configured/m);
    const noDisplay = await doctor([], home.path, home.path, { ...notify.env, DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus" });
    expect(noDisplay.stdout).toMatch(/^ +no  desktop notification: .* but no display \(\$DISPLAY and \$WAYLAND_DISPLAY unset\): no one would see it$/m);
    const none = await doctor([], home.path, home.path, { PATH: empty.path });
    expect(none.stdout).toMatch(/^ +no  desktop notification: no notify-send on PATH/m);
    const off = await doctor([], home.path, home.path, { ...notify.env, THOUGHTGATE_DESKTOP_NOTIFY: "0" });
    expect(off.stdout).toMatch(/^ +no  desktop notification: turned off \(\$THOUGHTGATE_DESKTOP_NOTIFY=0\)$/m);
  });
});

test("doctor says whose own tools are governed, and a Gemini CLI hook put in its settings by hand that is not ThoughtGate's as written is changed", async () => {
  using home = tempDir();
  touch(join(home.path, ".gemini", "settings.json"));
  await Bun.write(join(home.path, ".gemini", "settings.json"), JSON.stringify({ hooks: { BeforeTool: [{ matcher: ".*", hooks: [{ type: "command", command: "thoughtgate hook gemini" }] }] } }));
  const { code, stdout } = await doctor(["--json"], home.path, home.path);
  expect(code).toBe(0);
  const check = (JSON.parse(stdout) as Report).checks.find((c) => c.id === "agent-hooks");
  expect(check?.status).toBe("warn");
  expect(check?.data).toEqual({
    claudeCodeManaged: [],
    hooks: [
      { agent: "claude-code", path: join(home.path, ".claude", "settings.json"), enrolled: false, state: "missing" },
      { agent: "codex", path: join(home.path, ".codex", "hooks.json"), enrolled: false, state: "missing" },
      { agent: "gemini", path: join(home.path, ".gemini", "settings.json"), enrolled: false, state: "changed" },
    ],
  });
});
