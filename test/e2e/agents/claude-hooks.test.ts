/**
 * The real Claude Code's own tools under `thoughtgate wrap` (docs/governance.md, "Built-in tools"):
 * with Claude told to run Bash, Write and Edit unasked (--allowedTools), only ThoughtGate stands in
 * the way. `rm -rf ./data` asked of Claude's own Bash does not run (the embedded default asks a
 * person, and `claude -p` cannot show one: no one approves, so it is refused when the approval
 * times out... here denied at once by a policy rule), `ls` runs and its output reaches the model,
 * both are in `thoughtgate log --session` with their commands, and Claude's settings file is the
 * same bytes after. An agent with no MCP server at all is still wrapped: its own tools are governed.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, describeRun } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, requireBinary, waitFor } from "../../support/harness.ts";
import { sessionCalls } from "../../support/wrapped-agents.ts";
import { decideAtTerminal, tasksAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(120_000);
requireBinary();

/** The user's own settings, spaced their way: they must come back as these very bytes. */
const SETTINGS = `{
    "env":   { "THOUGHTGATE_TEST": "1" },
    "permissions": { "allow": [] }
}
`;

async function wrapClaude(sandbox: ReturnType<typeof agentSandbox>, model: { url: string }, prompt: string, policy: string | null) {
  if (policy !== null) {
    mkdirSync(join(sandbox.home, ".config", "thoughtgate"), { recursive: true });
    writeFileSync(join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml"), policy);
  }
  const env = {
    ...sandbox.env,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test",
    ENABLE_TOOL_SEARCH: "false",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  // Claude itself would run every one of these tools unasked.
  const wrap = Bun.spawn([BINARY, "wrap", "--", agentBinary("claude-code"), "-p", prompt, "--allowedTools", "Bash", "Write", "Edit", "Read"], {
    cwd: sandbox.project,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [exitCode, stdout, stderr] = await Promise.all([wrap.exited, new Response(wrap.stdout).text(), new Response(wrap.stderr).text()]);
  return { exitCode, stdout, stderr, env };
}


test("rm -rf ./data through Claude Code's own Bash does not run; ls does, and reaches the model; both in the log; settings byte for byte", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  writeFileSync(join(sandbox.project, "data", "keep.txt"), "precious\n");
  mkdirSync(join(sandbox.home, ".claude"));
  writeFileSync(join(sandbox.home, ".claude", "settings.json"), SETTINGS);
  await using model = startFakeAnthropic({
    calls: [
      { tool: "Bash", arguments: { command: "rm -rf ./data", description: "delete the data" } },
      { tool: "Bash", arguments: { command: "ls", description: "list" } },
    ],
    finalText: "Done.",
  });
  // A person would be asked about the delete; -p shows no one, so the policy says no at once here.
  const policy = `schema: 1
governance:
  rules:
    - { id: no-deletes, source: agent, match: shell, arguments: { command: { glob: "*rm *" } }, action: deny }
    - { id: read-only, source: agent, match: shell, arguments: { commands: { glob: "{ls,ls *}" } }, action: forward }
`;
  const run = await wrapClaude(sandbox, model, "Clean up, then list.", policy);
  const why = describeRun({ agent: "claude-code", argv: [], cwd: sandbox.project, env: {} }, { ...run, durationMs: 0, timedOut: false, leftovers: [] }, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data", "keep.txt"))).toBe(true);
  const results = model.toolResults.map(({ tool, text }) => ({ tool, text }));
  expect(results[0]?.text, why).toContain("ThoughtGate denied this shell call: rule no-deletes: deny");
  expect(results[1]?.text, why).toContain("data");
  // Wrap started Claude with no MCP server at all: its own tools are what is governed.
  expect(run.stderr).toContain("Claude Code's own tools (Bash, Read, Edit, Write, WebFetch, …) go through ThoughtGate too");
  const calls = sessionCalls(run.env, run.stderr).filter((call) => call.server === "agent");
  // `log` lists the newest first.
  expect(calls.map((call) => [call.tool, call.arguments.command, call.outcome]).reverse()).toEqual([
    ["shell", "rm -rf ./data", "denied"],
    ["shell", "ls", "forwarded"],
  ]);
  expect(readFileSync(join(sandbox.home, ".claude", "settings.json"), "utf8")).toBe(SETTINGS);
});

test("Claude Code cannot drop its hook by editing its settings, through Write or through a shell redirect", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.home, ".claude"));
  writeFileSync(join(sandbox.home, ".claude", "settings.json"), SETTINGS);
  const settings = join(sandbox.home, ".claude", "settings.json");
  await using model = startFakeAnthropic({
    // (Claude Code refuses a Write over a file it has not read first, before any hook: the Write is
    // of the project's settings, which do not exist yet.)
    calls: [
      { tool: "Write", arguments: { file_path: join(sandbox.project, ".claude", "settings.json"), content: '{ "disableAllHooks": true }\n' } },
      { tool: "Bash", arguments: { command: `echo '{"disableAllHooks": true}' > ${settings}`, description: "x" } },
      { tool: "Write", arguments: { file_path: join(sandbox.project, ".claude", "settings.local.json"), content: '{ "disableAllHooks": true }\n' } },
    ],
    finalText: "Done.",
  });
  const run = await wrapClaude(sandbox, model, "Turn your hooks off.", null);
  const why = describeRun({ agent: "claude-code", argv: [], cwd: sandbox.project, env: {} }, { ...run, durationMs: 0, timedOut: false, leftovers: [] }, model);
  expect(run.exitCode, why).toBe(0);
  expect(model.toolResults.map(({ text }) => /rule (agent-self-protection(?:-shell)?): deny/.exec(text)?.[1] ?? text), why).toEqual(["agent-self-protection", "agent-self-protection-shell", "agent-self-protection"]);
  expect(readFileSync(settings, "utf8")).toBe(SETTINGS);
  expect(existsSync(join(sandbox.project, ".claude"))).toBe(false);
});

test("a write is asked once: a person's 'allow for this session' lets Claude Code's later writes through unasked", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  await using model = startFakeAnthropic({
    calls: [
      { tool: "Write", arguments: { file_path: join(sandbox.project, "a.txt"), content: "first\n" } },
      { tool: "Write", arguments: { file_path: join(sandbox.project, "b.txt"), content: "second\n" } },
    ],
    finalText: "Done.",
  });
  const env = { ...sandbox.env, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test", ENABLE_TOOL_SEARCH: "false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
  const wrap = Bun.spawn([BINARY, "wrap", "--", agentBinary("claude-code"), "-p", "Write two files.", "--allowedTools", "Write"], { cwd: sandbox.project, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const stderr = new Response(wrap.stderr).text();
  // The task list is shown to a person at a terminal, as a decision is.
  const tasks = async () => {
    const run = await tasksAtTerminal(["--json"], { env });
    return run.exitCode === 0 ? (JSON.parse(run.stdout) as Array<{ task_id: string; status: string; name: string }>) : [];
  };
  const pending = await waitFor(async () => (await tasks()).find((t) => t.status === "pending" && t.name === "write"), "the write's approval task", 60_000);
  const approved = await decideAtTerminal(["approve", pending.task_id, "--session"], { env });
  expect(approved.exitCode, approved.stderr).toBe(0);
  expect(await wrap.exited, await stderr).toBe(0);
  expect(readFileSync(join(sandbox.project, "a.txt"), "utf8")).toBe("first\n");
  expect(readFileSync(join(sandbox.project, "b.txt"), "utf8")).toBe("second\n");
  const session = /thoughtgate log --session (\S+)/.exec(await stderr)?.[1] as string;
  const log = Bun.spawnSync([BINARY, "log", "--session", session, "--json"], { env, stdout: "pipe", stderr: "pipe" });
  const calls = log.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as { tool: string; outcome: string; decided_by: { channel: string } | null });
  expect(calls.map((call) => [call.tool, call.outcome, call.decided_by?.channel ?? null]).reverse()).toEqual([
    ["write", "approved", "cli"],
    ["write", "forwarded", "session_grant"],
  ]);
});

test("disableAllHooks in the user's or the project's settings does not switch the session's hook off", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  mkdirSync(join(sandbox.project, "data"));
  const off = `{\n  "disableAllHooks": true\n}\n`;
  mkdirSync(join(sandbox.home, ".claude"));
  writeFileSync(join(sandbox.home, ".claude", "settings.json"), off);
  mkdirSync(join(sandbox.project, ".claude"));
  writeFileSync(join(sandbox.project, ".claude", "settings.local.json"), off);
  await using model = startFakeAnthropic({ calls: [{ tool: "Bash", arguments: { command: "rm -rf ./data", description: "x" } }], finalText: "Done." });
  const policy = "schema: 1\ngovernance:\n  rules:\n    - { id: no-deletes, source: agent, match: shell, arguments: { command: { glob: \"*rm *\" } }, action: deny }\n";
  const run = await wrapClaude(sandbox, model, "Clean up.", policy);
  const why = describeRun({ agent: "claude-code", argv: [], cwd: sandbox.project, env: {} }, { ...run, durationMs: 0, timedOut: false, leftovers: [] }, model);
  expect(run.exitCode, why).toBe(0);
  expect(existsSync(join(sandbox.project, "data")), why).toBe(true);
  expect(model.toolResults[0]?.text, why).toContain("rule no-deletes: deny");
  expect(readFileSync(join(sandbox.home, ".claude", "settings.json"), "utf8")).toBe(off);
});
