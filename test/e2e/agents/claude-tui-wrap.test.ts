/**
 * The real interactive Claude Code (its TUI) under `thoughtgate wrap`, in tmux, against the fake
 * Anthropic API, making a real call of a destructive tool: while it owns the terminal, not one byte
 * from wrap or its governance service reaches it (their lines go to the session's wrap.log); the
 * approval is asked in Claude Code's own form and answered there; and meanwhile `thoughtgate
 * approvals` in another terminal prints the approvals page, which answers with the waiting call.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { agentSandbox, claudeToolName } from "../../support/agents.ts";
import { claudeTui, PROMPT, waitForServer } from "../../support/claude-tui.ts";
import { startFakeAnthropic } from "../../support/fake-models/anthropic.ts";
import { BINARY, FIXTURES, readEvents, requireBinary, tempDir } from "../../support/harness.ts";
import { runInTerminal } from "../../support/terminal.ts";
import { startTmux } from "../../support/tmux.ts";
import { personsPace } from "../../support/interactive-claude.ts";

setDefaultTimeout(150_000);
requireBinary();

const DELETE = claudeToolName("notes", "delete_note");
/** What only wrap and its service write: log lines and wrap's own. */
const WRAP_MARKERS = ["[info]", "[warn]", "[error]", "thoughtgate: "];

test("interactive Claude Code under wrap: no byte from wrap while it runs; the approval is asked and answered in its form; thoughtgate approvals prints the page meanwhile", async () => {
  await using sandbox = agentSandbox();
  await using model = startFakeAnthropic({ calls: [{ tool: DELETE, arguments: { id: "a" } }], finalText: "Deleted." });
  // delete_note is annotated destructive: with no policy file the embedded default asks a person.
  const server = { command: process.execPath, args: [join(FIXTURES, "sdk-server-fixture.ts"), sandbox.marker] };
  const claude = claudeTui(sandbox, { model, servers: { notes: server }, allowedTools: [DELETE] });
  await using tty = await startTmux([BINARY, "wrap", "--", ...claude.argv], { cwd: sandbox.project, env: claude.env });

  await tty.waitForScreen(PROMPT, 60_000);
  await waitForServer(tty, "notes");
  tty.type("Delete note a.");
  tty.press("Enter");
  const form = await tty.waitForScreen("ThoughtGate: allow delete_note on server notes?");
  expect(form).toContain('id: "a"');

  // Meanwhile, in another terminal of the user's: the approvals page, which shows the waiting call.
  using other = tempDir();
  const approvals = runInTerminal([BINARY, "approvals"], { cwd: other.path, outDir: other.path, env: claude.env });
  expect(await approvals.exited).toBe(0);
  const printed = readFileSync(approvals.stdoutFile, "utf8");
  const link = /^(http:\/\/127\.0\.0\.1:\d+\/approvals)#key=([0-9a-f]{64})  claude in \S+, started [0-9-]+ [0-9:]+ UTC \(thoughtgate wrap, pid \d+\)\n$/.exec(printed);
  expect(link, printed).not.toBeNull();
  const [, page = "", key = ""] = link ?? [];
  expect((await fetch(page)).status).toBe(200);
  const listed = (await (await fetch(`${page}/api/tasks`, { headers: { authorization: `Bearer ${key}` } })).json()) as { tasks: Array<{ status: string; name: string }> };
  expect(listed.tasks.map((task) => [task.name, task.status])).toEqual([["delete_note", "pending"]]);

  // The person answers in Claude Code's form, at a person's pace: Enter (to Accept, "Allow once"
  // being preset), Enter.
  await personsPace();
  tty.press("Enter");
  await personsPace();
  await tty.pressUntil("Enter", "Deleted.");
  expect(model.toolResults.map(({ tool, text }) => ({ tool, text }))).toEqual([{ tool: DELETE, text: "deleted a" }]);

  tty.type("/exit");
  tty.press("Enter");
  expect(await tty.exited(60_000)).toBe(0);

  // Every byte the terminal got, in order: wrap's banner, then Claude Code from its first byte (it
  // names its window "Claude Code") to its last line ("claude --resume <id>"), then wrap's summary.
  // Between the banner and Claude Code's last line, nothing of wrap's or its service's.
  const recorded = tty.recorded();
  // (The window title, an OSC sequence: the banner itself may name Claude Code.)
  const agentFirst = recorded.search(/\x1b\][02];[^\x07\x1b]*Claude Code/);
  const agentLast = recorded.indexOf("\n", recorded.indexOf("claude --resume", agentFirst));
  expect([agentFirst > 0, agentLast > agentFirst]).toEqual([true, true]);
  const bannerEnd = recorded.indexOf("\n", recorded.lastIndexOf("thoughtgate: ", agentFirst));
  const whileRunning = recorded.slice(bannerEnd + 1, agentLast);
  expect(WRAP_MARKERS.filter((marker) => whileRunning.includes(marker))).toEqual([]);
  expect(recorded.slice(agentLast)).toContain("thoughtgate: session summary");
  // The banner said where the page is, how to find it again, and where wrap's lines go.
  const banner = recorded.slice(0, bannerEnd);
  expect(banner).toMatch(/approvals page \(keep it private\) http:\/\/127\.0\.0\.1:\d+\/approvals#key=[0-9a-f]{64}/);
  expect(banner).toContain("while claude runs, wrap writes nothing here");

  // What the service had to say went to the session's log instead, and the record has the person's yes.
  const sessions = join(sandbox.home, ".local", "state", "thoughtgate", "sessions");
  const [run] = [...new Bun.Glob("*/wrap.log").scanSync({ cwd: sessions })];
  const log = readFileSync(join(sessions, run ?? "none"), "utf8");
  expect(log).toMatch(/^\S+Z \[info\] approval needed: task [0-9a-f]{12} notes\.delete_note/m);
  expect(log).toMatch(/^\S+Z \[info\] approval task [0-9a-f]{12} \(notes\.delete_note\): approved by elicitation$/m);
  const decisions = readEvents(join(sessions, run?.replace("wrap.log", "events.jsonl") ?? "none")).filter((e) => e.type === "tool_call_decision");
  expect(decisions.map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["forward", "elicitation"]]);
});
