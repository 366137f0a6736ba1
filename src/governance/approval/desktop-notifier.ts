import type { Subprocess } from "bun";
import { existsSync } from "node:fs";
import { messageOf } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import { showInvisible } from "../../core/visible-text.ts";
import { redactText } from "../../telemetry/redact.ts";
import type { DecisionScope } from "../wire/api.ts";
import { CHOICE_DECISIONS, CHOICE_TITLES, type Choice } from "../verdict/choices.ts";
import type { Clock, Task } from "./tasks.ts";

/**
 * Approvals where the agent cannot ask (docs/governance.md, Desktop notifications): a call waiting
 * for a person is announced on their desktop, naming the call, the approvals page and the
 * `thoughtgate approve` line. With `notify-send` that supports actions (libnotify 0.7.9 and
 * later), the notification itself offers the form's choices (NOTIFICATION_CHOICES), decided as
 * channel `desktop`; `osascript` on macOS only announces.
 *
 * The page key is never in a notification: a notifier's command line is readable by every local
 * user (`/proc/<pid>/cmdline`, `ps`), and notification daemons keep what they showed (GNOME and
 * KDE in their history, macOS in Notification Center's database). The notification names the page
 * without its key; the link with the key is the one `wrap` or `serve` printed.
 */
/** The program, and the environment it runs in (the desktop session's: DBUS_SESSION_BUS_ADDRESS, DISPLAY…). */
export type NotifyTool = { kind: "notify-send" | "osascript"; path: string; env?: NodeJS.ProcessEnv };

/** What a click on a notification's action decides. */
export type DesktopDecision = { decision: "approve" | "deny"; scope: DecisionScope; alwaysScope?: "project" | "everywhere" };

export type NotifierOptions = {
  tool: NotifyTool;
  /** The approvals page without its key: `http://127.0.0.1:<port>/approvals`. */
  pageUrl: string;
  /** A click on an action: decide the task as channel `desktop` (bound to the task's digest). */
  decide(task: Task, decision: DesktopDecision): void | Promise<void>;
  clock: Clock;
};

/** Notifications shown (and, with actions, waited on) at once; later tasks queue until one is decided. */
export const MAX_LIVE_NOTIFICATIONS = 3;
/**
 * A task the agent's own prompt (elicitation) is asking about is announced too, unless the person
 * answered there first: the agent may be in a window no one is looking at.
 */
export const ELICITATION_GRACE_MS = 10_000;
/** Longest name shown; the rest is on the page. */
const NAME_CHARS = 120;

/**
 * The notification's buttons: the form's choices but "always … everywhere" (notification servers
 * show few buttons; GNOME three, more in a menu). The narrower "always" is the one a click can
 * make; everywhere is on the page, in Slack and with the CLI.
 */
const NOTIFICATION_CHOICES: readonly Choice[] = ["once", "session", "always_project", "deny"];

/** `notify-send` (Linux and BSDs) or `osascript` (macOS) when there is one; null otherwise. */
export function findNotifyTool(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): NotifyTool | null {
  if (platform === "darwin") {
    const path = Bun.which("osascript", { PATH: env.PATH ?? "" }) ?? (existsSync("/usr/bin/osascript") ? "/usr/bin/osascript" : null);
    return path ? { kind: "osascript", path, env } : null;
  }
  const path = Bun.which("notify-send", { PATH: env.PATH ?? "" });
  return path ? { kind: "notify-send", path, env } : null;
}

/**
 * The tool for this session's notifications: none when `THOUGHTGATE_DESKTOP_NOTIFY` is `0`, `off`
 * or `false` (a headless machine, or a test run that must not show anything).
 */
export function desktopTool(env: NodeJS.ProcessEnv = process.env): NotifyTool | null {
  if (["0", "off", "false"].includes((env.THOUGHTGATE_DESKTOP_NOTIFY ?? "").toLowerCase())) return null;
  return findNotifyTool(env);
}

export class DesktopNotifier {
  private readonly live = new Map<string, { proc: Subprocess | null }>();
  private readonly queue: Task[] = [];
  private readonly timers = new Map<string, () => void>();
  private actions: boolean | null = null;
  private warned = false;
  private closed = false;

  constructor(private readonly options: NotifierOptions) {}

  /** A task is waiting for a person: announce it now, or after a grace when the agent is asking too. */
  pending(task: Task, agentAsking: boolean): void {
    if (this.closed || !announced(task)) return;
    if (!agentAsking) return this.enqueue(task);
    this.timers.set(task.id, this.options.clock.schedule(ELICITATION_GRACE_MS, () => this.enqueue(task)));
  }

  /** The agent's prompt got no answer (cancelled, declined unread, failed): announce it now. */
  unanswered(task: Task): void {
    this.timers.get(task.id)?.();
    this.timers.delete(task.id);
    if (!this.closed && announced(task)) this.enqueue(task);
  }

  /** The task left `pending`: its notification is withdrawn and the next queued one shown. */
  finished(task: Task): void {
    this.timers.get(task.id)?.();
    this.timers.delete(task.id);
    const index = this.queue.indexOf(task);
    if (index >= 0) this.queue.splice(index, 1);
    const shown = this.live.get(task.id);
    if (!shown) return;
    this.live.delete(task.id);
    // notify-send closes its notification on SIGINT; elsewhere the signal just ends it.
    shown.proc?.kill("SIGINT");
    this.showNext();
  }

  close(): void {
    this.closed = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.queue.length = 0;
    for (const { proc } of this.live.values()) proc?.kill("SIGINT");
    this.live.clear();
  }

  private enqueue(task: Task): void {
    if (task.status !== "pending" || this.live.has(task.id) || this.queue.includes(task)) return;
    this.queue.push(task);
    this.showNext();
  }

  private showNext(): void {
    while (!this.closed && this.live.size < MAX_LIVE_NOTIFICATIONS) {
      const task = this.queue.shift();
      if (!task) return;
      if (task.status === "pending") this.show(task);
    }
  }

  private show(task: Task): void {
    const { title, body } = notificationText(task, this.options.pageUrl);
    const withActions = task.workflow.destination.type === "any" && this.supportsActions();
    let proc: Subprocess<"pipe", "pipe", "pipe">;
    try {
      proc = Bun.spawn(this.argv(title, body, task, withActions), {
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env: withoutOwnVariables(this.options.tool.env ?? process.env),
      });
    } catch (error) {
      this.warnOnce(`cannot run ${this.options.tool.path}: ${messageOf(error)}`);
      return;
    }
    if (this.options.tool.kind === "osascript") proc.stdin.write(appleScript(title, body));
    void proc.stdin.end();
    this.live.set(task.id, { proc: withActions ? proc : null });
    void this.settle(task, proc, withActions);
  }

  /** What the notifier said when it ended: a clicked action decides; a failure is said once. */
  private async settle(task: Task, proc: Subprocess<"pipe", "pipe", "pipe">, withActions: boolean): Promise<void> {
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    if (code !== 0 && proc.signalCode === null) {
      this.warnOnce(`${this.options.tool.path} exited ${code}${err.trim() ? `: ${showInvisible(err.trim().split("\n")[0] ?? "")}` : ""}`);
    }
    if (!withActions || this.closed) return;
    const clicked = out.trim();
    const decision = NOTIFICATION_CHOICES.find((choice) => choice === clicked && (task.alwaysPossible === true || !choice.startsWith("always")));
    if (decision && task.status === "pending") this.options.decide(task, CHOICE_DECISIONS[decision]);
    // Clicked, dismissed or expired: the slot goes to the next task. One dismissed still waits
    // on the page and for the CLI.
    if (this.live.get(task.id)?.proc === proc) {
      this.live.delete(task.id);
      this.showNext();
    }
  }

  private argv(title: string, body: string, task: Task, withActions: boolean): string[] {
    const { tool } = this.options;
    if (tool.kind === "osascript") return [tool.path, "-"];
    const expires = Math.max(1_000, task.expiresAt - this.options.clock.now());
    const offered = NOTIFICATION_CHOICES.filter((choice) => task.alwaysPossible === true || !choice.startsWith("always"));
    const actions = withActions ? ["--wait", ...offered.map((choice) => `--action=${choice}=${CHOICE_TITLES[choice]}`)] : [];
    return [tool.path, "--app-name=ThoughtGate", "--urgency=normal", `--expire-time=${expires}`, ...actions, "--", title, markupEscaped(body)];
  }

  /** Whether this notify-send offers actions: asked once. */
  private supportsActions(): boolean {
    this.actions ??= notifyActions(this.options.tool);
    return this.actions;
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    log.warn(`desktop notification failed (${message}); approvals still reach you on the approvals page and with thoughtgate approve`);
  }
}

/** The words of a notification: the call, the task, and where to decide. Names are the agent's and the server's: redacted and escaped. */
export function notificationText(task: Task, pageUrl: string): { title: string; body: string } {
  const name = shown(task.name);
  const call = task.method === "tools/call" ? `${shown(task.serverId)}.${name}` : `${shown(task.serverId)} ${task.method} ${name}`;
  const destination = task.workflow.destination.type;
  const where = [
    destination === "any" || destination === "web" ? `the approvals page ${pageUrl} (open the link thoughtgate printed: it carries the key)` : null,
    destination === "any" || destination === "cli" ? `thoughtgate approve ${task.id} [--session | --always]` : null,
  ].filter((line): line is string => line !== null);
  return {
    title: `ThoughtGate: allow ${call}?`,
    body: [`Task ${task.id}, rule ${shown(task.ruleId ?? "defaults")}.`, `Decide with ${where.join(", or ")}.`].join("\n"),
  };
}

/** Whether `tool` offers buttons: notify-send with `--action` in its help (libnotify 0.7.9+); osascript never. */
export function notifyActions(tool: NotifyTool): boolean {
  if (tool.kind !== "notify-send") return false;
  try {
    const help = Bun.spawnSync([tool.path, "--help"], { env: withoutOwnVariables(tool.env ?? process.env), timeout: 2_000 });
    return help.stdout.toString().includes("--action");
  } catch {
    return false;
  }
}

/** Whether a task is one to announce: a workflow that asks only through the agent is not. */
function announced(task: Task): boolean {
  return task.workflow.destination.type !== "elicitation";
}

function shown(text: string): string {
  const visible = showInvisible(redactText(text));
  return visible.length > NAME_CHARS ? `${visible.slice(0, NAME_CHARS)}…` : visible;
}

/** Notification servers render a subset of HTML in the body: what the agent named must stay text. */
function markupEscaped(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The script on osascript's stdin, never its command line; AppleScript strings escape `\` and `"`. */
function appleScript(title: string, body: string): string {
  const quoted = (text: string) => `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", " ")}"`;
  return `display notification ${quoted(body)} with title ${quoted("ThoughtGate")} subtitle ${quoted(title)}\n`;
}

function withoutOwnVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_")) out[key] = value;
  return out;
}
