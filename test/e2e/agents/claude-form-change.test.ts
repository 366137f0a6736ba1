/**
 * ThoughtGate's question about an edit in the real interactive Claude Code (2.1.330, its TUI in
 * tmux at 80 columns, against the loopback fake Anthropic API), with server-filesystem:
 *
 * - what Claude Code shows of the question: the first three lines of the message, each cut at the
 *   terminal's width, then "… (+N more lines)" (four rows); the question leads with the change, so
 *   those are the headline naming the file, and what is replaced by what;
 * - under wrap, with a second session running beside it (`thoughtgate serve`), `thoughtgate
 *   approvals` names each session by agent, project and start, `thoughtgate tasks` lists the edit
 *   under Claude's session, and `thoughtgate deny <task>` finds that session by the task's id;
 * - a plain run, its server entry the shim alone (as `enroll` writes it, no wrap): the form offers
 *   the same four answers, and Esc tells the model the person refused.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, claudeToolName } from "../../support/agents.ts";
import { claudeTui, PROMPT, waitForServer } from "../../support/claude-tui.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, FILESYSTEM_SERVER_JS, requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import { personsPace } from "../../support/interactive-claude.ts";
import { ServeProcess } from "../../support/serve.ts";
import { decideAtTerminal, runInTerminal } from "../../support/terminal.ts";
import { startTmux } from "../../support/tmux.ts";

setDefaultTimeout(180_000);
requireBinary();

const EDIT = claudeToolName("fs", "edit_file");
const HEADLINE = "ThoughtGate: allow edit_file on server fs to change";
const WIDTH = 80;

/** The notes file and the edit the fake model asks for: one line replaced. */
function notesIn(project: string): { path: string; edit: Record<string, unknown> } {
  const path = join(realpathSync(project), "notes.md");
  writeFileSync(path, "# Notes\nStatus: draft\nowner: ada\n");
  return { path, edit: { path, edits: [{ oldText: "Status: draft", newText: "Status: final" }] } };
}

/** The form's message as Claude Code draws it: the rows from the headline on, the frame's border stripped. */
function formRows(screen: string): string[] {
  const rows = screen.split("\n");
  const start = rows.findIndex((row) => row.includes("ThoughtGate: allow"));
  return rows.slice(start, start + 6).map((row) => row.replace(/^[\s│]+|[\s│]+$/g, ""));
}

test("wrapped: the form's first lines carry the edit; approvals and tasks name the sessions; deny finds the task's session by its id", async () => {
  await using sandbox = agentSandbox();
  const { path, edit } = notesIn(sandbox.project);
  await using model = startFakeAnthropic({ calls: [{ tool: EDIT, arguments: edit }], finalText: "Left it." });
  const claude = claudeTui(sandbox, { model, servers: { fs: { command: "node", args: [FILESYSTEM_SERVER_JS, sandbox.project] } }, allowedTools: [EDIT] });
  // A second session beside Claude's, as a person with two running has.
  const serve = await ServeProcess.start([], { env: claude.env });
  try {
    await using tty = await startTmux([BINARY, "wrap", "--", ...claude.argv], { cwd: sandbox.project, env: claude.env, width: WIDTH, height: 50 });
    await tty.waitForScreen(PROMPT, 60_000);
    await waitForServer(tty, "fs");
    tty.type("Mark the notes final.");
    await personsPace();
    tty.press("Enter");
    const screen = await tty.waitForScreen(/Status: final/);
    // Measured: three lines of the message, each cut at the terminal's width, then Claude Code's
    // own count of the rest: the headline naming the file, and what is replaced by what.
    const rows = formRows(screen);
    expect(rows[0]).toStartWith(HEADLINE);
    expect(rows.slice(1, 3)).toEqual(["-Status: draft", "+Status: final"]);
    expect(rows[3]).toMatch(/^… \(\+\d+ more lines?\)/);
    expect(screen.split("\n").every((row) => row.length <= WIDTH)).toBe(true);

    // Another terminal of the person's: both sessions, each named.
    using other = tempDir();
    const approvals = runInTerminal([BINARY, "approvals"], { cwd: other.path, outDir: other.path, env: claude.env });
    expect(await approvals.exited).toBe(0);
    const printed = readFileSync(approvals.stdoutFile, "utf8");
    expect(printed).toMatch(new RegExp(`#key=[0-9a-f]{64}  claude in ${realpathSync(sandbox.project)}, started [0-9-]+ [0-9:]+ UTC \\(thoughtgate wrap, pid \\d+\\)\\n`));
    expect(printed).toMatch(new RegExp(`#key=[0-9a-f]{64}  thoughtgate serve, started [0-9-]+ [0-9:]+ UTC \\(pid ${serve.proc.pid}\\)\\n`));

    const tasks = runInTerminal([BINARY, "tasks"], { cwd: other.path, outDir: other.path, env: claude.env });
    expect(await tasks.exited).toBe(0);
    const listed = readFileSync(tasks.stdoutFile, "utf8");
    const id = /^claude in .+:\n(?:.*\n)*?\s+([0-9a-f]{12})\s+pending\s+fs\.edit_file/m.exec(listed)?.[1];
    expect(id, listed).toBeDefined();

    // No --endpoint: the task's id finds Claude's session among the two.
    const denied = await decideAtTerminal(["deny", id ?? "", "--reason", "not yet"], { env: claude.env });
    expect(denied).toMatchObject({ exitCode: 0, stdout: `denied ${id}: fs.edit_file\n` });
    await waitFor(() => model.toolResults.length >= 1, "the refusal to reach the model", 30_000);
    expect(model.toolResults[0]?.text).toContain("not yet");
    expect(readFileSync(path, "utf8")).toBe("# Notes\nStatus: draft\nowner: ada\n");
    // The form the CLI answered for: Esc closes it if Claude Code still shows it.
    if (tty.screen().includes(HEADLINE)) tty.press("Escape");
    await tty.waitForScreen("Left it.");
    tty.type("/exit");
    tty.press("Enter");
    expect(await tty.exited(60_000)).toBe(0);
  } finally {
    await serve.stop();
  }
});

test("a plain run whose server entry is the shim alone (enrolled): the same four answers, and Esc tells the model the person refused", async () => {
  await using sandbox = agentSandbox();
  const { path, edit } = notesIn(sandbox.project);
  await using model = startFakeAnthropic({ calls: [{ tool: EDIT, arguments: edit }], finalText: "Left it." });
  const shim = { command: BINARY, args: ["shim", "--server-id", "fs", "--", "node", FILESYSTEM_SERVER_JS, sandbox.project] };
  const claude = claudeTui(sandbox, { model, servers: { fs: shim }, allowedTools: [EDIT] });
  await using tty = await startTmux(claude.argv, { cwd: sandbox.project, env: claude.env, width: WIDTH, height: 50 });
  await tty.waitForScreen(PROMPT, 60_000);
  await waitForServer(tty, "fs");
  tty.type("Mark the notes final.");
  await personsPace();
  tty.press("Enter");
  const screen = await tty.waitForScreen(/Status: final/);
  expect(formRows(screen)[0]).toStartWith(HEADLINE);
  expect(formRows(screen).slice(1, 3)).toEqual(["-Status: draft", "+Status: final"]);

  await personsPace();
  tty.press("Right");
  const expanded = await tty.waitForScreen("Always allow this tool everywhere");
  for (const title of ["Allow once", "Allow this tool for this session", "Always allow this tool in this project", "Always allow this tool everywhere", "Deny"]) {
    expect(expanded.split("\n").some((row) => row.includes(title)), expanded).toBe(true);
  }
  // Esc closes the choices, Esc the form: the person's no.
  await personsPace();
  tty.press("Escape");
  await personsPace();
  tty.press("Escape");
  await waitFor(() => model.toolResults.length >= 1, "the refusal to reach the model", 30_000);
  expect(model.toolResults[0]?.text).toMatch(/rule default-destructive: approval required: (rejected by the person in the agent's prompt|refused by the person: they dismissed the agent's prompt \(Esc\))/);
  expect(model.toolResults[0]?.text).not.toContain("the agent answered the approval form itself");
  expect(readFileSync(path, "utf8")).toBe("# Notes\nStatus: draft\nowner: ada\n");
  await tty.waitForScreen("Left it.");
  tty.type("/exit");
  tty.press("Enter");
  expect(await tty.exited(60_000)).toBe(0);
});
