/**
 * `thoughtgate hook <agent>` through the compiled binary, outside any wrap session: the agent's hook
 * input in, the agent's answer out, the user's policy (here the embedded default) deciding in the
 * hook's own process, the call in `thoughtgate log`. Every failure blocks with the agent's blocking
 * exit code and one line.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox } from "../support/agents.ts";
import { BINARY, FIXTURES, requireBinary } from "../support/harness.ts";

setDefaultTimeout(30_000);
requireBinary();

type Run = { exitCode: number; stdout: string; stderr: string };

function hook(agent: string, input: unknown, env: Record<string, string>, cwd: string): Run {
  const run = Bun.spawnSync([BINARY, "hook", agent], { cwd, env, stdin: new TextEncoder().encode(typeof input === "string" ? input : JSON.stringify(input)), stdout: "pipe", stderr: "pipe" });
  return { exitCode: run.exitCode ?? -1, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

function claudeDecision(run: Run): [string, string] {
  expect(run.exitCode, run.stderr).toBe(0);
  const out = JSON.parse(run.stdout) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } };
  expect(out.hookSpecificOutput.hookEventName).toBe("PreToolUse");
  return [out.hookSpecificOutput.permissionDecision, out.hookSpecificOutput.permissionDecisionReason];
}

describe("thoughtgate hook, outside a wrap session", () => {
  test("Claude Code: a read-only command is allowed, a delete refused (no one to ask), its settings protected, an MCP tool left to its shim; all in the log", async () => {
    await using sandbox = agentSandbox();
    mkdirSync(join(sandbox.project, ".git"));
    const call = (tool_name: string, tool_input: Record<string, unknown>) => hook("claude-code", { hook_event_name: "PreToolUse", cwd: sandbox.project, tool_name, tool_input }, sandbox.env, sandbox.project);

    expect(claudeDecision(call("Bash", { command: "ls -la" }))).toEqual(["allow", "ThoughtGate: rule agent-read-only-shell: forward"]);
    const [deleted, why] = claudeDecision(call("Bash", { command: "ls && rm -rf ./data" }));
    expect(deleted).toBe("deny");
    expect(why).toContain("rule agent-ask: approval required, but no approval channel is available");
    expect(claudeDecision(call("Write", { file_path: join(sandbox.home, ".claude", "settings.json"), content: "{}" }))).toEqual(["deny", "ThoughtGate denied this write call: rule agent-self-protection: deny"]);
    expect(claudeDecision(call("Bash", { command: "echo '{}' > ~/.claude/settings.json" }))[1]).toContain("agent-self-protection-shell");
    expect(claudeDecision(call("Read", { file_path: join(sandbox.home, ".ssh", "id_ed25519") }))[1]).toContain("agent-secret-files");
    // A line the parser cannot read is never allowed, even with a `commands` list of the agent's own.
    expect(claudeDecision(call("Bash", { command: "ls; $(echo rm) -rf /", commands: ["ls"] }))[0]).toBe("deny");
    // An MCP server's tool: no answer (the agent's own rules and the server's shim apply).
    expect(call("mcp__notes__delete_note", { id: "a" })).toEqual({ exitCode: 0, stdout: "", stderr: "" });

    const log = Bun.spawnSync([BINARY, "log", "--json"], { env: sandbox.env, stdout: "pipe", stderr: "pipe" });
    expect(log.exitCode, log.stderr.toString()).toBe(0);
    const calls = log.stdout.toString().trim().split("\n").map((line) => JSON.parse(line) as { server: string; tool: string; arguments: { command?: string }; outcome: string });
    const shell = calls.filter((c) => c.tool === "shell").map((c) => [c.server, c.arguments.command, c.outcome]);
    expect(shell).toContainEqual(["agent", "ls -la", "forwarded"]);
    expect(shell).toContainEqual(["agent", "ls && rm -rf ./data", "denied"]);
    expect(calls.filter((c) => c.tool === "mcp__notes__delete_note")).toEqual([]);
    // Recorded as an MCP call is (the same stages and record): a refused call ends there, with its gate, rule and latency.
    const refused = calls.find((c) => c.tool === "shell" && c.arguments.command === "ls && rm -rf ./data") as Record<string, unknown> | undefined;
    expect(refused).toMatchObject({ method: "tools/call", decision: "deny", gate: "approval", rule_id: "agent-ask", status: "denied", latency_ms: expect.any(Number), bytes_out: 0 });
  });

  test("a policy of the user's that lets every agent tool through still cannot let the agent rewrite its hook settings or ThoughtGate's policy", async () => {
    await using sandbox = agentSandbox();
    const config = join(sandbox.home, ".config", "thoughtgate");
    mkdirSync(config, { recursive: true });
    // What one "always" answer or a person's own edit leaves: a policy file with no agent rules, or one that forwards them all.
    await Bun.write(join(config, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules:\n    - { id: agent-self-protection, source: agent, match: '*', action: forward }\n    - { id: all-agent-tools, source: agent, match: '*', action: forward }\n");
    const call = (tool_name: string, tool_input: Record<string, unknown>) => hook("claude-code", { hook_event_name: "PreToolUse", cwd: sandbox.project, tool_name, tool_input }, sandbox.env, sandbox.project);
    expect(claudeDecision(call("Bash", { command: "rm -rf ./data" }))[0]).toBe("allow");
    expect(claudeDecision(call("Write", { file_path: join(sandbox.home, ".claude", "settings.json"), content: "{}" }))).toEqual(["deny", "ThoughtGate denied this write call: rule agent-self-protection: deny"]);
    expect(claudeDecision(call("Edit", { file_path: join(config, "thoughtgate.yaml"), old_string: "forward", new_string: "deny" }))[0]).toBe("deny");
    expect(claudeDecision(call("Bash", { command: "echo '{}' > ~/.claude/settings.json" }))[1]).toContain("agent-self-protection-shell");
  });

  test("Codex and Gemini CLI answer in their own formats", async () => {
    await using sandbox = agentSandbox();
    const codex = hook("codex", { hook_event_name: "PreToolUse", cwd: sandbox.project, tool_name: "Bash", tool_input: { command: "rm -rf ./data" } }, sandbox.env, sandbox.project);
    expect(codex.exitCode).toBe(0);
    expect(JSON.parse(codex.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    const gemini = hook("gemini", { hook_event_name: "BeforeTool", cwd: sandbox.project, tool_name: "run_shell_command", tool_input: { command: "ls" } }, sandbox.env, sandbox.project);
    expect(gemini.exitCode).toBe(0);
    expect(JSON.parse(gemini.stdout)).toEqual({ decision: "allow", reason: "ThoughtGate: rule agent-read-only-shell: forward" });
    const refused = hook("gemini", { hook_event_name: "BeforeTool", cwd: sandbox.project, tool_name: "write_file", tool_input: { file_path: join(sandbox.home, ".gemini", "settings.json"), content: "{}" } }, sandbox.env, sandbox.project);
    expect(JSON.parse(refused.stdout)).toEqual({ decision: "deny", reason: "ThoughtGate denied this write call: rule agent-self-protection: deny" });
  });

  test("opencode's plugin and Copilot CLI's hook: their own tools normalised, their answers in their formats, other tools decided under their own names", async () => {
    await using sandbox = agentSandbox();
    mkdirSync(join(sandbox.project, ".git"));
    const opencode = (tool_name: string, tool_input: Record<string, unknown>) => JSON.parse(hook("opencode", { hook_event_name: "tool.execute.before", cwd: sandbox.project, tool_name, tool_input }, sandbox.env, sandbox.project).stdout) as unknown;
    expect(opencode("bash", { command: "ls", description: "List" })).toEqual({ decision: "allow", reason: "ThoughtGate: rule agent-read-only-shell: forward" });
    expect(opencode("read", { filePath: join(sandbox.project, "a.txt") })).toEqual({ decision: "allow", reason: "ThoughtGate: rule agent-read-project: forward" });
    expect(opencode("write", { filePath: join(sandbox.home, ".config", "opencode", "opencode.json"), content: "{}" })).toEqual({ decision: "deny", reason: "ThoughtGate denied this write call: rule agent-self-protection: deny" });
    expect(opencode("edit", { filePath: join(sandbox.project, ".opencode", "plugins", "x.js"), oldString: "a", newString: "b" })).toEqual({ decision: "deny", reason: "ThoughtGate denied this edit call: rule agent-self-protection: deny" });
    // Outside a session an MCP server's tool cannot be told from a plugin's: no answer (its shim, if any, decides).
    expect(opencode("notes_delete_note", { id: "a" })).toEqual({ decision: "none" });

    const copilot = (toolName: string, toolArgs: unknown) => JSON.parse(hook("copilot", { sessionId: "s", timestamp: 1, cwd: sandbox.project, toolName, toolArgs }, sandbox.env, sandbox.project).stdout) as unknown;
    expect(copilot("bash", { command: "ls" })).toEqual({ permissionDecision: "allow", permissionDecisionReason: "ThoughtGate: rule agent-read-only-shell: forward" });
    // toolArgs as JSON text, as some versions send it.
    expect(copilot("view", JSON.stringify({ path: join(sandbox.home, ".ssh", "id_ed25519") }))).toEqual({ permissionDecision: "deny", permissionDecisionReason: "ThoughtGate denied this read call: rule agent-secret-files: deny" });
    expect(copilot("create", { path: join(sandbox.home, ".copilot", "settings.json"), file_text: "{}" })).toEqual({ permissionDecision: "deny", permissionDecisionReason: "ThoughtGate denied this write call: rule agent-self-protection: deny" });
    const garbage = hook("opencode", "not json", sandbox.env, sandbox.project);
    expect([garbage.exitCode, garbage.stdout]).toEqual([2, ""]);
    expect(garbage.stderr).toContain("thoughtgate hook: blocked: the hook's input is not JSON");
  });

  test("what cannot be decided blocks with the blocking exit code and one line", async () => {
    await using sandbox = agentSandbox();
    const garbage = hook("claude-code", "not json", sandbox.env, sandbox.project);
    expect(garbage.exitCode).toBe(2);
    expect(garbage.stdout).toBe("");
    expect(garbage.stderr.trim().split("\n")).toHaveLength(1);
    expect(garbage.stderr).toContain("thoughtgate hook: blocked: the hook's input is not JSON");
    // A broken policy file: no decision, so the call is blocked, never allowed.
    mkdirSync(join(sandbox.home, ".config", "thoughtgate"), { recursive: true });
    await Bun.write(join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml"), "schema: 1\ngovernance: [\n");
    const broken = hook("claude-code", { tool_name: "Bash", tool_input: { command: "ls" }, cwd: sandbox.project }, sandbox.env, sandbox.project);
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain("thoughtgate hook: blocked:");
    // An ended session (a name that is no session): blocked, saying how to fix it.
    const ended = hook("claude-code", { tool_name: "Bash", tool_input: { command: "ls" }, cwd: sandbox.project }, { ...sandbox.env, THOUGHTGATE_SESSION: "no-such-session" }, sandbox.project);
    expect(JSON.parse(ended.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(JSON.parse(ended.stdout).hookSpecificOutput.permissionDecisionReason).toContain("restart the agent");
    // An unknown agent is a usage error, which is the blocking code too.
    expect(hook("cursor", { tool_name: "Bash", tool_input: {} }, sandbox.env, sandbox.project).exitCode).toBe(2);
  });
});

describe("thoughtgate hook, in a wrap session of Claude Code", () => {
  test("an MCP tool of a server the session governs is allowed (its shim decides and asks); an ungoverned server's tool gets no answer", async () => {
    await using sandbox = agentSandbox();
    mkdirSync(join(sandbox.project, ".git"));
    const stdio = { command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] };
    const sse = (port: number) => ({ type: "sse", url: `http://127.0.0.1:${port}/sse` });
    writeFileSync(
      join(sandbox.home, ".claude.json"),
      JSON.stringify({
        mcpServers: {
          notes: stdio,
          // Claude Code names its tools mcp__my_docs__…
          "my.docs": stdio,
          // The old HTTP+SSE transport: wrap cannot govern it (run here with --allow-ungoverned).
          "remote-notes": sse(1),
          // A governed name one of whose tools' names an ungoverned server's could be: mcp__tools__x__y.
          tools: stdio,
          tools__x: sse(2),
        },
      }),
    );
    // The stand-in is started as `claude`, so wrap gives it Claude Code's hook (--settings).
    const bin = join(sandbox.root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\nexec '${process.execPath}' '${join(FIXTURES, "claude-hook-runner-fixture.ts")}' "$@"\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const out = join(sandbox.root, "answers.json");
    const tools = ["mcp__notes__delete_note", "mcp__my_docs__read", "mcp__remote-notes__fetch", "mcp__tools__x__y", "mcp__elsewhere__run", "mcp__notes__"];
    const wrap = Bun.spawnSync([BINARY, "wrap", "--allow-ungoverned", "--", join(bin, "claude")], {
      cwd: sandbox.project,
      env: { ...sandbox.env, HOOK_FIXTURE_TOOLS: tools.join(","), HOOK_FIXTURE_OUT: out },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(wrap.exitCode, wrap.stderr.toString()).toBe(0);
    const answers = JSON.parse(readFileSync(out, "utf8")) as Run[];
    const said = answers.map((run) => (run.stdout === "" ? [run.exitCode, "no answer"] : [run.exitCode, ...claudeDecision(run)]));
    expect(said).toEqual([
      [0, "allow", "ThoughtGate: the notes server runs through ThoughtGate, which decides this call (and asks you where its policy says so)"],
      [0, "allow", "ThoughtGate: the my_docs server runs through ThoughtGate, which decides this call (and asks you where its policy says so)"],
      [0, "no answer"],
      [0, "no answer"],
      [0, "no answer"],
      [0, "no answer"],
    ]);
  });
});
