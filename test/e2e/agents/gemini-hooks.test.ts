/**
 * The real Gemini CLI 0.61 obeys `thoughtgate hook gemini` as its BeforeTool hook. wrap does not
 * install it for Gemini CLI yet (its session-only system settings file, GEMINI_CLI_SYSTEM_SETTINGS_PATH,
 * brings no hooks: tried), so the hook is put in ~/.gemini/settings.json as a person would, and
 * governs outside any session with the embedded default: with `--approval-mode yolo` (Gemini runs
 * everything itself), `rm -rf ./data` is refused and the directory stays, `ls` runs and its output
 * reaches the model, a write to the project's Gemini settings is refused, and all are in `thoughtgate log`.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, describeRun, gemini, runAgent } from "../../support/agents.ts";
import { startFakeGemini } from "../../support/fake-models/gemini.ts";
import { BINARY, requireBinary } from "../../support/harness.ts";

setDefaultTimeout(120_000);
requireBinary();

test("Gemini CLI's own run_shell_command and write_file go through thoughtgate hook gemini", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  const settingsFile = join(sandbox.home, ".gemini", "settings.json");
  await using model = startFakeGemini({
    calls: [
      { tool: "run_shell_command", arguments: { command: "rm -rf ./data" } },
      { tool: "run_shell_command", arguments: { command: "ls" } },
      // (Gemini CLI refuses a write outside the workspace itself: the project's settings are inside it.)
      { tool: "write_file", arguments: { file_path: join(sandbox.project, ".gemini", "settings.json"), content: '{ "hooks": {} }' } },
    ],
    finalText: "Done.",
  });
  const launch = gemini(sandbox, { model, servers: {}, scope: "user", prompt: "Clean up, list, reset your settings." });
  const settings = JSON.parse(readFileSync(settingsFile, "utf8")) as Record<string, unknown>;
  const hook = { type: "command", command: `${BINARY} hook gemini`, timeout: 600_000 };
  writeFileSync(settingsFile, `${JSON.stringify({ ...settings, hooks: { BeforeTool: [{ matcher: ".*", hooks: [hook] }] } }, null, 2)}\n`);
  const before = readFileSync(settingsFile, "utf8");
  const run = await runAgent(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  const results = model.toolResults.map(({ tool, text }) => [tool, text]);
  expect(results[0]?.[1], why).toContain("ThoughtGate denied this shell call: rule agent-ask");
  expect(results[1]?.[1], why).toContain("data");
  expect(results[2]?.[1], why).toContain("ThoughtGate denied this write call: rule agent-self-protection: deny");
  expect(readFileSync(settingsFile, "utf8")).toBe(before);
  expect(existsSync(join(sandbox.project, ".gemini"))).toBe(false);
  const log = Bun.spawnSync([BINARY, "log", "--server", "agent", "--json"], { env: sandbox.env, stdout: "pipe", stderr: "pipe" });
  expect(log.exitCode, log.stderr.toString()).toBe(0);
  const calls = log.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as { tool: string; arguments: { command?: string }; outcome: string });
  expect(calls.map((call) => [call.tool, call.arguments.command ?? null, call.outcome]).reverse()).toEqual([
    ["shell", "rm -rf ./data", "denied"],
    ["shell", "ls", "forwarded"],
    ["write", null, "denied"],
  ]);
});
