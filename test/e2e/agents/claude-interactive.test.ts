/**
 * ThoughtGate's question in the real interactive Claude Code (2.1.330, in tmux, against the loopback
 * fake Anthropic API), under `thoughtgate wrap`:
 *
 * - the form says who asks ("ThoughtGate: …"), its choices are visible whole, Accept allows once in
 *   two keystrokes (Enter, Enter), and "Always allow this tool everywhere" writes the rule into the
 *   user's policy so the next session asks nothing;
 * - with `--sole-approver`, Claude Code's own "Do you want to proceed?" never comes: one prompt per
 *   governed call that needs one (a read-only tool's call runs with none);
 * - Esc on the form is the person's no: the call is refused at once, as declined by the person.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { agentSandbox, claudeToolName, type AgentSandbox } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, FIXTURES, requireBinary, waitFor } from "../../support/harness.ts";
import { interactiveClaude, personsPace, sessionEvents, toolsListed, userPolicy } from "../../support/interactive-claude.ts";
import { startTmux, type Tmux } from "../../support/tmux.ts";
import type { FakeModel } from "../../support/fake-models/fake-model.ts";

setDefaultTimeout(180_000);
requireBinary();

const READ = claudeToolName("notes", "read_note");
const DELETE = claudeToolName("notes", "delete_note");
const TITLES = ["Allow once", "Allow this tool for this session", "Always allow this tool in this project", "Always allow this tool everywhere", "Deny"];
const FORM = "ThoughtGate: allow delete_note on server notes?";
const CLAUDES_OWN = "Do you want to proceed?";

/** The notes fixture server (delete_note is annotated destructive: the embedded default asks a person). */
const notes = (sandbox: AgentSandbox) => ({ command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] });

/** `thoughtgate wrap [flags] -- claude` in tmux, once Claude Code has its MCP tools; the prompt typed. */
async function session(sandbox: AgentSandbox, model: FakeModel, flags: string[], prompt: string, listedBefore: number): Promise<Tmux> {
  const claude = interactiveClaude(sandbox, model, { notes: notes(sandbox) });
  const pane = await startTmux([BINARY, "wrap", ...flags, "--", ...claude.argv], { cwd: sandbox.project, env: claude.env, width: 160, height: 50 });
  await toolsListed(sandbox, listedBefore + 1);
  await pane.waitForScreen(/❯\s*$/m);
  pane.type(prompt);
  await personsPace();
  pane.press("Enter");
  return pane;
}

async function exitClaude(pane: Tmux): Promise<number> {
  pane.type("/exit");
  await personsPace();
  pane.press("Enter");
  return pane.exited(60_000);
}

describe("ThoughtGate's form in the real interactive Claude Code", () => {
  test("one prompt per call that needs one (--sole-approver); Enter, Enter allows once; the choices show whole; always writes the rule and the next session asks nothing", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeAnthropic({
      calls: [
        { tool: READ, arguments: { id: "a" } },
        { tool: DELETE, arguments: { id: "a" } },
        { tool: DELETE, arguments: { id: "b" } },
      ],
      finalText: "Done.",
    });
    {
      await using pane = await session(sandbox, model, ["--sole-approver"], "Read note a, then delete notes a and b.", 0);
      // The read-only tool ran with no prompt at all: nothing stopped it for a key.
      await waitFor(() => model.toolResults.length >= 1, "the read's result");
      expect(model.toolResults[0]).toMatchObject({ tool: READ, text: "first note" });

      const first = await pane.waitForScreen(FORM);
      expect(first).not.toContain(CLAUDES_OWN);
      // The first lines a person reads: who asks, the tool, the server, the rule, the arguments.
      expect(first).toContain(`${FORM} (rule default-destructive: approval required)\n  id: "a"`);
      // Two keystrokes, at a person's pace: Enter (to Accept, "Allow once" being preset), Enter.
      await personsPace();
      pane.press("Enter");
      await personsPace();
      pane.press("Enter");
      await waitFor(() => model.toolResults.length >= 2, "the first delete's result");
      expect(model.toolResults[1]).toMatchObject({ tool: DELETE, text: "deleted a" });

      await pane.waitForScreen(/ThoughtGate: allow delete_note on server notes\? .*\n\s*id: "b"/);
      await personsPace();
      pane.press("Right");
      const expanded = await pane.waitForScreen("Always allow this tool everywhere");
      for (const title of TITLES) expect(expanded.split("\n").some((line) => line.includes(title) && !line.includes("…"))).toBe(true);
      expect(expanded).not.toContain(CLAUDES_OWN);
      // Down to "Always allow this tool everywhere", Enter chooses it (and moves to Accept), Enter accepts.
      for (let i = 0; i < 3; i++) {
        await personsPace();
        pane.press("Down");
      }
      await personsPace();
      pane.press("Enter");
      await personsPace();
      pane.press("Enter");
      await waitFor(() => model.toolResults.length >= 3, "the second delete's result");
      expect(model.toolResults[2]).toMatchObject({ tool: DELETE, text: "deleted b" });
      await pane.waitForScreen("Done.");
      expect(await exitClaude(pane)).toBe(0);
    }
    // The rule names the program that served the tool (not just its name in the config).
    expect(userPolicy(sandbox)).toMatch(/- \{ id: "always-allow-notes-delete_note", match: "delete_note", method: "tools\/call", source: "notes", server: \{ command: \[[^\]]*sdk-server-fixture\.ts[^\]]*\] \}, action: "forward" \}/);
    // ThoughtGate asked twice in the first session (the two deletes), never about the read.
    expect(sessionEvents(sandbox, "tool_call_decision").filter((e) => e.decision === "pending").map((e) => e.tool)).toEqual(["delete_note", "delete_note"]);

    // The next session: the rule forwards the tool; no one is asked.
    await using next = startFakeAnthropic({ calls: [{ tool: DELETE, arguments: { id: "c" } }], finalText: "Deleted c." });
    {
      await using pane = await session(sandbox, next, ["--sole-approver"], "Delete note c.", 1);
      await waitFor(() => next.toolResults.length >= 1, "the delete's result");
      expect(next.toolResults[0]).toMatchObject({ tool: DELETE, text: "no note c" });
      await pane.waitForScreen("Deleted c.");
      expect(pane.screen()).not.toContain("requests your input");
      expect(await exitClaude(pane)).toBe(0);
    }
    const decided = sessionEvents(sandbox, "tool_call_decision").filter((e) => e.decision !== "pending");
    expect(decided.at(-1)).toMatchObject({ tool: "delete_note", decision: "forward", rule_id: "always-allow-notes-delete_note", decided_by: { channel: "always_rule" } });
  });

  test("Esc on the form is the person's no: the call is refused within 2 s, as the person's (as the form opens, and after looking at the choices)", async () => {
    await using sandbox = agentSandbox();
    await using model = startFakeAnthropic({
      calls: [
        { tool: DELETE, arguments: { id: "a" } },
        { tool: DELETE, arguments: { id: "b" } },
      ],
      finalText: "Nothing deleted.",
    });
    await using pane = await session(sandbox, model, ["--sole-approver"], "Delete notes a and b.", 0);
    // Esc on the form as it opens. (Claude Code 2.1.330 answers decline; an agent that answers cancel
    // is refused the same, under wrap, as the person's no: test/governance/service/service-scopes.test.ts.)
    await pane.waitForScreen(FORM);
    await personsPace();
    pane.press("Escape");
    let pressed = performance.now();
    await waitFor(() => model.toolResults.length >= 1, "the first refusal to reach the model", 2_000);
    expect(performance.now() - pressed).toBeLessThan(2_000);
    expect(model.toolResults[0]?.text).toContain("rule default-destructive: approval required: rejected by the person in the agent's prompt");
    // Esc after looking at the choices: the first closes them, the second the form.
    await pane.waitForScreen(/ThoughtGate: allow delete_note on server notes\? .*\n\s*id: "b"/);
    await personsPace();
    pane.press("Right");
    await pane.waitForScreen("Always allow this tool everywhere");
    await personsPace();
    pane.press("Escape");
    await personsPace();
    pane.press("Escape");
    pressed = performance.now();
    await waitFor(() => model.toolResults.length >= 2, "the second refusal to reach the model", 2_000);
    expect(performance.now() - pressed).toBeLessThan(2_000);
    expect(model.toolResults[1]?.text).toMatch(/rule default-destructive: approval required: (rejected by the person in the agent's prompt|declined by the person: they dismissed the agent's prompt \(Esc\))/);
    await waitFor(() => sessionEvents(sandbox, "tool_call_decision").filter((e) => e.decision === "deny").length === 2, "both denials in the record");
    expect(sessionEvents(sandbox, "tool_call_decision").filter((e) => e.decision === "deny").map((e) => e.decided_by)).toEqual([{ channel: "elicitation" }, { channel: "elicitation" }]);
    await pane.waitForScreen("Nothing deleted.");
    expect(await exitClaude(pane)).toBe(0);
  });
});
