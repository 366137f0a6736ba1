import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { bestEffort } from "../core/errors.ts";
import { logTo } from "../core/log.ts";
import { showInvisible } from "../core/visible-text.ts";
import type { TaskView } from "../governance/wire/api.ts";
import type { AgentScreen } from "./agent-modes.ts";

/**
 * Everything wrap and its governance service say in a session (docs/architecture.md, decision 9:
 * never write over the agent's screen). Every line goes to the session's log file,
 * `sessions/<run id>/wrap.log` (0600, each line with its time). On the terminal:
 *
 * - before the agent starts and after it exits, everything, as always;
 * - while an agent that owns the screen runs (a TUI), nothing at all: the person finds approvals in
 *   the agent's own prompt, on the approvals page (`thoughtgate approvals` prints its link), in a
 *   desktop notification, and afterwards in the log file;
 * - while a mode that prints and exits runs (`claude -p`, `codex exec`), one line for each call that
 *   waits for a person, with the command that answers it, and warnings and errors;
 * - while an agent that leaves the terminal alone runs (an editor, a custom agent), everything.
 */
export class SessionVoice {
  readonly path: string;
  private readonly fd: number | null;
  private agentRunning = false;

  constructor(
    sessionDir: string,
    private readonly screen: AgentScreen,
    private readonly terminal: (text: string) => void,
  ) {
    this.path = join(sessionDir, "wrap.log");
    let fd: number | null = null;
    // Without a log file the lines still reach the terminal when they may; while the agent owns
    // it they are lost, which the banner says.
    bestEffort(() => (fd = openSync(this.path, "a", 0o600)));
    this.fd = fd;
    logTo((line, level) => {
      this.record(line);
      if (this.mayWrite(level <= 1 ? "problem" : "info")) this.terminal(line);
    });
  }

  /** Whether the log file could be opened (the banner names it, or says it is missing). */
  get recording(): boolean {
    return this.fd !== null;
  }

  /** wrap's own words (`thoughtgate: …`), as the log's lines go. */
  say(text: string): void {
    this.record(text);
    if (this.mayWrite("info")) this.terminal(text);
  }

  /**
   * A line that holds a key (the approvals page's link): to the terminal, before the agent starts,
   * and never to the log file (the page key is never written to disk); the file gets `recorded`.
   */
  sayKeyed(text: string, recorded: string): void {
    this.record(recorded);
    if (this.mayWrite("info")) this.terminal(text);
  }

  agentStarted(): void {
    this.agentRunning = true;
  }

  agentExited(): void {
    this.agentRunning = false;
  }

  /** A call now waits for a person: in a mode that prints and exits, the one line that says how to answer it. */
  waiting(task: TaskView): void {
    // As people see it: credentials in the name redacted; invisible characters shown as escapes.
    const call = task.method === "tools/call" ? `${task.server_id}.${task.name}` : task.definition ? `the ${task.definition.status} definition of ${task.server_id}.${task.name}` : `${task.server_id} ${task.method} ${task.name}`;
    const id = task.task_id;
    const line = showInvisible(`thoughtgate: ${call} waits for a person (task ${id}): thoughtgate approve ${id} [--session | --always] or thoughtgate deny ${id} in another terminal, or the approvals page`);
    this.record(line);
    if (this.agentRunning && this.screen === "prints") this.terminal(line);
  }

  /** Lines go to stderr again, and the file is closed. */
  close(): void {
    logTo(null);
    if (this.fd !== null) bestEffort(() => closeSync(this.fd as number));
  }

  private mayWrite(kind: "info" | "problem"): boolean {
    if (!this.agentRunning || this.screen === "none") return true;
    return this.screen === "prints" && kind === "problem";
  }

  private record(text: string): void {
    if (this.fd === null) return;
    const stamp = new Date().toISOString();
    const fd = this.fd;
    bestEffort(() => writeSync(fd, `${text.split("\n").map((line) => `${stamp} ${line}`).join("\n")}\n`));
  }
}
