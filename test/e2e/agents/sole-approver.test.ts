/**
 * `thoughtgate wrap --sole-approver` with the real agents from npm (fake model APIs on loopback):
 * ThoughtGate, not the agent, asks about the governed servers' tools, for the session only, with the
 * agent's config files byte-identical afterwards. `codex exec` on its own refuses a writing MCP tool
 * itself, so ThoughtGate never sees it; with --sole-approver the call reaches ThoughtGate, which
 * asks the person on the page and through `thoughtgate approve`. The banner says which prompts the
 * person will see and from whom.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { agentSandbox, codex, codexToolName, describeRun, runAgent, type AgentSandbox } from "../../support/agents.ts";
import { startFakeOpenAIResponses } from "../../support/fake-models/openai-responses.ts";
import { FIXTURES, waitFor } from "../../support/harness.ts";
import { decideAtTerminal, tasksAtTerminal } from "../../support/terminal.ts";
import { bytes, decisions, throughWrap, withRecord } from "../../support/wrapped-agents.ts";

setDefaultTimeout(120_000);

const DELETE = codexToolName("notes", "delete_note");
/** The notes fixture server: delete_note is annotated destructive (not read-only, not closed-world). */
const notes = (sandbox: AgentSandbox) => ({ command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] });

describe("codex exec", () => {
  test("without --sole-approver, Codex refuses the writing tool itself: ThoughtGate never sees the call, and the banner says so", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [{ tool: DELETE, arguments: { id: "a" } }], finalText: "Done." });
    const launch = throughWrap(codex(sandbox, { model, servers: { notes: notes(sandbox) }, scope: "user", required: true, prompt: "Delete note a." }));
    const run = withRecord(await runAgent(launch, sandbox));
    expect(run.exitCode, describeRun(launch, run, model)).toBe(0);
    expect(run.stderr).toContain("thoughtgate: Codex runs only the MCP tools it deems safe and refuses (exec) or asks about (TUI) the rest itself, so ThoughtGate never sees them; `wrap --sole-approver` hands them to ThoughtGate");
    expect(model.toolResults.map((r) => r.text)).toEqual([expect.stringContaining("MCP tool call requires approval, but approval policy is never")]);
    expect(run.events("tool_call_start")).toEqual([]);
  });

  test("with --sole-approver, the writing tool reaches ThoughtGate, which asks on the page and the CLI; approved there, it runs; config.toml is byte-identical", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeOpenAIResponses({ calls: [{ tool: DELETE, arguments: { id: "a" } }], finalText: "Done." });
    const launch = throughWrap(codex(sandbox, { model, servers: { notes: notes(sandbox) }, scope: "user", required: true, prompt: "Delete note a." }), { flags: ["--sole-approver"] });
    const config = join(sandbox.home, ".codex", "config.toml");
    const original = bytes(config);
    const running = runAgent(launch, sandbox);
    // The person's own terminal: the same HOME, no THOUGHTGATE_ACTIVE.
    const pending = await waitFor(async () => {
      const listed = await tasksAtTerminal(["--json"], { env: sandbox.env });
      return listed.exitCode === 0 ? (JSON.parse(listed.stdout) as Array<{ task_id: string; server_id: string; name: string }>)[0] : undefined;
    }, "the call to wait for a person", 60_000);
    expect([pending.server_id, pending.name]).toEqual(["notes", "delete_note"]);
    // A person at a terminal of their own confirms.
    expect((await decideAtTerminal(["approve", pending.task_id], { env: sandbox.env })).exitCode).toBe(0);
    const run = withRecord(await running);
    expect({ exitCode: run.exitCode, results: model.toolResults.map((r) => r.text), decisions: decisions(run), leftovers: run.leftovers }, describeRun(launch, run, model)).toEqual({
      exitCode: 0,
      results: [expect.stringContaining("deleted a")],
      decisions: ["notes.delete_note pending", "notes.delete_note forward (default-destructive) by cli"],
      leftovers: [],
    });
    expect(run.stderr).toContain(
      'thoughtgate: sole approver: Codex hands every tool of notes to ThoughtGate this session (-c …default_tools_approval_mode="approve", nothing written); ThoughtGate asks, where its policy says to, on the approvals page and with thoughtgate approve',
    );
    expect(bytes(config).equals(original)).toBe(true);
  });
});
