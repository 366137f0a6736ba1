/**
 * The real Codex 0.169's own tools under `thoughtgate wrap` (docs/governance.md, "Built-in tools"):
 * wrap gives Codex ThoughtGate's PreToolUse hook for the session on its command line (`-c`), with
 * the trust Codex requires for it, and asks Codex (its app-server's hook list) that the hook is
 * trusted before the banner says so. Codex is told to run everything unasked and unsandboxed
 * (approval_policy never, sandbox danger-full-access), so only ThoughtGate stands in the way.
 * Codex announces its exec_command as `Bash`. The refused command is `touch ../outside.txt` (a write
 * outside the project, which the embedded default asks a person about; here a policy rule says no
 * at once, as no one is there to answer), not `rm -rf ./data`: Codex refuses `rm -rf` by itself in
 * every mode, before any hook, so that call would prove nothing of ThoughtGate. `ls` runs and its output reaches the
 * model; both are in `thoughtgate log --session`; ~/.codex/config.toml is the same bytes after.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentSandbox, codex, describeRun } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { requireBinary } from "../../support/harness.ts";
import { runWrapped, sessionCalls, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);
requireBinary();


test("under wrap, Codex's own exec_command goes through ThoughtGate's trusted hook: a write outside refused, ls run, config.toml byte for byte", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  const outside = join(dirname(sandbox.project), "outside.txt");
  await using model = startFakeOpenAIResponses({
    calls: [
      { tool: "exec_command", arguments: { cmd: "touch ../outside.txt" } },
      { tool: "exec_command", arguments: { cmd: "ls" } },
    ],
    finalText: "Done.",
  });
  writeUserPolicy(
    sandbox,
    `schema: 1
governance:
  rules:
    - { id: no-touch, source: agent, match: shell, arguments: { command: { glob: "touch *" } }, action: deny }
`,
  );
  const launch = codex(sandbox, { model, servers: {}, scope: "user", prompt: "Make a file, then list." });
  const configPath = join(sandbox.home, ".codex", "config.toml");
  const before = readFileSync(configPath);
  // Codex's own permission mode: run everything, unasked and unsandboxed.
  const [program, subcommand, ...rest] = launch.argv;
  const everything = { ...launch, argv: [program as string, subcommand as string, "-c", 'sandbox_mode="danger-full-access"', ...rest] };
  const wrapped = throughWrap(everything);
  const run = await runWrapped(wrapped, sandbox, 90_000);
  const why = describeRun(wrapped, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain("Codex's own tools (its shell, apply_patch, …) go through ThoughtGate too: its PreToolUse hook, trusted for this session only");
  expect(existsSync(outside), why).toBe(false);
  const results = model.toolResults.map(({ text }) => text);
  expect(results[0], why).toContain("Command blocked by PreToolUse hook: ThoughtGate denied this shell call: rule no-touch");
  expect(results[1], why).toContain("data");
  // Codex takes a PreToolUse answer of "allow" for an unsupported one and says the hook failed: an allow is silence.
  expect(`${run.stdout}${run.stderr}`, why).not.toContain("PreToolUse Failed");
  // No MCP server here: the summary counts none, and no word about who asks for MCP tools.
  expect(run.stderr, why).toContain("session summary (0 MCP servers and the agent's own tools governed)");
  expect(run.stderr, why).not.toContain("--sole-approver");
  const calls = sessionCalls(wrapped.env, run.stderr).filter((call) => call.server === "agent");
  // `log` lists the newest first.
  expect(calls.map((call) => [call.tool, call.arguments.tool, call.arguments.command, call.outcome]).reverse()).toEqual([
    ["shell", "Bash", "touch ../outside.txt", "denied"],
    ["shell", "Bash", "ls", "forwarded"],
  ]);
  expect(readFileSync(configPath).equals(before), why).toBe(true);
});
