/**
 * The real Codex CLI (`codex exec`, pinned in devDependencies) against server-everything, with no
 * thoughtgate in between: the baseline a wrapped run must match. A fake OpenAI Responses API on
 * loopback (a custom `model_providers` entry) asks for the echo tool; the function_call_output
 * Codex sends back to it is what the test checks, for the user and the (trusted) project config.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { agentSandbox, codex, codexToolName, describeRun, everythingServer, recordedServer, runAgent, type CodexScope } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = codexToolName("everything", "echo");

describe("codex exec and server-everything, no thoughtgate", () => {
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

  test("on the pipe: initialize 2025-06-18, no roots; SIGTERM and EOF together at exit", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [{ tool: ECHO, arguments: { message: "on the pipe" } }], finalText: "Echoed." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = codex(sandbox, { model, servers: { everything: pipe.server }, scope: "user", prompt: "Echo." });
    const run = await runAgent(launch, sandbox);
    const [initialize, initialized, toolsList] = pipe.sent();
    expect(
      {
        exitCode: run.exitCode,
        initialize,
        initialized,
        toolsList,
        toolsCall: pipe.sent().find((message) => message.method === "tools/call")?.params,
        // Codex runs each server in its own process group, SIGTERMs the group as it closes stdin,
        // and SIGKILLs the process it started about 5 ms later.
        stop: pipe.events().filter((event) => event === "SIGTERM" || event === "stdin_eof" || event === "SIGINT").sort(),
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      initialize: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: { experimental: { "codex/auth-change": {} }, elicitation: { form: {}, url: {} } },
          clientInfo: { name: "codex-mcp-client", title: "Codex", version: "0.169.0" },
        },
      },
      initialized: { jsonrpc: "2.0", method: "notifications/initialized" },
      toolsList: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { progressToken: 0 } } },
      toolsCall: { name: "echo", arguments: { message: "on the pipe" }, _meta: expect.objectContaining({ callId: "call_fake_0", progressToken: expect.any(Number) }) },
      stop: ["SIGTERM", "stdin_eof"],
      leftovers: [],
    });
  });
});
