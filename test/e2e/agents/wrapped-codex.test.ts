/**
 * The real Codex CLI (`codex exec`, `codex mcp list`) through `thoughtgate wrap`: the servers in
 * ~/.codex/config.toml run behind shims (Codex passes servers only an allowlist of variables, not
 * THOUGHTGATE_SESSION: the shim finds its session among its ancestors), calls are forwarded or denied by the user's
 * policy, an approval is given with `thoughtgate approve` from another "terminal" (`codex exec`
 * declines every prompt unseen), and config.toml is byte-identical afterwards.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { agentBinary, agentSandbox, codex, codexToolName, describeRun, everythingServer, recordedServer, runAgent } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { waitFor } from "../../support/harness.ts";
import { bytes, decisions, runWrapped, shimCommandPattern, throughWrap, withRecord, writeUserPolicy } from "../../support/wrapped-agents.ts";
import { decideAtTerminal, tasksAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(90_000);

const ECHO = codexToolName("everything", "echo");
const SUM = codexToolName("everything", "get-sum");
const WALL_TIME = "^Wall time: [0-9.]+ seconds\\nOutput:\\n";

const toolCalls = (sent: Array<Record<string, unknown>>) =>
  sent.filter((message) => message.method === "tools/call").map((message) => (message.params as { name: string }).name);

describe("codex exec through thoughtgate wrap", () => {
  test("a forwarded call's result reaches the model, a denied one never reaches the server; the record has both; config.toml is byte-identical", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, `schema: 1\ngovernance:\n  rules:\n    - { id: no-sums, match: get-sum, action: deny }\n`);
    await using model = startFakeOpenAIResponses({
      calls: [
        { tool: ECHO, arguments: { message: "through the shim" } },
        { tool: SUM, arguments: { a: 2, b: 3 } },
      ],
      finalText: "Done.",
    });
    const pipe = recordedServer(sandbox, everythingServer(sandbox));
    const launch = throughWrap(codex(sandbox, { model, servers: { everything: pipe.server }, scope: "user", prompt: "Echo, then add." }));
    const config = join(sandbox.home, ".codex", "config.toml");
    const original = bytes(config);
    const run = await runWrapped(launch, sandbox);
    expect(
      {
        exitCode: run.exitCode,
        results: model.toolResults.map(({ tool, text }) => ({ tool, text })),
        reachedTheServer: toolCalls(pipe.sent()),
        decisions: decisions(run),
        leftovers: run.leftovers,
      },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [
        { tool: ECHO, text: expect.stringMatching(new RegExp(`${WALL_TIME}Echo: through the shim$`)) },
        // Codex shows the model the error's code, message and data.
        { tool: SUM, text: expect.stringContaining("Mcp error: -32014: ThoughtGate blocked tools/call get-sum: rule no-sums: deny") },
      ],
      reachedTheServer: ["echo"],
      decisions: ["everything.echo forward (defaults)", "everything.get-sum deny (no-sums)"],
      leftovers: [],
    });
    expect(run.stderr).toContain(`restored ${config} (byte-identical)`);
    expect(bytes(config).equals(original)).toBe(true);
  });

  test("an approval from another terminal: thoughtgate approve lets the waiting call through", async () => {
    await using sandbox = agentSandbox();
    writeUserPolicy(sandbox, `schema: 1\ngovernance:\n  rules:\n    - { id: ask-echo, match: echo, action: approve }\n`);
    await using model = startFakeOpenAIResponses({ calls: [{ tool: ECHO, arguments: { message: "approved" } }], finalText: "Done." });
    const launch = throughWrap(codex(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope: "user", prompt: "Echo." }));
    const running = runAgent(launch, sandbox);
    // The user's own terminal: the same HOME, no THOUGHTGATE_ACTIVE.
    const pending = await waitFor(async () => {
      const listed = await tasksAtTerminal(["--json"], { env: sandbox.env });
      const tasks = listed.exitCode === 0 ? (JSON.parse(listed.stdout) as Array<{ task_id: string; server_id: string; name: string }>) : [];
      return tasks[0];
    }, "the call to wait for approval");
    expect([pending.server_id, pending.name]).toEqual(["everything", "echo"]);
    const approved = await decideAtTerminal(["approve", pending.task_id], { env: sandbox.env });
    expect(approved.stdout).toBe(`approved ${pending.task_id}: everything.echo\n`);
    const run = withRecord(await running);
    expect(
      { exitCode: run.exitCode, results: model.toolResults.map(({ text }) => text), decisions: decisions(run), leftovers: run.leftovers },
      describeRun(launch, run, model),
    ).toEqual({
      exitCode: 0,
      results: [expect.stringMatching(new RegExp(`${WALL_TIME}Echo: approved$`))],
      decisions: ["everything.echo pending", "everything.echo forward (ask-echo) by cli"],
      leftovers: [],
    });
  });
});

describe("codex mcp list through thoughtgate wrap", () => {
  test("lists the server as run by the shim (Codex only reads its config here); config.toml is byte-identical", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [] });
    const config = join(sandbox.home, ".codex", "config.toml");
    const base = codex(sandbox, { model, servers: { everything: everythingServer(sandbox) }, scope: "user", prompt: "" });
    const original = bytes(config);
    const run = withRecord(await runAgent(throughWrap({ ...base, argv: [agentBinary("codex"), "mcp", "list", "--json"] }), sandbox));
    expect({ exitCode: run.exitCode, leftovers: run.leftovers }, run.stderr).toEqual({ exitCode: 0, leftovers: [] });
    const [listed] = JSON.parse(run.stdout) as Array<{ name: string; enabled: boolean; transport: { command: string; args: string[] } }>;
    expect(listed).toMatchObject({ name: "everything", enabled: true });
    expect(`${listed?.transport.command} ${listed?.transport.args.join(" ")}`).toMatch(new RegExp(`^${shimCommandPattern(sandbox, "everything")}`));
    const server = everythingServer(sandbox);
    expect(listed?.transport.args.slice(listed.transport.args.indexOf("--") + 1)).toEqual([server.command, ...server.args]);
    expect(bytes(config).equals(original)).toBe(true);
  });
});
