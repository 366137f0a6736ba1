/**
 * `thoughtgate wrap` where the agent's own tools are all there is to govern, or where they could
 * not be governed (docs/governance.md, "Built-in tools"), with the real agents and their fake model
 * APIs:
 * - Claude Code with no MCP server configured at all runs under wrap, its hook installed, and wrap
 *   says so in one line: `rm -rf ./data` refused (a rule says no at once: `claude -p` shows no one
 *   to ask), `ls` run; and it runs with MCP_CONNECTION_NONBLOCKING=false, which wrap sets.
 * - Gemini CLI with no ~/.gemini/settings.json: wrap makes the file for the hook and removes it at
 *   the end, so no file is left that was not there.
 * - Codex given a hook override that leaves ThoughtGate's hook out (Codex would skip it silently):
 *   wrap refuses to start the agent, in one line with the fix, instead of running it ungoverned.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, codex, describeRun, gemini } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { startFakeGemini } from "../../support/fake-models/gemini.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { requireBinary } from "../../support/harness.ts";
import { NO_DELETES_POLICY, runWrapped, throughWrap, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);
requireBinary();


test("wrap -- claude with no MCP server at all runs with its hook, says so in one line, and governs its Bash", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeAnthropic({
    calls: [
      { tool: "Bash", arguments: { command: "rm -rf ./data", description: "delete the data" } },
      { tool: "Bash", arguments: { command: "ls", description: "list" } },
    ],
    finalText: "Done.",
  });
  // A hook of the user's own records the environment Claude Code runs with: wrap sets
  // MCP_CONNECTION_NONBLOCKING=false in it (so `claude -p` connects governed servers before its first turn).
  const seen = join(sandbox.home, "nonblocking");
  mkdirSync(join(sandbox.home, ".claude"));
  writeFileSync(join(sandbox.home, ".claude", "settings.json"), `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `printenv MCP_CONNECTION_NONBLOCKING > ${seen}` }] }] } })}\n`);
  const env = { ...sandbox.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test", ENABLE_TOOL_SEARCH: "false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
  const launch = throughWrap({ agent: "claude-code", argv: [agentBinary("claude-code"), "-p", "Clean up, then list.", "--allowedTools", "Bash"], cwd: sandbox.project, env });
  const run = await runWrapped(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr.split("\n").filter((line) => line.includes("no MCP server to govern")), why).toEqual(["thoughtgate: claude-code has no MCP server to govern: its own tools go through ThoughtGate's hook"]);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  const results = model.toolResults.map(({ text }) => text);
  expect(results[0], why).toContain("ThoughtGate denied this shell call: rule no-deletes");
  expect(results[1], why).toContain("data");
  expect(readFileSync(seen, "utf8"), why).toBe("false\n");
});

test("wrap -- gemini with no ~/.gemini/settings.json: the hook's file is made for the session and gone after", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeGemini({
    calls: [
      { tool: "run_shell_command", arguments: { command: "rm -rf ./data" } },
      { tool: "run_shell_command", arguments: { command: "ls" } },
    ],
    finalText: "Done.",
  });
  // The API key's auth is chosen in the project's settings (a trusted folder), so the user's file can be absent.
  const projectSettings = { security: { auth: { selectedType: "gemini-api-key" } } };
  const launch = throughWrap(gemini(sandbox, { model, servers: {}, scope: "user", prompt: "Clean up, then list.", projectSettings }));
  const settings = join(sandbox.home, ".gemini", "settings.json");
  rmSync(settings);
  const run = await runWrapped(launch, sandbox, 90_000);
  const why = describeRun(launch, run, model);
  expect(run.exitCode, why).toBe(0);
  expect(run.stderr, why).toContain(`its BeforeTool hook, in ${settings} for this session (created for it, removed after)`);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  expect(model.toolResults.map(({ text }) => text)[0], why).toContain("ThoughtGate denied this shell call: rule no-deletes");
  expect(existsSync(settings), why).toBe(false);
});

test("wrap -- codex whose own -c hooks override leaves ThoughtGate's hook out: refused before the agent starts, one line with the fix", async () => {
  await using sandbox = agentSandbox();
  await using model = startFakeOpenAIResponses({ calls: [{ tool: "exec_command", arguments: { cmd: "ls" } }], finalText: "Done." });
  const launch = codex(sandbox, { model, servers: {}, scope: "user", prompt: "List." });
  const [program, subcommand, ...rest] = launch.argv;
  const overridden = throughWrap({ ...launch, argv: [program as string, subcommand as string, "-c", "hooks.PreToolUse=[]", ...rest] });
  const run = await runWrapped(overridden, sandbox, 90_000);
  const why = describeRun(overridden, run, model);
  expect(run.exitCode, why).not.toBe(0);
  expect(run.stderr.split("\n").filter((line) => line.startsWith("[error]")), why).toEqual([
    "[error] Codex will not run ThoughtGate's hook (Codex does not list ThoughtGate's hook (another PreToolUse hook given with -c takes its place?)), so its own tools (shell, apply_patch, …) would run ungoverned; the agent was not started (remove what overrides hooks from its command line or config, see `thoughtgate doctor`; or pass --allow-ungoverned to run it with only its MCP servers governed)",
  ]);
  expect(model.requests, why).toEqual([]);
});

test("wrap -- claude --bare (hooks off) is refused before the agent starts; with --allow-ungoverned it runs and the banner says its own tools are not governed", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, "data"));
  writeUserPolicy(sandbox, NO_DELETES_POLICY);
  await using model = startFakeAnthropic({ calls: [{ tool: "Bash", arguments: { command: "ls", description: "list" } }], finalText: "Done." });
  const env = { ...sandbox.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test", ENABLE_TOOL_SEARCH: "false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
  const bare = { agent: "claude-code" as const, argv: [agentBinary("claude-code"), "--bare", "-p", "List.", "--allowedTools", "Bash"], cwd: sandbox.project, env };
  const refused = throughWrap(bare);
  const run = await runWrapped(refused, sandbox, 90_000);
  const why = describeRun(refused, run, model);
  expect(run.exitCode, why).not.toBe(0);
  expect(run.stderr.split("\n").filter((line) => line.startsWith("[error]")), why).toEqual([
    "[error] --bare turns Claude Code's hooks off, so its own tools (shell, edits, writes, …) would run ungoverned; the agent was not started (drop --bare; or pass --allow-ungoverned to run it with only its MCP servers governed)",
  ]);
  expect(model.requests, why).toEqual([]);

  const allowed = throughWrap(bare, { flags: ["--allow-ungoverned"] });
  const ran = await runWrapped(allowed, sandbox, 90_000);
  const ranWhy = describeRun(allowed, ran, model);
  expect(ran.exitCode, ranWhy).toBe(0);
  expect(ran.stderr, ranWhy).toContain("thoughtgate: warning: --allow-ungoverned: --bare turns Claude Code's hooks off: its own tools (Bash, Edit, Write, …) are not governed this session, only its MCP servers");
});
