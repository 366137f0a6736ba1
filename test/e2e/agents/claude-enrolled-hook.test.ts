/**
 * `thoughtgate enroll claude-code` keeps Claude Code's PreToolUse hook in ~/.claude/settings.json
 * (through the config guard) so plain runs of the real Claude Code are governed too: with Bash
 * allowed by Claude itself, `rm -rf ./data` is refused (outside a session the embedded default
 * has no one to ask) and `ls` runs. `doctor` says the hook is in place, and warns once it is
 * removed; `unenroll` puts the settings back byte for byte.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, describeRun, runAgent } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, requireBinary } from "../../support/harness.ts";

setDefaultTimeout(120_000);
requireBinary();

const SETTINGS = `{
    "env":   { "THOUGHTGATE_TEST": "1" },
    "permissions": { "allow": [] }
}
`;

function thoughtgate(args: string[], env: Record<string, string>, cwd: string) {
  const run = Bun.spawnSync([BINARY, ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

function agentHooksCheck(env: Record<string, string>, cwd: string) {
  const doctor = thoughtgate(["doctor", "--json"], env, cwd);
  return (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; details?: string[] }> }).checks.find((check) => check.id === "agent-hooks");
}

test("enroll claude-code governs plain runs' own tools through its hook; doctor sees it, and sees it gone; unenroll puts settings.json back byte for byte", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  mkdirSync(join(sandbox.home, ".claude"));
  const settings = join(sandbox.home, ".claude", "settings.json");
  writeFileSync(settings, SETTINGS);
  const enrolled = thoughtgate(["enroll", "claude-code"], sandbox.env, sandbox.project);
  expect(enrolled.code, enrolled.stderr + enrolled.stdout).toBe(0);
  expect(enrolled.stdout).toContain("its own tools (Bash, Read, Edit, Write, WebFetch, …) governed in every run: PreToolUse hook in");
  expect(readFileSync(settings, "utf8")).toContain("hook claude-code");
  expect(agentHooksCheck(sandbox.env, sandbox.project)?.details?.join("\n")).toContain("Claude Code: PreToolUse hook enrolled in ~/.claude/settings.json: its own tools governed in every run");

  await using model = startFakeAnthropic({
    calls: [
      { tool: "Bash", arguments: { command: "rm -rf ./data", description: "delete the data" } },
      { tool: "Bash", arguments: { command: "ls", description: "list" } },
    ],
    finalText: "Done.",
  });
  const env = { ...sandbox.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test", ENABLE_TOOL_SEARCH: "false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
  // A plain run, no wrap: Claude itself would run Bash unasked.
  const launch = { agent: "claude-code" as const, argv: [agentBinary("claude-code"), "-p", "Clean up, then list.", "--allowedTools", "Bash"], cwd: sandbox.project, env };
  const run = await runAgent(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  const results = model.toolResults.map(({ text }) => text);
  expect(results[0], why).toContain("ThoughtGate denied this shell call");
  expect(results[1], why).toContain("data");

  const unenrolled = thoughtgate(["unenroll", "claude-code"], sandbox.env, sandbox.project);
  expect(unenrolled.code, unenrolled.stderr).toBe(0);
  expect(readFileSync(settings, "utf8")).toBe(SETTINGS);

  // Enrolled again, then the hook taken out by hand: doctor warns.
  expect(thoughtgate(["enroll", "claude-code"], sandbox.env, sandbox.project).code).toBe(0);
  writeFileSync(settings, SETTINGS.replace('"permissions"', '"hooks": {},\n    "permissions"'));
  const check = agentHooksCheck(sandbox.env, sandbox.project);
  expect(check?.status).toBe("warn");
  expect(check?.details?.join("\n")).toContain("Claude Code: enrolled, but ThoughtGate's PreToolUse hook is missing from ~/.claude/settings.json: plain runs are not governed; fix: `thoughtgate enroll claude-code`");
  expect(thoughtgate(["unenroll", "claude-code"], sandbox.env, sandbox.project).code).toBe(0);
});

test("with $CLAUDE_CONFIG_DIR, enroll puts the hook in the settings.json Claude Code reads there, and doctor looks there too", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  const configDir = join(sandbox.home, "claude-config");
  mkdirSync(configDir);
  const settings = join(configDir, "settings.json");
  writeFileSync(settings, SETTINGS);
  const env = { ...sandbox.env, CLAUDE_CONFIG_DIR: configDir };
  const enrolled = thoughtgate(["enroll", "claude-code"], env, sandbox.project);
  expect(enrolled.code, enrolled.stderr + enrolled.stdout).toBe(0);
  expect(readFileSync(settings, "utf8")).toContain("hook claude-code");
  expect(existsSync(join(sandbox.home, ".claude", "settings.json"))).toBe(false);
  expect(agentHooksCheck(env, sandbox.project)?.details?.join("\n")).toContain("Claude Code: PreToolUse hook enrolled in ~/claude-config/settings.json");

  await using model = startFakeAnthropic({ calls: [{ tool: "Bash", arguments: { command: "rm -rf ./data", description: "delete the data" } }], finalText: "Done." });
  const agentEnv = { ...env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test", ENABLE_TOOL_SEARCH: "false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
  const launch = { agent: "claude-code" as const, argv: [agentBinary("claude-code"), "-p", "Clean up.", "--allowedTools", "Bash"], cwd: sandbox.project, env: agentEnv };
  const run = await runAgent(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  expect(model.toolResults[0]?.text, why).toContain("ThoughtGate denied this shell call");

  expect(thoughtgate(["unenroll", "claude-code"], env, sandbox.project).code).toBe(0);
  expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
});
