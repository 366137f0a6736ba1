/**
 * The real Codex 0.169 obeys `thoughtgate hook codex` as its PreToolUse hook. wrap does not install
 * it for Codex yet: Codex runs only hooks it trusts by hash (`[hooks.state."<key>"] trusted_hash`),
 * and wrap must establish that trust the way Codex does, never assume it. Here the hook is put in
 * ~/.codex/hooks.json by hand and the run says `--dangerously-bypass-hook-trust` (this test's
 * stand-in for the trust a person gives once). Codex announces its exec_command as `Bash`; outside
 * any session the embedded default decides: `touch created.txt` is refused (asked, and no one can
 * be asked here), so the file is not made; `ls` runs and its output reaches the model; both are
 * in `thoughtgate log`. (Codex refuses `rm -rf` by itself, so the refused command is another.)
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, codex, describeRun, runAgent } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { BINARY, requireBinary } from "../../support/harness.ts";

setDefaultTimeout(120_000);
requireBinary();

test("Codex's own exec_command goes through thoughtgate hook codex: a write refused, ls run", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, "data"));
  await using model = startFakeOpenAIResponses({
    calls: [
      { tool: "exec_command", arguments: { cmd: "touch created.txt" } },
      { tool: "exec_command", arguments: { cmd: "ls" } },
    ],
    finalText: "Done.",
  });
  const launch = codex(sandbox, { model, servers: {}, scope: "user", prompt: "Make a file, then list." });
  const hook = { type: "command", command: `${BINARY} hook codex`, timeout: 600 };
  writeFileSync(join(sandbox.home, ".codex", "hooks.json"), `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: ".*", hooks: [hook] }] } }, null, 2)}\n`);
  const [program, subcommand, ...rest] = launch.argv;
  const trusted = { ...launch, argv: [program as string, subcommand as string, "--dangerously-bypass-hook-trust", ...rest] };
  const run = await runAgent(trusted, sandbox, 90_000);
  const why = describeRun(trusted, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "created.txt")), why).toBe(false);
  const results = model.toolResults.map(({ text }) => text);
  expect(results[0], why).toContain("Command blocked by PreToolUse hook: ThoughtGate denied this shell call: rule agent-ask");
  expect(results[1], why).toContain("data");
  const log = Bun.spawnSync([BINARY, "log", "--server", "agent", "--json"], { env: sandbox.env, stdout: "pipe", stderr: "pipe" });
  expect(log.exitCode, log.stderr.toString()).toBe(0);
  const calls = log.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as { tool: string; arguments: { command?: string; tool?: string }; outcome: string });
  expect(calls.map((call) => [call.tool, call.arguments.tool, call.arguments.command, call.outcome]).reverse()).toEqual([
    ["shell", "Bash", "touch created.txt", "denied"],
    ["shell", "Bash", "ls", "forwarded"],
  ]);
});
