/**
 * The real opencode CLI (`opencode run`, pinned in devDependencies) against server-everything,
 * with no thoughtgate in between: the baseline a wrapped run must match. A fake OpenAI Chat
 * Completions API on loopback (an `@ai-sdk/openai-compatible` provider) asks for the echo tool;
 * the tool message opencode sends back to it is what the test checks, for the global and the
 * project config.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { agentSandbox, describeRun, everythingServer, opencode, opencodeToolName, runAgent, type OpencodeScope } from "../../support/agents.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";

// A real agent and a real server on a shared 2-core box; bun 1.4.5 does not apply bunfig's [test] timeout.
setDefaultTimeout(60_000);

const ECHO = opencodeToolName("everything", "echo");
/** Registered by server-everything only for clients that declare the elicitation capability. */
const ELICITATION_TOOL = opencodeToolName("everything", "trigger-elicitation-request");

describe("opencode run with server-everything, direct", () => {
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
});
