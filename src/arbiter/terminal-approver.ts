import { closeSync, openSync, writeSync } from "node:fs";
import { ReadStream } from "node:tty";
import { bestEffort, messageOf } from "../core/errors.ts";
import { log } from "../core/log.ts";

/**
 * docs/codecli-protocol.md §7: an approval is asked on the user's terminal, never through the child's stdin (that is
 * the control channel). We open `/dev/tty` ourselves, so it works whatever our own stdin, stdout
 * and stderr are redirected to; with no controlling terminal (CI, a daemon) there is no one to ask.
 * One question at a time, in arrival order; deny is the default answer.
 */
export type ApprovalAnswer =
  | "approve"
  | "reject"
  /** The user chose to end the session ("abort", or Ctrl+C at the prompt). */
  | "abort"
  /** Nobody answered within the request's time. */
  | "timeout"
  /** There is no terminal to ask on. */
  | "no_terminal"
  /** The caller withdrew the question (decision timeout, the child went away). */
  | "cancelled";

export type ApprovalQuestion = {
  /** The lines shown above the answer line. */
  text: string;
  timeoutMs: number;
  signal: AbortSignal;
};

export type Approver = {
  ask(question: ApprovalQuestion): Promise<ApprovalAnswer>;
  /** Ctrl+C: answers the open question with "abort"; false when no question is open. */
  interrupt(): boolean;
  close(): void;
};

type Asked = {
  question: ApprovalQuestion;
  resolve: (answer: ApprovalAnswer) => void;
  timer: ReturnType<typeof setTimeout> | null;
  onAbort: () => void;
  done: boolean;
};

const TTY_PATH = "/dev/tty";
const ANSWERS: Record<string, ApprovalAnswer> = { y: "approve", yes: "approve", n: "reject", no: "reject", "": "reject", a: "abort", abort: "abort" };

export class TerminalApprover implements Approver {
  /** null until the first question; then the terminal, or "none" when it cannot be opened. */
  private terminal: { input: ReadStream; outputFd: number } | "none" | null = null;
  private readonly queue: Asked[] = [];
  private active: Asked | null = null;
  private partial = "";

  constructor(private readonly path = TTY_PATH) {}

  ask(question: ApprovalQuestion): Promise<ApprovalAnswer> {
    if (question.signal.aborted) return Promise.resolve("cancelled");
    if (this.open() === "none") return Promise.resolve("no_terminal");
    return new Promise((resolve) => {
      const asked: Asked = { question, resolve, timer: null, onAbort: () => this.finish(asked, "cancelled"), done: false };
      question.signal.addEventListener("abort", asked.onAbort, { once: true });
      this.queue.push(asked);
      this.next();
    });
  }

  interrupt(): boolean {
    if (!this.active) return false;
    // The terminal has echoed ^C itself.
    this.write("\n");
    this.finish(this.active, "abort");
    return true;
  }

  close(): void {
    for (const asked of [...(this.active ? [this.active] : []), ...this.queue]) this.finish(asked, "cancelled");
    this.release();
  }

  private open(): "ok" | "none" {
    if (this.terminal === "none") return "none";
    if (this.terminal) return "ok";
    try {
      const outputFd = openSync(this.path, "w");
      const input = new ReadStream(openSync(this.path, "r"));
      input.setEncoding("utf8");
      input.on("data", (text: string) => this.onInput(text));
      input.on("end", () => this.lost("end of input"));
      input.on("error", (error: Error) => this.lost(messageOf(error)));
      this.terminal = { input, outputFd };
      return "ok";
    } catch (error) {
      log.debug(`no terminal for approvals (${this.path}: ${messageOf(error)})`);
      this.terminal = "none";
      return "none";
    }
  }

  private next(): void {
    if (this.active) return;
    const asked = this.queue.shift();
    if (!asked) return;
    if (this.terminal === "none") {
      this.finish(asked, "no_terminal");
      return;
    }
    this.active = asked;
    this.partial = "";
    asked.timer = setTimeout(() => {
      this.write(`\n(no answer in ${formatMs(asked.question.timeoutMs)})\n`);
      this.finish(asked, "timeout");
    }, asked.question.timeoutMs);
    this.write(`\n${asked.question.text}\n  [y]es / [N]o / [a]bort the session (no answer in ${formatMs(asked.question.timeoutMs)}: no) > `);
  }

  private onInput(text: string): void {
    // Typed ahead while no question was open: never let it answer the next one.
    if (!this.active) return;
    this.partial += text;
    let newline = this.partial.indexOf("\n");
    while (newline !== -1 && this.active) {
      const line = this.partial.slice(0, newline).trim().toLowerCase();
      this.partial = this.partial.slice(newline + 1);
      const answer = ANSWERS[line];
      if (answer) this.finish(this.active, answer);
      else this.write("  please answer y (allow), n (deny) or a (abort the session) > ");
      newline = this.partial.indexOf("\n");
    }
  }

  private finish(asked: Asked, answer: ApprovalAnswer): void {
    if (asked.done) return;
    asked.done = true;
    if (asked.timer) clearTimeout(asked.timer);
    asked.question.signal.removeEventListener("abort", asked.onAbort);
    if (this.active === asked) {
      if (answer === "cancelled") this.write("\n(no longer needed)\n");
      this.active = null;
    } else {
      const index = this.queue.indexOf(asked);
      if (index !== -1) this.queue.splice(index, 1);
    }
    asked.resolve(answer);
    this.next();
  }

  /** The terminal went away (hangup, Ctrl+D): the open question gets the default answer, later ones the default action. */
  private lost(reason: string): void {
    log.debug(`terminal input ended (${reason}): approvals fall back to --default-action`);
    this.release();
    if (this.active) this.finish(this.active, "reject");
    for (const asked of [...this.queue]) this.finish(asked, "no_terminal");
  }

  private release(): void {
    if (this.terminal && this.terminal !== "none") {
      const { input, outputFd } = this.terminal;
      input.destroy();
      bestEffort(() => closeSync(outputFd));
    }
    this.terminal = "none";
  }

  private write(text: string): void {
    if (!this.terminal || this.terminal === "none") return;
    const fd = this.terminal.outputFd;
    bestEffort(() => writeSync(fd, text));
  }
}

function formatMs(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10}s`;
  return `${Math.round(ms / 6_000) / 10}m`;
}
