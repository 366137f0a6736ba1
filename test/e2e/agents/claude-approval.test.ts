/**
 * A person's "no" is not a client's auto-answer. `claude -p` cannot show a form, so it answers every
 * elicitation at once with `cancel`. Under `thoughtgate wrap` that must not deny an approval: wrap
 * knows `-p` asks no one and has the service offer the shim no elicitation at all, the task stays
 * pending for the approvals page and `thoughtgate approve`, and when a person approves there the
 * real Claude Code's call runs and its result reaches the (fake) model.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, agentSandbox, claudeToolName, describeRun } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, FIXTURES, readEvents, requireBinary, waitFor } from "../../support/harness.ts";
import { decideAtTerminal, tasksAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(90_000);
requireBinary();

const DELETE = claudeToolName("notes", "delete_note");

test("claude -p, which would cancel the approval form, is not asked; the task waits for the CLI; approved there, the call runs", async () => {
  await using sandbox = agentSandbox();
  await using model = startFakeAnthropic({ calls: [{ tool: DELETE, arguments: { id: "a" } }], finalText: "Deleted." });
  // delete_note is annotated destructive: with no policy file the embedded default asks a person.
  const server = { command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] };
  // The servers in a --mcp-config file: under -p, Claude Code 2.1.330 starts its first turn before
  // the user scope's servers (~/.claude.json) have connected, and offers the model none of them.
  const mcpConfig = join(sandbox.root, "mcp.json");
  await Bun.write(mcpConfig, `${JSON.stringify({ mcpServers: { notes: server } }, null, 2)}\n`);
  // Claude Code runs an Elicitation hook for every form an MCP server puts to it: the hook leaves a
  // mark, so the test sees whether claude -p was asked at all (it would cancel, unseen).
  const asked = join(sandbox.home, "claude-was-asked");
  const hook = { type: "command", command: `touch ${JSON.stringify(asked)}` };
  await Bun.write(join(sandbox.home, ".claude", "settings.json"), `${JSON.stringify({ hooks: { Elicitation: [{ hooks: [hook] }] } }, null, 2)}\n`);
  const env = {
    ...sandbox.env,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-thoughtgate-test",
    ENABLE_TOOL_SEARCH: "false",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // No MCP_CONNECTION_NONBLOCKING here: wrap sets it for Claude Code, so the server connects before the first model request.
  };
  const wrap = Bun.spawn([BINARY, "wrap", "--", agentBinary("claude-code"), "-p", "Delete note a.", "--allowedTools", DELETE, "--mcp-config", mcpConfig, "--strict-mcp-config"], {
    cwd: sandbox.project,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = new Response(wrap.stdout).text();
  const stderr = new Response(wrap.stderr).text();
  try {
    // The CLI finds the wrap session's service by itself (its descriptor in the state dir).
    const tasks = async () => {
      const run = await tasksAtTerminal(["--json"], { env });
      return run.exitCode === 0 ? (JSON.parse(run.stdout) as Array<{ task_id: string; status: string; name: string }>) : [];
    };
    const pending = await waitFor(async () => (await tasks()).find((t) => t.status === "pending" && t.name === "delete_note"), "the approval task", 60_000);
    // Claude Code is not put the form (it would cancel it unseen under -p); the task is still pending.
    await waitFor(() => readEvents(sessionEvents(sandbox.home)).some((e) => e.type === "tool_call_decision" && e.decision === "pending"), "the pending decision in the record");
    expect(existsSync(asked)).toBe(false);
    // A person at their own terminal confirms it.
    const approved = await decideAtTerminal(["approve", pending.task_id], { env });
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(await wrap.exited).toBe(0);
    const run = { exitCode: 0, stdout: await stdout, stderr: await stderr, durationMs: 0, timedOut: false, leftovers: [] };
    expect(model.toolResults.map(({ tool, text }) => ({ tool, text })), describeRun({ agent: "claude-code", argv: [], cwd: "", env: {} }, run, model)).toEqual([
      { tool: DELETE, text: "deleted a" },
    ]);
    const decisions = readEvents(sessionEvents(sandbox.home)).filter((e) => e.type === "tool_call_decision").map((e) => [e.decision, e.approved_by ?? null]);
    expect(decisions).toContainEqual(["forward", "cli"]);
    expect(await stderr).toContain("1 approved by a person");
    // While claude -p ran, the waiting call was announced on stderr: one line, with the command that answers it.
    const announced = (await stderr).split("\n").filter((line) => line.includes(pending.task_id) && line.includes("waits for a person"));
    expect(announced).toEqual([
      `thoughtgate: notes.delete_note waits for a person (task ${pending.task_id}): thoughtgate approve ${pending.task_id} [--session | --always] or thoughtgate deny ${pending.task_id} in another terminal, or the approvals page`,
    ]);
    // And nothing else of the service's while it ran: its lines went to the session's wrap.log.
    expect(await stderr).not.toContain("[info] approval needed");
    // Never put the form at any point of the run.
    expect(existsSync(asked)).toBe(false);
  } finally {
    if (wrap.exitCode === null) wrap.kill("SIGTERM");
    await wrap.exited;
  }
});

/** The one session record wrap wrote under this HOME. */
function sessionEvents(home: string): string {
  const sessions = join(home, ".local", "state", "thoughtgate", "sessions");
  const [run] = [...new Bun.Glob("*/events.jsonl").scanSync({ cwd: sessions })];
  return join(sessions, run ?? "none", "");
}
