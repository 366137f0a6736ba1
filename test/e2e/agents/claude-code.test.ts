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
  runAgent,
  type ClaudeScope,
} from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = claudeToolName("everything", "echo");

describe("claude -p with server-everything, direct", () => {
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
});
