/**
 * One prompt per call in the real interactive Claude Code (its TUI in tmux, against the loopback fake
 * Anthropic API) under `thoughtgate wrap` with the embedded default policy, over a 20-call stretch of
 * reads, writes, edits, a move, and MCP and built-in tools mixed (docs/governance.md, "Built-in
 * tools"; the counts are in docs/benchmarks.md):
 *
 * - a built-in call the policy asks a person about is asked once, in Claude Code's own prompt,
 *   with ThoughtGate's reason; an edit's prompt shows the lines it changes; the person answers the
 *   first edit with "Yes, and switch to accept edits … for this session", which ThoughtGate takes as
 *   "allow for this session" for the edits and writes in the project: none of them is asked again;
 * - a governed MCP server's call that needs a person is asked once, in ThoughtGate's form: Claude
 *   Code's own prompt does not come first (its hook allows the governed server's tools);
 * - a call the policy forwards is asked nowhere.
 *
 * Every prompt on the screen is counted, Claude Code's and ThoughtGate's, call by call.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, claudeToolName } from "../../support/agents.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, FIXTURES, requireBinary, waitFor } from "../../support/harness.ts";
import { interactiveClaude, personsPace, sessionEvents, toolsListed } from "../../support/interactive-claude.ts";
import { startTmux, type Tmux } from "../../support/tmux.ts";

setDefaultTimeout(300_000);
requireBinary();

/** Claude Code's own permission prompt ("Do you want to proceed?", "… make this edit to a.md?", "… create b.md?"). */
const CLAUDES_OWN = /Do you want to /;
/** ThoughtGate's form, shown by Claude Code as an MCP elicitation. */
const THOUGHTGATE_FORM = /ThoughtGate: allow \S+ on server/;

type Prompt = "claude" | "thoughtgate";

/** Until call `index`'s result reaches the model: each prompt shown, answered yes as a person would (for the session, where `session`). */
async function promptsOf(pane: Tmux, results: () => number, index: number, screens: string[], session = false): Promise<Prompt[]> {
  const prompts: Prompt[] = [];
  const started = performance.now();
  for (;;) {
    const state = await waitFor(() => {
      if (performance.now() - started > 55_000) throw new Error(`call ${index + 1}: neither its result nor a prompt; the screen:\n${pane.screen()}`);
      if (results() > index) return "done" as const;
      const screen = pane.screen();
      // Claude Code's prompt shows ThoughtGate's question as its reason: its own words tell it apart.
      if (CLAUDES_OWN.test(screen)) return "claude" as const;
      if (THOUGHTGATE_FORM.test(screen)) return "thoughtgate" as const;
      return undefined;
    }, `call ${index + 1}: its result or a prompt`, 60_000);
    if (state === "done") return prompts;
    prompts.push(state);
    // Claude Code draws an edit's diff a moment after its prompt ("…" until then).
    await waitFor(() => !/^…$/m.test(pane.screen()), `call ${index + 1}: the prompt drawn whole`, 10_000);
    screens.push(pane.screen());
    await personsPace();
    if (session && state === "claude") {
      await pane.pressUntil("Down", /❯ 2\. Yes, and switch to accept edits/);
      await personsPace();
    }
    // Claude Code's prompt: "1. Yes" is chosen already. ThoughtGate's form: Enter opens the choices, Enter takes "Allow once".
    pane.press("Enter");
    if (state === "thoughtgate") {
      await personsPace();
      pane.press("Enter");
    }
    const pattern = state === "thoughtgate" ? THOUGHTGATE_FORM : CLAUDES_OWN;
    await waitFor(() => results() > index || !pattern.test(pane.screen()), `call ${index + 1}: the prompt to close`, 30_000);
  }
}

test("20 calls in the real interactive Claude Code: one prompt for each call that needs a person, none for the rest, edits and writes once for the session; the edit's prompt shows its lines", async () => {
  await using sandbox = agentSandbox();
  mkdirSync(join(sandbox.project, ".git"));
  const project = realpathSync(sandbox.project);
  const file = (name: string) => join(project, name);
  writeFileSync(file("a.md"), "# Notes\nalpha\nbeta\n");
  const READ_NOTE = claudeToolName("notes", "read_note");
  const DELETE_NOTE = claudeToolName("notes", "delete_note");
  // [the call, whether a person is asked about it: the embedded default asks, and no earlier answer covers it]
  const stretch: Array<[{ tool: string; arguments: Record<string, unknown> }, boolean]> = [
    [{ tool: "Read", arguments: { file_path: file("a.md") } }, false],
    [{ tool: "Bash", arguments: { command: "ls", description: "list" } }, false],
    [{ tool: "Bash", arguments: { command: "grep -n beta a.md", description: "find" } }, false],
    [{ tool: "Bash", arguments: { command: "git log --oneline -1 || true", description: "history" } }, false],
    [{ tool: READ_NOTE, arguments: { id: "a" } }, false],
    [{ tool: "Edit", arguments: { file_path: file("a.md"), old_string: "beta", new_string: "gamma" } }, true],
    [{ tool: "Write", arguments: { file_path: file("b.md"), content: "bee\n" } }, false],
    [{ tool: "Bash", arguments: { command: "git status", description: "status" } }, false],
    [{ tool: "Bash", arguments: { command: "mv b.md c.md", description: "move" } }, true],
    [{ tool: DELETE_NOTE, arguments: { id: "a" } }, true],
    [{ tool: "Read", arguments: { file_path: file("c.md") } }, false],
    [{ tool: "Bash", arguments: { command: "cat a.md", description: "show" } }, false],
    [{ tool: "Edit", arguments: { file_path: file("a.md"), old_string: "gamma", new_string: "delta" } }, false],
    [{ tool: READ_NOTE, arguments: { id: "b" } }, false],
    [{ tool: "Bash", arguments: { command: "wc -l a.md", description: "count" } }, false],
    [{ tool: "Write", arguments: { file_path: file("d.md"), content: "dee\n" } }, false],
    [{ tool: DELETE_NOTE, arguments: { id: "b" } }, true],
    [{ tool: "Bash", arguments: { command: "head -1 a.md", description: "first line" } }, false],
    [{ tool: "Read", arguments: { file_path: file("d.md") } }, false],
    [{ tool: "Bash", arguments: { command: "grep -c delta a.md", description: "count" } }, false],
  ];
  await using model = startFakeAnthropic({ calls: stretch.map(([call]) => call), finalText: "All done." });
  const claude = interactiveClaude(sandbox, model, { notes: { command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] } });
  await using pane = await startTmux([BINARY, "wrap", "--", ...claude.argv], { cwd: sandbox.project, env: claude.env, width: 160, height: 60 });
  await toolsListed(sandbox, 1);
  await pane.waitForScreen(/❯\s*$/m);
  pane.type("Tidy the notes.");
  await personsPace();
  pane.press("Enter");

  const screens: string[] = [];
  const counted: Prompt[][] = [];
  // The first edit (call 6) is answered for the session.
  for (let i = 0; i < stretch.length; i++) counted.push(await promptsOf(pane, () => model.toolResults.length, i, screens, i === 5));
  await pane.waitForScreen("All done.");
  if (process.env.PROMPT_SCREENS) writeFileSync(process.env.PROMPT_SCREENS, screens.join("\n=====\n"));
  const report = counted.map((prompts, i) => `${i + 1} ${stretch[i]?.[0].tool}: ${prompts.join(", ") || "-"}`).join("\n");
  console.log(`prompts per call:\n${report}\nClaude Code's: ${counted.flat().filter((p) => p === "claude").length}, ThoughtGate's: ${counted.flat().filter((p) => p === "thoughtgate").length}`);

  // At most one prompt per call that needs a person, and none for the calls the policy forwards.
  expect(counted.map((prompts) => prompts.length), report).toEqual(stretch.map(([, asks]) => (asks ? 1 : 0)));
  // The built-in calls are asked in Claude Code's own prompt; the MCP server's in ThoughtGate's form.
  expect(counted.flatMap((prompts, i) => prompts.map((p) => `${stretch[i]?.[0].tool} ${p}`)), report).toEqual(["Edit claude", "Bash claude", `${DELETE_NOTE} thoughtgate`, `${DELETE_NOTE} thoughtgate`]);
  // The first edit's prompt shows the lines it changes.
  expect(screens[0], screens[0]).toMatch(/-\s*beta/);
  expect(screens[0], screens[0]).toMatch(/\+\s*gamma/);
  // Everything ran (a person said yes each time), and every call is in the session's record.
  expect(readFileSync(file("a.md"), "utf8")).toBe("# Notes\nalpha\ndelta\n");
  expect(readFileSync(file("c.md"), "utf8")).toBe("bee\n");
  // Each call's last decision (a call asked in Claude Code's prompt gets a second one, with the person's answer there).
  const decided = [...new Map(sessionEvents(sandbox, "tool_call_decision").filter((e) => e.decision !== "pending").map((e) => [e.call_id, e])).values()];
  expect(decided.length).toBe(stretch.length);
  const by = (e: Record<string, unknown>) => e.decided_by as { channel?: string; scope?: string } | undefined;
  const built = decided.filter((e) => by(e)?.channel === "agent_prompt" || by(e)?.channel === "session_grant");
  // A call handed to Claude Code's own prompt is recorded as such, with how far the person's yes reached; the edits and writes after the first, by its grant.
  expect(built.map((e) => `${e.tool} ${by(e)?.channel} (${by(e)?.scope})`)).toEqual([
    "edit agent_prompt (session)",
    "write session_grant (session)",
    "shell agent_prompt (once)",
    "edit session_grant (session)",
    "write session_grant (session)",
  ]);
  // Each of them ran: its PostToolUse hook recorded the end.
  const ended = new Set(sessionEvents(sandbox, "tool_call_end").map((e) => e.call_id));
  expect(built.map((e) => ended.has(e.call_id))).toEqual([true, true, true, true, true]);
  // `thoughtgate log --decision asked` lists the calls a person was asked about, wherever they were asked, and those their answer covered.
  const log = Bun.spawnSync([BINARY, "log", "--decision", "asked", "--json"], { env: claude.env, stdout: "pipe", stderr: "pipe" });
  expect(log.exitCode, log.stderr.toString()).toBe(0);
  const asked = log.stdout.toString().trim().split("\n").map((line) => (JSON.parse(line) as { tool: string }).tool);
  expect(asked.sort()).toEqual(["delete_note", "delete_note", "edit", "edit", "shell", "write", "write"]);

  pane.type("/exit");
  await personsPace();
  pane.press("Enter");
  expect(await pane.exited(60_000)).toBe(0);
});
