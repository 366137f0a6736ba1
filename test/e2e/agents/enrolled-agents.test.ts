/**
 * `thoughtgate enroll` with the real agents: their own config rewritten once, every later plain run
 * governed on its own (the user's policy, the shim's own audit under the state directory: no wrap,
 * no session), `thoughtgate unenroll` putting the config back byte for byte. Claude Code
 * (~/.claude.json, JSON), Codex (~/.codex/config.toml, TOML) and opencode
 * (~/.config/opencode/opencode.json), each against its loopback fake model.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, claudeCode, claudeToolName, codex, codexToolName, describeRun, everythingServer, opencode, opencodeToolName, recordedServer, runAgent, type AgentLaunch, type AgentSandbox } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import type { FakeModel } from "../../support/fake-models/fake-model.ts";
import { readEvents, requireBinary } from "../../support/harness.ts";
import { bytes, shimCommandPattern, writeUserPolicy } from "../../support/wrapped-agents.ts";

setDefaultTimeout(150_000);

const POLICY = "schema: 1\ngovernance:\n  rules:\n    - { id: no-sums, match: get-sum, action: deny }\n";

/** `thoughtgate <args>` as the user, in the sandbox. */
function thoughtgate(sandbox: AgentSandbox, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = Bun.spawnSync([requireBinary(), ...args], { cwd: sandbox.project, env: sandbox.env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** The decisions in every audit the plain runs' shims wrote on their own (runs/<date>/*.jsonl). */
function ownAudits(sandbox: AgentSandbox): string[] {
  const runs = join(sandbox.home, ".local", "state", "thoughtgate", "runs");
  const files = [...new Bun.Glob("**/*.jsonl").scanSync({ cwd: runs, absolute: true })].sort();
  return files.flatMap((file) => readEvents(file).filter((event) => event.type === "tool_call_decision").map((event) => `${String(event.server_id)}.${String(event.tool)} ${String(event.decision)}`));
}

const toolCalls = (sent: Array<Record<string, unknown>>) => sent.filter((message) => message.method === "tools/call").map((message) => (message.params as { name: string }).name);

type Case = {
  agent: "claude-code" | "codex" | "opencode";
  config: (sandbox: AgentSandbox) => string;
  model: () => FakeModel;
  echo: string;
  sum: string;
  launch: (sandbox: AgentSandbox, model: FakeModel, server: { command: string; args: string[] }) => AgentLaunch;
  /** What the agent leaves in its config on a first run (so the bytes compared are a config it has run with). */
  settle?: (sandbox: AgentSandbox) => void;
};

const CASES: Case[] = [
  {
    agent: "claude-code",
    config: (sandbox) => join(sandbox.home, ".claude.json"),
    model: () => startFakeAnthropic({ calls: [{ tool: claudeToolName("everything", "echo"), arguments: { message: "enrolled" } }, { tool: claudeToolName("everything", "get-sum"), arguments: { a: 1, b: 2 } }], finalText: "Done." }),
    echo: claudeToolName("everything", "echo"),
    sum: claudeToolName("everything", "get-sum"),
    launch: (sandbox, model, server) => claudeCode(sandbox, { model, servers: { everything: server }, scope: "user", prompt: "Echo, then add.", allowedTools: [claudeToolName("everything", "echo"), claudeToolName("everything", "get-sum")] }),
  },
  {
    agent: "codex",
    config: (sandbox) => join(sandbox.home, ".codex", "config.toml"),
    model: () => startFakeOpenAIResponses({ calls: [{ tool: codexToolName("everything", "echo"), arguments: { message: "enrolled" } }, { tool: codexToolName("everything", "get-sum"), arguments: { a: 1, b: 2 } }], finalText: "Done." }),
    echo: codexToolName("everything", "echo"),
    sum: codexToolName("everything", "get-sum"),
    launch: (sandbox, model, server) => codex(sandbox, { model, servers: { everything: server }, scope: "user", prompt: "Echo, then add." }),
  },
  {
    agent: "opencode",
    config: (sandbox) => join(sandbox.home, ".config", "opencode", "opencode.json"),
    model: () => startFakeOpenAIChat({ calls: [{ tool: opencodeToolName("everything", "echo"), arguments: { message: "enrolled" } }, { tool: opencodeToolName("everything", "get-sum"), arguments: { a: 1, b: 2 } }], finalText: "Done." }),
    echo: opencodeToolName("everything", "echo"),
    sum: opencodeToolName("everything", "get-sum"),
    launch: (sandbox, model, server) => opencode(sandbox, { model, servers: { everything: server }, scope: "global", prompt: "Echo, then add." }),
    // opencode adds `"$schema"` to a config without one.
    settle: (sandbox) => {
      const path = join(sandbox.home, ".config", "opencode", "opencode.json");
      writeFileSync(path, `${JSON.stringify({ $schema: "https://opencode.ai/config.json", ...(JSON.parse(readFileSync(path, "utf8")) as object) }, null, 2)}\n`);
    },
  },
];

describe("enroll, plain runs governed on their own, unenroll", () => {
  for (const c of CASES) {
    test(`${c.agent}: enrolled once, a plain run's calls are governed by the user's policy, the config comes back byte for byte`, async () => {
      await using sandbox = agentSandbox();
      writeUserPolicy(sandbox, POLICY);
      await using model = c.model();
      const pipe = recordedServer(sandbox, everythingServer(sandbox));
      const launch = c.launch(sandbox, model, pipe.server);
      c.settle?.(sandbox);
      const config = c.config(sandbox);
      if (c.agent === "claude-code") {
        // Claude Code adds its own keys to ~/.claude.json on a first run and leaves the file alone after that.
        await runAgent({ agent: "claude-code", argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: launch.env }, sandbox);
      }
      const original = bytes(config);

      const enrolled = thoughtgate(sandbox, "enroll", c.agent);
      expect({ code: enrolled.code, stdout: enrolled.stdout }, enrolled.stderr).toEqual({ code: 0, stdout: expect.stringContaining(`enrolled ~/`) });
      expect(readFileSync(config, "utf8")).toContain(join(sandbox.home, ".local", "state", "thoughtgate", "bin", "thoughtgate"));

      // A plain run: no wrap, no prefix.
      const run = await runAgent(launch, sandbox);
      expect(
        { exitCode: run.exitCode, results: model.toolResults.map(({ tool, text }) => ({ tool, blocked: text.includes("ThoughtGate blocked tools/call get-sum: rule no-sums: deny") })), reachedTheServer: toolCalls(pipe.sent()), leftovers: run.leftovers },
        describeRun(launch, run, model),
      ).toEqual({
        exitCode: 0,
        results: [
          { tool: c.echo, blocked: false },
          { tool: c.sum, blocked: true },
        ],
        reachedTheServer: ["echo"],
        leftovers: [],
      });
      expect(ownAudits(sandbox)).toEqual(["everything.echo forward", "everything.get-sum deny"]);

      const back = thoughtgate(sandbox, "unenroll", c.agent);
      // Claude Code's and Codex's own-tools hook went into a file enroll made for it: it is removed
      // again; opencode's enrollment wrote its plugin, which unenroll removes.
      const restored = `${c.agent}: restored ${config} (${c.agent === "claude-code" ? "kept the agent's own changes" : "byte-identical"})`;
      const removed = (path: string) => `${c.agent}: removed ${join(sandbox.home, path)} (enroll made it for the hook)`;
      const plugin = `opencode: removed ${join(sandbox.home, ".config", "opencode", "plugins", "thoughtgate.js")} (ThoughtGate's plugin)`;
      const lines = c.agent === "claude-code" ? [restored, removed(".claude/settings.json")] : c.agent === "codex" ? [removed(".codex/hooks.json"), restored] : c.agent === "opencode" ? [restored, plugin] : [restored];
      expect({ code: back.code, stdout: back.stdout }).toEqual({ code: 0, stdout: `${lines.join("\n")}\n` });
      if (c.agent === "claude-code") {
        // `claude -p` saves ~/.claude.json on every run (start counts, the session): its changes are kept,
        // and the server entries are exactly as they were.
        const parse = (buffer: Buffer) => (JSON.parse(buffer.toString("utf8")) as { mcpServers: unknown }).mcpServers;
        expect(parse(bytes(config))).toEqual(parse(original));
        // (The sandbox's own path has "thoughtgate" in it: the shim's path is what must be gone.)
        expect(readFileSync(config, "utf8")).not.toContain(join(sandbox.home, ".local", "state", "thoughtgate", "bin"));
      } else {
        expect(bytes(config).equals(original)).toBe(true);
      }
      expect(thoughtgate(sandbox, "unenroll", c.agent).stdout).toBe(`${c.agent}: not enrolled\n`);
    });
  }

  test("claude-code: enroll, `claude mcp list` runs the server through the shim on its own, unenroll gives back ~/.claude.json byte for byte", async () => {
    await using sandbox = agentSandbox();
    const config = join(sandbox.home, ".claude.json");
    writeFileSync(config, `${JSON.stringify({ mcpServers: { everything: everythingServer(sandbox) } }, null, 2)}\n`);
    const list: AgentLaunch = { agent: "claude-code", argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } };
    await runAgent(list, sandbox);
    const original = bytes(config);
    expect(thoughtgate(sandbox, "enroll", "claude-code").code).toBe(0);
    const run = await runAgent(list, sandbox);
    expect(run.stdout).toMatch(new RegExp(`everything: ${shimCommandPattern(sandbox, "everything")}.* - ✔ Connected`));
    expect(thoughtgate(sandbox, "unenroll", "claude-code").stdout).toBe(`claude-code: restored ${config} (byte-identical)\nclaude-code: removed ${join(sandbox.home, ".claude", "settings.json")} (enroll made it for the hook)\n`);
    expect(bytes(config).equals(original)).toBe(true);
  });

  test("claude-code: a policy broken after enroll: `claude mcp list` shows the server failing with the file, the fix and the problem", async () => {
    await using sandbox = agentSandbox();
    const config = join(sandbox.home, ".claude.json");
    writeFileSync(config, `${JSON.stringify({ mcpServers: { everything: everythingServer(sandbox) } }, null, 2)}\n`);
    writeUserPolicy(sandbox, POLICY);
    expect(thoughtgate(sandbox, "enroll", "claude-code").code).toBe(0);
    writeUserPolicy(sandbox, "schema: 1\ngovernance:\n  rules:\n    - { id: no-sums, mach: get-sum, action: deny }\n");
    const list: AgentLaunch = { agent: "claude-code", argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } };
    const run = await runAgent(list, sandbox);
    // Claude Code shows the server's error (about its first 500 characters): the file and the fix come first.
    const policy = join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml");
    expect(run.stdout).toContain(
      ` - ✘ Failed to connect — -32013: ThoughtGate did not start server [redacted]: its policy ${policy} has 1 problem; correct it (\`thoughtgate validate-config\` lists every problem with its line), then restart the agent or reconnect the server. First: line 4, column 22: governance.rules[0].mach: unknown key "mach"`,
    );
    expect(thoughtgate(sandbox, "unenroll", "claude-code").code).toBe(0);
  });
});
