/**
 * `thoughtgate enroll codex` keeps Codex's PreToolUse hook in ~/.codex/hooks.json, trusted in
 * config.toml (src/wrap/enrolled-hooks.ts), so a plain run of the real Codex 0.169 (`codex exec`,
 * no wrap) runs it: Codex skips a hook it does not trust without a word, so this is the proof that
 * the trust is the one Codex computes. Codex is told to run everything unasked and unsandboxed, so
 * only ThoughtGate stands in the way: `rm -rf ./data` is refused by the hook (outside a session the
 * embedded default has no one to ask about a delete) and the directory stays; `ls` runs. Then
 * `unenroll` puts config.toml back byte for byte and removes the hooks.json it made. A wrap on top
 * gives no second hook on Codex's command line: each call is decided and recorded once.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentBinary, agentSandbox, codex, describeRun, runAgent } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { BINARY, requireBinary } from "../../support/harness.ts";
import { runWrapped, sessionCalls, throughWrap } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);
requireBinary();

function thoughtgate(args: string[], env: Record<string, string>, cwd: string) {
  const run = Bun.spawnSync([BINARY, ...args], { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

test("enroll codex: a plain `codex exec` runs ThoughtGate's hook (trusted as Codex computes it): rm -rf ./data refused, ls run; unenroll puts config.toml back", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  await using model = startFakeOpenAIResponses({
    calls: [
      { tool: "exec_command", arguments: { cmd: "rm -rf ./data" } },
      { tool: "exec_command", arguments: { cmd: "ls" } },
    ],
    finalText: "Done.",
  });
  const launch = codex(sandbox, { model, servers: {}, scope: "user", prompt: "Clean up, then list." });
  const configPath = join(sandbox.home, ".codex", "config.toml");
  const before = readFileSync(configPath);
  // With the pinned Codex on PATH, enroll asks Codex itself whether it trusts the hook.
  const enrolled = thoughtgate(["enroll", "codex"], { ...sandbox.env, PATH: `${dirname(agentBinary("codex"))}:${sandbox.env.PATH}` }, sandbox.project);
  expect(enrolled.code, enrolled.stderr + enrolled.stdout).toBe(0);
  expect(enrolled.stdout).toContain("PreToolUse hook in ~/.codex/hooks.json and trusted in config.toml\nCodex: Codex itself lists the hook as trusted (codex app-server)\n");

  // A plain run, no wrap; Codex's own permission mode: run everything, unasked and unsandboxed.
  const [program, subcommand, ...rest] = launch.argv;
  const everything = { ...launch, argv: [program as string, subcommand as string, "-c", 'sandbox_mode="danger-full-access"', ...rest] };
  const run = await runAgent(everything, sandbox, 90_000);
  const why = describeRun(everything, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  const results = model.toolResults.map(({ text }) => text);
  expect(results[0], why).toContain("Command blocked by PreToolUse hook: ThoughtGate denied this shell call");
  expect(results[1], why).toContain("data");

  const unenrolled = thoughtgate(["unenroll", "codex"], sandbox.env, sandbox.project);
  expect(unenrolled.code, unenrolled.stderr).toBe(0);
  expect(readFileSync(configPath).equals(before)).toBe(true);
  expect(existsSync(join(sandbox.home, ".codex", "hooks.json"))).toBe(false);
});

test("wrap -- codex on an enrolled Codex asks Codex about the enrolled hook and gives no second one: each call decided and recorded once", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  await using model = startFakeOpenAIResponses({ calls: [{ tool: "exec_command", arguments: { cmd: "ls" } }], finalText: "Done." });
  const launch = codex(sandbox, { model, servers: {}, scope: "user", prompt: "List." });
  expect(thoughtgate(["enroll", "codex"], sandbox.env, sandbox.project).code).toBe(0);
  const [program, subcommand, ...rest] = launch.argv;
  const wrapped = throughWrap({ ...launch, argv: [program as string, subcommand as string, "-c", 'sandbox_mode="danger-full-access"', ...rest] });
  const run = await runWrapped(wrapped, sandbox, 90_000);
  const why = describeRun(wrapped, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain("its enrolled PreToolUse hook (hooks.json, trusted in config.toml; no second one given for the session)");
  const calls = sessionCalls(wrapped.env, run.stderr).filter((call) => call.server === "agent");
  expect(calls.map((call) => [call.arguments.command, call.outcome]), why).toEqual([["ls", "forwarded"]]);
  expect(thoughtgate(["unenroll", "codex"], sandbox.env, sandbox.project).code).toBe(0);
});
