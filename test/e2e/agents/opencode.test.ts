/**
 * The real opencode CLI (`opencode run`, pinned in devDependencies) against server-everything,
 * with no thoughtgate in between: the baseline a wrapped run must match. A fake OpenAI Chat
 * Completions API on loopback (an `@ai-sdk/openai-compatible` provider) asks for the echo tool;
 * the tool message opencode sends back to it is what the test checks, for the global and the
 * project config.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { agentSandbox, describeRun, everythingServer, opencode, opencodeToolName, recordedServer, runAgent, type OpencodeScope } from "../../support/agents.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = opencodeToolName("everything", "echo");
/** Registered by server-everything only for clients that declare the elicitation capability. */
const ELICITATION_TOOL = opencodeToolName("everything", "trigger-elicitation-request");

describe("opencode run and server-everything, no thoughtgate", () => {
  for (const scope of ["global", "project"] as const satisfies OpencodeScope[]) {
    test(`${scope} config: the echo result reaches the model and the server is stopped`, async () => {
      await using sandbox = agentSandbox();
      await using model = startFakeOpenAIChat({ calls: [{ tool: ECHO, arguments: { message: `hello from ${scope}` } }], finalText: "Echoed." });
      const launch = opencode(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope, prompt: "Echo a greeting with the everything server." });
      const run = await runAgent(launch, sandbox);
      const offered = model.turns.find(({ turn }) => turn.kind === "call")?.offeredTools ?? [];
      expect(
        {
          exitCode: run.exitCode,
          stdout: run.stdout.trim(),
          results: model.toolResults.map(({ tool, text }) => ({ tool, text })),
          elicitationToolOffered: offered.includes(ELICITATION_TOOL),
          leftovers: run.leftovers,
          // opencode installs @opencode-ai/plugin into each config directory in the background
          // (from registry.npmjs.org; the trap refuses it and opencode carries on).
          network: sandbox.trap.attempts.filter((line) => !line.startsWith("CONNECT registry.npmjs.org:443 ")),
        },
        describeRun(launch, run, model),
      ).toEqual({
        exitCode: 0,
        stdout: "Echoed.",
        results: [{ tool: ECHO, text: `Echo: hello from ${scope}` }],
        // opencode declares only `roots`: no elicitation, so no approvals can be asked through it.
        elicitationToolOffered: false,
        leftovers: [],
        network: [],
      });
    });
  }

  test("on the pipe: initialize 2025-11-25 with roots only, a cancel after the result, EOF at exit", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIChat({ calls: [{ tool: ECHO, arguments: { message: "on the pipe" } }], finalText: "Echoed." });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = opencode(sandbox, { model, servers: { everything: pipe.server }, scope: "global", prompt: "Echo." });
    const run = await runAgent(launch, sandbox);
    const sent = pipe.sent();
    const call = sent.find((message) => message.method === "tools/call");
    expect(
      {
        exitCode: run.exitCode,
        handshake: sent.slice(0, 3),
        toolsCall: call?.params,
        // opencode cancels the tools/call after its result has arrived.
        cancels: sent.filter((message) => message.method === "notifications/cancelled").map((message) => message.params),
        // The server it started gets EOF (SIGTERM follows 2 s later if it is still there);
        // opencode SIGTERMs that process's own children directly.
        firstStop: pipe.events()[0],
        signalsToTheServerProcess: pipe.events().filter((event) => event.startsWith("SIG")),
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      handshake: [
        { method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { roots: {} }, clientInfo: { name: "opencode", version: "1.18.33" } }, jsonrpc: "2.0", id: 0 },
        { method: "notifications/initialized", jsonrpc: "2.0" },
        { method: "tools/list", jsonrpc: "2.0", id: 1 },
      ],
      toolsCall: { name: "echo", arguments: { message: "on the pipe" }, _meta: { progressToken: expect.any(Number) } },
      cancels: [{ requestId: call?.id, reason: "AbortError: The operation was aborted." }],
      firstStop: "stdin_eof",
      signalsToTheServerProcess: [],
      leftovers: [],
    });
  });
});
