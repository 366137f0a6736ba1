/**
 * A broken policy is never silent, through the compiled binary: `enroll` refuses it with every
 * problem and changes nothing; a shim an enrolled agent starts on a policy broken since answers the
 * agent's `initialize` (and each request after it) with the file, the problem and the fix, and
 * starts no server; `doctor` names it under the policy and under the enrolled agents.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { runBinary } from "../support/serve.ts";

const GOOD = "schema: 1\ngovernance:\n  rules:\n    - { id: no-deletes, match: delete_*, action: deny }\n";
const BROKEN = "schema: 1\ngovernance:\n  rules:\n    - { id: no-deletes, mach: delete_*, action: deny }\n    - { id: x, match: '*', action: allow }\n";

function sandbox(home: string) {
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".local", "state"), THOUGHTGATE_CONFIG: undefined, THOUGHTGATE_SESSION: undefined };
  const policy = join(home, ".config", "thoughtgate", "thoughtgate.yaml");
  mkdirSync(join(home, ".config", "thoughtgate"), { recursive: true });
  const config = join(home, ".claude.json");
  return { env, policy, config };
}

/** Run the entry the agent's config holds as the agent would, send `initialize` then `tools/list`, and read what comes back. */
async function asTheAgent(entry: { command: string; args: string[] }, env: Record<string, string | undefined>, cwd: string) {
  await using proc = Bun.spawn([entry.command, ...entry.args], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env }, cwd });
  proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "agent", version: "1" } } })}\n`);
  proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
  await proc.stdin.end();
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { answers: stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as { id: number; error?: { code: number; message: string; data: Record<string, unknown> } }), stderr, exitCode };
}

describe("a broken policy is never silent", () => {
  test("enroll refuses an invalid policy with every problem, each at its line, and leaves the agent's config as it was", async () => {
    using home = tempDir();
    const { env, policy, config } = sandbox(home.path);
    writeFileSync(policy, BROKEN);
    const original = '{ "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] } } }\n';
    writeFileSync(config, original);
    const result = await runBinary(["enroll", "claude-code"], { env, cwd: home.path });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`[error] ${policy}: 2 problems\n`);
    expect(result.stderr).toContain(`  ${policy}:4:25: governance.rules[0].mach: unknown key "mach" (did you mean "match"?)`);
    expect(result.stderr).toContain(`  ${policy}:5:36: governance.rules[1].action: expected one of forward|deny|approve|policy, got "allow" (did you mean "forward"?)`);
    expect(result.stderr).toContain("not enrolled: the agent's servers would refuse to start on this policy");
    expect(readFileSync(config, "utf8")).toBe(original);
  });

  test("an enrolled agent's server on a policy broken since: initialize answered with the file, the problem and the fix; the server never started; doctor names it", async () => {
    using home = tempDir();
    const { env, policy, config } = sandbox(home.path);
    writeFileSync(policy, GOOD);
    const started = join(home.path, "server-started");
    writeFileSync(config, JSON.stringify({ mcpServers: { notes: { command: "sh", args: ["-c", `touch ${started}; cat`] } } }));
    const enrolled = await runBinary(["enroll", "claude-code"], { env, cwd: home.path });
    expect(enrolled).toMatchObject({ exitCode: 0 });
    writeFileSync(policy, BROKEN);

    const entry = (JSON.parse(readFileSync(config, "utf8")) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers.notes;
    if (!entry) throw new Error("the enrolled entry is gone");
    const run = await asTheAgent(entry, env, home.path);
    expect(run.answers.map((answer) => [answer.id, answer.error?.code])).toEqual([
      [1, -32013],
      [2, -32013],
    ]);
    const error = run.answers[0]?.error;
    expect(error?.message).toBe(
      `ThoughtGate did not start server notes: its policy ${policy} has 2 problems; correct it (\`thoughtgate validate-config\` lists every problem with its line), then restart the agent or reconnect the server. First: line 4, column 25: governance.rules[0].mach: unknown key "mach" (did you mean "match"?); allowed keys: id, match, method, source, server, annotations, arguments, project, action, policy_id, approval (and 1 more)`,
    );
    expect(error?.data).toMatchObject({ gate: "governance", server_id: "notes", file: policy, problems: [expect.stringContaining(":4:25: "), expect.stringContaining(":5:36: ")] });
    expect(run.stderr).toContain("ThoughtGate did not start server notes: its policy");
    expect(run.exitCode).toBe(1);
    expect(existsSync(started)).toBe(false);

    const doctor = await runBinary(["doctor"], { env, cwd: home.path });
    expect(doctor.exitCode).toBe(1);
    expect(doctor.stdout).toMatch(/^FAIL  policy +~\/\.config\/thoughtgate\/thoughtgate\.yaml is invalid/m);
    expect(doctor.stdout).toMatch(/^FAIL  enrolled agents +claude-code: the policy is invalid, so every enrolled server refuses to start \(each answers the agent with the problem\)$/m);
    await runBinary(["unenroll", "claude-code"], { env, cwd: home.path });
  });

  test("wrap refuses an invalid policy with every problem before it touches anything", async () => {
    using home = tempDir();
    const { env, policy, config } = sandbox(home.path);
    writeFileSync(policy, BROKEN);
    const original = '{ "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] } } }\n';
    writeFileSync(config, original);
    const result = await runBinary(["wrap", "--agent-type", "claude-code", "--", "true"], { env, cwd: home.path });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${policy}:4:25: governance.rules[0].mach: unknown key "mach"`);
    expect(result.stderr).toContain(`${policy}:5:36: governance.rules[1].action: expected one of`);
    expect(readFileSync(config, "utf8")).toBe(original);
  });
});
