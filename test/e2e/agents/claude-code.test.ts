/**
 * The real Claude Code CLI (`claude -p`, pinned in devDependencies) against server-everything,
 * with no thoughtgate in between: the baseline a wrapped run must match. A fake Anthropic
 * Messages API on loopback asks for `mcp__everything__echo`; the tool result Claude Code sends
 * back to it is what the test checks, for every scope Claude Code reads MCP servers from.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  agentSandbox,
  claudeCode,
  claudeToolName,
  describeRun,
  everythingServer,
  recordedServer,
  runAgent,
  type ClaudeScope,
} from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = claudeToolName("everything", "echo");

describe("claude -p and server-everything, no thoughtgate", () => {
  for (const scope of ["flag", "user", "local", "project"] as const satisfies ClaudeScope[]) {
    test(`${scope} scope: the echo result reaches the model and the server is stopped`, async () => {
      await using sandbox = agentSandbox();
      await using model = startFakeAnthropic({ calls: [{ tool: ECHO, arguments: { message: `hello from ${scope}` } }], finalText: "Echoed." });
      const launch = claudeCode(sandbox, {
        model,
        servers: { everything: everythingServer(sandbox) },
        scope,
        prompt: "Echo a greeting with the everything server.",
        allowedTools: [ECHO],
      });
      const run = await runAgent(launch, sandbox);
      expect(
        {
          exitCode: run.exitCode,
          stdout: run.stdout.trim(),
          results: model.toolResults.map(({ tool, text, isError }) => ({ tool, text, isError })),
          leftovers: run.leftovers,
          network: sandbox.trap.attempts,
        },
        describeRun(launch, run, model),
      ).toEqual({
        exitCode: 0,
        stdout: "Echoed.",
        results: [{ tool: ECHO, text: `Echo: hello from ${scope}`, isError: undefined }],
        leftovers: [],
        network: [],
      });
    });
  }

  test("elicitation/create from the server is cancelled at once (no one to ask under -p)", async () => {
    const trigger = claudeToolName("everything", "trigger-elicitation-request");
    await using sandbox = agentSandbox();
    await using model = startFakeAnthropic({ calls: [{ tool: trigger, arguments: {} }], finalText: "Asked." });
    const launch = claudeCode(sandbox, {
      model,
      servers: { everything: everythingServer(sandbox) },
      scope: "flag",
      prompt: "Ask me for my details.",
      allowedTools: [trigger],
    });
    const run = await runAgent(launch, sandbox);
    expect(
      { exitCode: run.exitCode, results: model.toolResults.map(({ tool, text }) => ({ tool, text })), leftovers: run.leftovers },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [{ tool: trigger, text: expect.stringContaining(`User cancelled the elicitation dialog.`) }],
      leftovers: [],
    });
    expect(model.toolResults[0]?.text).toContain(`"action": "cancel"`);
  });

  test("on the pipe: a server/discover probe, initialize 2025-11-25 after -32601, SIGINT at exit", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeAnthropic({ calls: [{ tool: ECHO, arguments: { message: "on the pipe" } }], finalText: "Echoed." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = claudeCode(sandbox, { model, servers: { everything: pipe.server }, scope: "flag", prompt: "Echo.", allowedTools: [ECHO] });
    const run = await runAgent(launch, sandbox);
    const [probe, initialize, initialized] = pipe.sent();
    const capabilities = { roots: { listChanged: true }, elicitation: { form: {}, url: {} } };
    expect(
      {
        exitCode: run.exitCode,
        probe,
        probeAnswer: pipe.received()[0],
        initialize,
        initialized,
        toolsCall: pipe.sent().find((message) => message.method === "tools/call")?.params,
        // Claude Code signals the server (SIGINT, then SIGTERM, then SIGKILL) without closing its stdin first.
        firstStop: pipe.events()[0],
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      probe: {
        jsonrpc: "2.0",
        id: "server-discover-probe-1",
        method: "server/discover",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": expect.objectContaining({ name: "claude-code", version: "2.1.330" }),
            "io.modelcontextprotocol/clientCapabilities": capabilities,
          },
        },
      },
      probeAnswer: { jsonrpc: "2.0", id: "server-discover-probe-1", error: { code: -32601, message: "Method not found" } },
      initialize: {
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities, clientInfo: expect.objectContaining({ name: "claude-code", version: "2.1.330" }) },
        jsonrpc: "2.0",
        id: 0,
      },
      initialized: { jsonrpc: "2.0", method: "notifications/initialized" },
      toolsCall: { name: "echo", arguments: { message: "on the pipe" }, _meta: { "claudecode/toolUseId": "toolu_fake_0", progressToken: expect.any(Number) } },
      firstStop: "SIGINT",
      leftovers: [],
    });
  });
});
