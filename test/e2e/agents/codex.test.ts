/**
 * The real Codex CLI (`codex exec`, pinned in devDependencies) against server-everything, with no
 * thoughtgate in between: the baseline a wrapped run must match. A fake OpenAI Responses API on
 * loopback (a custom `model_providers` entry) asks for the echo tool; the function_call_output
 * Codex sends back to it is what the test checks, for the user and the (trusted) project config.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { agentSandbox, codex, codexToolName, describeRun, everythingServer, runAgent, type CodexScope } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = codexToolName("everything", "echo");

describe("codex exec with server-everything, direct", () => {
  for (const scope of ["user", "project"] as const satisfies CodexScope[]) {
    test(`${scope} config: the echo result reaches the model and the server is stopped`, async () => {
      await using sandbox = agentSandbox();
      await using model = startFakeOpenAIResponses({ calls: [{ tool: ECHO, arguments: { message: `hello from ${scope}` } }], finalText: "Echoed." });
      const launch = codex(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope, prompt: "Echo a greeting with the everything server." });
      const run = await runAgent(launch, sandbox);
      expect(
        {
          exitCode: run.exitCode,
          stdout: run.stdout.trim(),
          results: model.toolResults.map(({ tool, text }) => ({ tool, text })),
          leftovers: run.leftovers,
          network: sandbox.trap.attempts,
        },
        describeRun(launch, run, model),
      ).toEqual({
        exitCode: 0,
        stdout: "Echoed.",
        // Codex prefixes an MCP result with the call's wall time before handing it to the model.
        results: [{ tool: ECHO, text: expect.stringMatching(new RegExp(`^Wall time: [0-9.]+ seconds\\nOutput:\\nEcho: hello from ${scope}$`)) }],
        leftovers: [],
        network: [],
      });
    });
  }

  test("elicitation/create from the server is declined at once (approval_policy never)", async () => {
    const trigger = codexToolName("everything", "trigger-elicitation-request");
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [{ tool: trigger, arguments: {} }], finalText: "Asked." });
    const launch = codex(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope: "user", prompt: "Ask me for my details." });
    const run = await runAgent(launch, sandbox);
    expect(
      { exitCode: run.exitCode, results: model.toolResults.map(({ tool, text }) => ({ tool, text })), leftovers: run.leftovers },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [{ tool: trigger, text: expect.stringContaining("User declined to provide the requested information.") }],
      leftovers: [],
    });
    expect(model.toolResults[0]?.text).toContain(`"action": "decline"`);
  });
});
