/**
 * The real opencode (`opencode run`, `opencode mcp list`) through `thoughtgate wrap`: the servers
 * in ~/.config/opencode/opencode.json run behind shims, calls are forwarded or denied by the
 * user's policy, and the config is byte-identical afterwards. opencode adds `"$schema"` to a config
 * without one, so the config here has it, as any config opencode has run with does. opencode
 * declares no elicitation: its approvals can only reach the person outside it.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, describeRun, everythingServer, opencode, opencodeToolName, recordedServer, runAgent, type AgentLaunch, type AgentSandbox } from "../../support/agents.ts";
import { startFakeOpenAIChat } from "../../support/fake-models/openai-chat.ts";
import { bytes, decisions, runWrapped, shimCommandPattern, throughWrap, withRecord, writeUserPolicy } from "../../support/wrapped-agents.ts";

// opencode takes 3–5 s to start on this box, more under load.
setDefaultTimeout(120_000);

const ECHO = opencodeToolName("everything", "echo");
const SUM = opencodeToolName("everything", "get-sum");

/** The global config as opencode leaves it: `"$schema"` first. */
function withSchema(sandbox: AgentSandbox): string {
  const path = join(sandbox.home, ".config", "opencode", "opencode.json");
  writeFileSync(path, `${JSON.stringify({ $schema: "https://opencode.ai/config.json", ...(JSON.parse(readFileSync(path, "utf8")) as object) }, null, 2)}\n`);
  return path;
}

const toolCalls = (sent: Array<Record<string, unknown>>) =>
  sent.filter((message) => message.method === "tools/call").map((message) => (message.params as { name: string }).name);

/** The trap's log without opencode's background `npm install @opencode-ai/plugin` (refused; opencode carries on). */
const network = (sandbox: AgentSandbox) => sandbox.trap.attempts.filter((line) => !line.startsWith("CONNECT registry.npmjs.org:443 "));

describe("opencode through thoughtgate wrap", () => {
  test("run: a forwarded call's result reaches the model, a denied one never reaches the server; the record has both; the config is byte-identical", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, `schema: 1\ngovernance:\n  rules:\n    - { id: no-sums, match: get-sum, action: deny }\n`);
    await using model = startFakeOpenAIChat({
      calls: [
        { tool: ECHO, arguments: { message: "through the shim" } },
        { tool: SUM, arguments: { a: 2, b: 3 } },
      ],
      finalText: "Done.",
    });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = throughWrap(opencode(sandbox, { model, servers: { everything: pipe.server }, scope: "global", prompt: "Echo, then add." }));
    const config = withSchema(sandbox);
    const original = bytes(config);
    const run = await runWrapped(launch, sandbox);
    expect(
      {
        exitCode: run.exitCode,
        results: model.toolResults.map(({ tool, text }) => ({ tool, text })),
        reachedTheServer: toolCalls(pipe.sent()),
        decisions: decisions(run),
        leftovers: run.leftovers,
        network: network(sandbox),
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [
        { tool: ECHO, text: "Echo: through the shim" },
        { tool: SUM, text: "MCP error -32014: ThoughtGate blocked tools/call get-sum: rule no-sums: deny" },
      ],
      reachedTheServer: ["echo"],
      decisions: ["everything.echo forward (defaults)", "everything.get-sum deny (no-sums)"],
      leftovers: [],
      network: [],
    });
    expect(bytes(config).equals(original)).toBe(true);
  });

  test("mcp list: the server connected through the shim; the config is byte-identical", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIChat({ calls: [] });
    const base = opencode(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope: "global", prompt: "" });
    const config = withSchema(sandbox);
    const original = bytes(config);
    const list: AgentLaunch = { ...base, argv: [agentBinary("opencode"), "mcp", "list"] };
    const run = withRecord(await runAgent(throughWrap(list), sandbox));
    expect({ exitCode: run.exitCode, leftovers: run.leftovers }, run.stderr).toEqual({ exitCode: 0, leftovers: [] });
    const shown = run.stdout.replace(/\x1b\[[0-9;]*m/g, "");
    expect(shown).toMatch(/✓ everything connected/);
    expect(shown).toMatch(new RegExp(shimCommandPattern(sandbox, "everything")));
    expect(run.events("run_start")).toHaveLength(1);
    expect(bytes(config).equals(original)).toBe(true);
  });
});
