/**
 * Which of the real agents pass their own environment to the stdio MCP servers they start, measured:
 * wrap hands its session to the agent as THOUGHTGATE_SESSION, and a shim finds it there when the
 * agent passes it on; where the agent does not, the shim finds the session among its ancestors
 * (docs/architecture.md, "How a shim finds its session"). A recorder stands in front of
 * server-everything and records the variable names the server was started with.
 * Copilot CLI runs with a custom model provider (COPILOT_PROVIDER_BASE_URL: no GitHub sign-in).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentBinary, agentSandbox, codex, codexToolName, everythingServer, opencode, opencodeToolName, recordedServer, runAgent, type AgentLaunch, type AgentSandbox } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";

setDefaultTimeout(90_000);

const SESSION = { THOUGHTGATE_SESSION: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" };

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Whether the server the agent started saw THOUGHTGATE_SESSION (null: the agent started no server). */
async function passed(sandbox: AgentSandbox, launch: AgentLaunch, pipe: ReturnType<typeof recordedServer>): Promise<boolean | null> {
  const run = await runAgent({ ...launch, env: { ...launch.env, ...SESSION } }, sandbox);
  const start = pipe.records().find((record) => record.event === "start") as { env_keys?: string[] } | undefined;
  expect({ leftovers: run.leftovers }, run.stderr).toEqual({ leftovers: [] });
  return start?.env_keys === undefined ? null : start.env_keys.includes("THOUGHTGATE_SESSION");
}

describe("does the agent pass THOUGHTGATE_SESSION to the servers it starts?", () => {
  test("Claude Code 2.1.330 (`claude mcp list`): yes", async () => {
    await using sandbox = agentSandbox();
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    writeJson(join(sandbox.home, ".claude.json"), { mcpServers: { everything: pipe.server } });
    const launch: AgentLaunch = { agent: "claude-code", argv: [agentBinary("claude-code"), "mcp", "list"], cwd: sandbox.project, env: { ...sandbox.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" } };
    expect(await passed(sandbox, launch, pipe)).toBe(true);
  });

  test("Codex 0.169.0 (`codex exec`): no, it starts servers with a short list of variables of its own", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [{ tool: codexToolName("everything", "echo"), arguments: { message: "hi" } }], finalText: "Done." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    expect(await passed(sandbox, codex(sandbox, { model, servers: { everything: pipe.server }, scope: "user", prompt: "Echo." }), pipe)).toBe(false);
  });

  test("opencode 1.18.33 (`opencode run`): yes", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIChat({ calls: [{ tool: opencodeToolName("everything", "echo"), arguments: { message: "hi" } }], finalText: "Done." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    expect(await passed(sandbox, opencode(sandbox, { model, servers: { everything: pipe.server }, scope: "global", prompt: "Echo." }), pipe)).toBe(true);
  });

  test("Copilot CLI 1.0.102 (`copilot -p`, a custom model provider): yes; and it declares form elicitation", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIChat({ calls: [{ tool: "everything-echo", arguments: { message: "hi" } }], finalText: "Done." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    writeJson(join(sandbox.home, ".copilot", "mcp-config.json"), { mcpServers: { everything: { type: "local", ...pipe.server, tools: ["*"] } } });
    const launch: AgentLaunch = {
      agent: "copilot",
      argv: [agentBinary("copilot"), "-p", "Echo.", "--allow-all-tools", "--no-auto-update"],
      cwd: sandbox.project,
      env: { ...sandbox.env, COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`, COPILOT_PROVIDER_API_KEY: "thoughtgate-test", COPILOT_MODEL: "gpt-4.1", COPILOT_AUTO_UPDATE: "false" },
    };
    expect(await passed(sandbox, launch, pipe)).toBe(true);
    const initialize = pipe.sent().find((message) => message.method === "initialize") as { params: { capabilities: Record<string, unknown> } } | undefined;
    expect(initialize?.params.capabilities.elicitation).toEqual({ form: {}, url: {} });
    expect(model.toolResults.map(({ text }) => text).join("\n")).toContain("hi");
  });

  for (const agent of ["gemini", "qwen"] as const) {
    test(`${agent === "gemini" ? "Gemini CLI 0.61.0" : "Qwen Code 0.15.10"} (\`${agent} mcp list\`): yes`, async () => {
      await using sandbox = agentSandbox();
      const pipe = recordedServer(sandbox, everythingServer(sandbox));
      if (agent === "gemini") {
        writeJson(join(sandbox.home, ".gemini", "trustedFolders.json"), { [sandbox.project]: "TRUST_FOLDER" });
        writeJson(join(sandbox.home, ".gemini", "settings.json"), { mcpServers: { everything: pipe.server } });
      } else {
        writeJson(join(sandbox.home, ".qwen", "settings.json"), { mcpServers: { everything: pipe.server }, $version: 4 });
      }
      const launch: AgentLaunch = { agent, argv: [agentBinary(agent), "mcp", "list"], cwd: sandbox.project, env: sandbox.env };
      expect(await passed(sandbox, launch, pipe)).toBe(true);
    });
  }
});
