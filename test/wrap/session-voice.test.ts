import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { log } from "../../src/core/log.ts";
import type { TaskView } from "../../src/governance/wire/api.ts";
import type { AgentScreen } from "../../src/wrap/agent-modes.ts";
import { SessionVoice } from "../../src/wrap/session-voice.ts";
import { tempDir } from "../support/harness.ts";

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const voice of open.splice(0)) voice.close();
});

function voice(screen: AgentScreen) {
  const dir = tempDir();
  const terminal: string[] = [];
  const v = new SessionVoice(dir.path, screen, (text) => terminal.push(text));
  open.push({ close: () => (v.close(), dir[Symbol.dispose]()) });
  return { v, terminal, file: () => readFileSync(v.path, "utf8") };
}

const TASK = { task_id: "0123456789ab", method: "tools/call", server_id: "notes", name: "delete_note" } as TaskView;

/** One of each: wrap's own line, the service's info, a warning, and a waiting call. */
function speak(v: SessionVoice) {
  v.say("thoughtgate: restored x");
  log.info("approval needed: task 0123456789ab");
  log.warn("slack is down");
  v.waiting(TASK);
}

describe("what wrap and its service say while the agent runs", () => {
  test("an agent that owns the screen gets nothing of it; the log file gets every line, with its time", () => {
    const { v, terminal, file } = voice("owns");
    v.agentStarted();
    speak(v);
    v.agentExited();
    expect(terminal).toEqual([]);
    expect(file().split("\n").filter(Boolean).map((line) => line.replace(/^\S+Z /, ""))).toEqual([
      "thoughtgate: restored x",
      "[info] approval needed: task 0123456789ab",
      "[warn] slack is down",
      "thoughtgate: notes.delete_note waits for a person (task 0123456789ab): thoughtgate approve 0123456789ab [--session | --always] or thoughtgate deny 0123456789ab in another terminal, or the approvals page",
    ]);
    expect(statSync(v.path).mode & 0o777).toBe(0o600);
    // Before the agent starts and after it exits, the terminal is wrap's again.
    v.say("thoughtgate: session summary");
    expect(terminal).toEqual(["thoughtgate: session summary"]);
  });

  test("a line holding the page key reaches the terminal and never the log file", () => {
    const { v, terminal, file } = voice("owns");
    v.sayKeyed("thoughtgate: approvals page (keep it private) http://127.0.0.1:1/approvals#key=abc", "thoughtgate: approvals page http://127.0.0.1:1/approvals");
    expect(terminal).toEqual(["thoughtgate: approvals page (keep it private) http://127.0.0.1:1/approvals#key=abc"]);
    expect(file()).not.toContain("key=abc");
    expect(file()).toContain("thoughtgate: approvals page http://127.0.0.1:1/approvals\n");
  });

  test("a mode that prints and exits gets one line per waiting call, and warnings; an editor's terminal gets everything", () => {
    const prints = voice("prints");
    prints.v.agentStarted();
    speak(prints.v);
    expect(prints.terminal).toEqual([
      "[warn] slack is down",
      "thoughtgate: notes.delete_note waits for a person (task 0123456789ab): thoughtgate approve 0123456789ab [--session | --always] or thoughtgate deny 0123456789ab in another terminal, or the approvals page",
    ]);
    prints.v.close();
    const none = voice("none");
    none.v.agentStarted();
    speak(none.v);
    expect(none.terminal).toEqual(["thoughtgate: restored x", "[info] approval needed: task 0123456789ab", "[warn] slack is down"]);
  });
});
