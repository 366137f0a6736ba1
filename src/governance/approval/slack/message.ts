import { showInvisible } from "../../../core/visible-text.ts";
import { redactText } from "../../../telemetry/redact.ts";
import { approvalPrompt, visibleDiff } from "../../verdict/approval-prompt.ts";
import { formatDuration } from "../../../core/duration.ts";
import { definitionTaskPrompt, SEE_ALL_AT } from "../task-prompt.ts";
import type { Task } from "../tasks.ts";
import { CHOICE_TITLES, offeredChoices, type Choice } from "../../verdict/choices.ts";
import { MAX_REASON_CHARS } from "../../wire/api.ts";

/**
 * The Block Kit message of one approval task (https://api.slack.com/block-kit). Everything that
 * came from the agent or the server (tool name, arguments, server id) goes in `plain_text`
 * objects, which Slack never formats: a tool name cannot become a link, a mention or
 * `<!channel>`. Credentials are redacted and invisible characters shown as escapes, by the same
 * prompt builder every channel uses; only ids we validated and our own words are `mrkdwn`.
 */

/** One button per choice of the form (verdict/choices.ts); Approve keeps its id from before there were more. */
const CHOICE_ACTIONS: Record<Choice, string> = {
  once: "thoughtgate_approve",
  session: "thoughtgate_approve_session",
  always_project: "thoughtgate_approve_always_project",
  always_everywhere: "thoughtgate_approve_always_everywhere",
  deny: "thoughtgate_deny",
};
/** The reason box: its text comes with the click (the payload's `state.values`). */
export const REASON_BLOCK = "thoughtgate_reason";
export const REASON_ACTION = "reason";

/** The choice a button stands for, or undefined for an action that is none of ours. */
export function choiceOf(actionId: string): Choice | undefined {
  return (Object.keys(CHOICE_ACTIONS) as Choice[]).find((choice) => CHOICE_ACTIONS[choice] === actionId);
}

/** Block Kit limits: header text, section text, a field. */
const HEADER_CHARS = 150;
const SECTION_CHARS = 3_000;
const FIELD_CHARS = 2_000;

type Block = Record<string, unknown>;
export type SlackMessage = { text: string; blocks: Block[] };

/** How a person decides in Slack: buttons (Socket Mode) or reactions. */
type DecideBy = "buttons" | "reactions";

export type MessageContext = { approvers: readonly string[]; origin: string; decideBy: DecideBy };

/** The message while the task waits. */
export function pendingMessage(task: Task, context: MessageContext): SlackMessage {
  const who = context.approvers.map((id) => `<@${id}>`).join(", ");
  const how =
    context.decideBy === "buttons"
      ? `Only ${who} may decide here.`
      : `React with :+1: to approve or :-1: to deny. Only ${who} may decide here.`;
  const blocks: Block[] = [
    ...details(task, `Approval needed: ${target(task)}`, context.origin),
    expiry(task),
    { type: "context", elements: [{ type: "mrkdwn", text: `${how} The approvals page and \`thoughtgate approve ${task.id}\` work too; the first answer counts.` }] },
  ];
  if (context.decideBy === "buttons") {
    // A definition is accepted as it is shown (it becomes the pin): accept or deny, nothing wider.
    const choices: Choice[] = task.definition ? ["once", "deny"] : offeredChoices(task.alwaysPossible === true);
    blocks.push(
      {
        type: "input",
        block_id: REASON_BLOCK,
        optional: true,
        label: plain("Reason (optional; with a deny, the agent is told it)"),
        element: { type: "plain_text_input", action_id: REASON_ACTION, max_length: MAX_REASON_CHARS },
      },
      {
        type: "actions",
        block_id: "thoughtgate_decision",
        elements: choices.map((choice) => ({
          type: "button",
          action_id: CHOICE_ACTIONS[choice],
          ...(choice === "once" ? { style: "primary" } : choice === "deny" ? { style: "danger" } : {}),
          text: plain(task.definition && choice === "once" ? "Accept the new definition" : CHOICE_TITLES[choice]),
          value: buttonValue(task),
        })),
      },
    );
  }
  return { text: escapeMrkdwn(`Approval needed: ${target(task)} (task ${task.id})`), blocks };
}

/** The message once the task left `pending`: what happened and who decided; no buttons. */
export function finishedMessage(task: Task, origin: string, slackUser: string | undefined): SlackMessage {
  const outcome = outcomeOf(task, slackUser);
  const blocks: Block[] = [...details(task, `${outcome.title}: ${target(task)}`, origin), { type: "context", elements: [{ type: "mrkdwn", text: outcome.line }] }];
  // The person's own words, whatever the channel (already redacted and escaped: tasks.ts, personWords).
  if (task.personReason !== undefined) blocks.push({ type: "context", elements: [plain(clip(`Reason: ${task.personReason}`, FIELD_CHARS))] });
  return { text: escapeMrkdwn(`${outcome.title}: ${target(task)} (task ${task.id})`), blocks };
}

/** `<task id>:<digest>`: a click names the exact call it was shown, like every other channel. */
function buttonValue(task: Pick<Task, "id" | "digest">): string {
  return `${task.id}:${task.digest}`;
}

export function parseButtonValue(value: string | undefined): { taskId: string; digest: string } | null {
  const match = /^([0-9a-f]{12}):([0-9a-f]{64})$/.exec(value ?? "");
  return match ? { taskId: match[1] as string, digest: match[2] as string } : null;
}

function details(task: Task, title: string, origin: string): Block[] {
  const tool = task.method === "tools/call" ? ["Tool", task.name] : task.definition ? ["Definition", task.name] : [task.method === "prompts/get" ? "Prompt" : "Resource", task.name];
  const fields = [
    ["Server", task.serverId],
    tool,
    ["Rule", task.ruleId ?? "(default)"],
    ["Workflow", task.workflowName],
    ["Asked by", origin],
    ["Task", task.id],
  ].map(([label, value]) => plain(clip(`${label}\n${shown(value ?? "")}`, FIELD_CHARS)));
  return [
    { type: "header", text: plain(clip(title, HEADER_CHARS)) },
    { type: "section", text: plain(clip(definitionTaskPrompt(task, SEE_ALL_AT) ?? approvalPrompt(task, task.reason, { seeAllAt: SEE_ALL_AT, change: task.change ?? null, diffApart: true }), SECTION_CHARS)) },
    // The change in a block of its own (a section holds 3,000 characters): the same diff as the page.
    ...(task.change ? [{ type: "section", text: plain(clip(`Change to ${shown(task.change.path)}:\n${visibleDiff(task.change.diff)}`, SECTION_CHARS)) }] : []),
    { type: "section", fields },
  ];
}

function expiry(task: Task): Block {
  const seconds = Math.floor(task.expiresAt / 1000);
  const fallback = new Date(task.expiresAt).toISOString();
  const then = task.workflow.on_timeout === "approve" ? "approved" : "denied";
  return {
    type: "context",
    elements: [{ type: "mrkdwn", text: `Expires <!date^${seconds}^{date_short_pretty} at {time_secs}|${fallback}> (in ${formatDuration(task.expiresAt - task.createdAt)}); unanswered, the call is ${then}. Call digest \`${task.digest.slice(0, 16)}…\`` }],
  };
}

function outcomeOf(task: Task, slackUser: string | undefined): { title: string; line: string } {
  const by = decidedBy(task, slackUser);
  switch (task.status) {
    case "approved": {
      const scope = task.scope === "session" ? " for this session" : task.scope === "always" ? (task.alwaysScope === "everywhere" ? " always, everywhere" : " always, in this project") : "";
      return { title: "Approved", line: `:white_check_mark: Approved${scope} ${by}.` };
    }
    case "denied":
      return { title: "Denied", line: `:no_entry: Denied ${by}.` };
    case "timed_out": {
      const outcome = task.timeoutOutcome === "approve" ? "approved" : "denied";
      return { title: "Expired", line: `:hourglass: No decision within ${formatDuration(task.workflow.timeout)}: the call was ${outcome} (on_timeout: ${task.timeoutOutcome ?? "deny"}).` };
    }
    case "expired":
      return { title: "Expired", line: ":hourglass: The approval task expired; the call was denied." };
    case "cancelled":
      return { title: "Cancelled", line: task.decidedBy === "service" ? ":octagonal_sign: The governance service stopped; the call was denied." : ":octagonal_sign: The agent cancelled the call." };
    default:
      return { title: "Waiting", line: "Waiting for a decision." };
  }
}

/** Who decided, in words (the Slack user as a mention Slack renders as their name). */
export function decidedBy(task: Pick<Task, "decidedBy">, slackUser: string | undefined): string {
  switch (task.decidedBy) {
    case "slack":
      return slackUser ? `by <@${slackUser}> in Slack` : "in Slack";
    case "web":
      return "on the approvals page";
    case "cli":
      return "on the command line (`thoughtgate approve|deny`)";
    case "elicitation":
      return "by the agent's user, asked through the agent";
    default:
      return `by ${task.decidedBy ?? "unknown"}`;
  }
}

function target(task: Task): string {
  const name = task.method === "tools/call" ? `${task.serverId}.${task.name}` : `${task.serverId} ${task.method} ${task.name}`;
  return shown(name);
}

/** Credentials redacted, invisible characters as escapes. */
function shown(text: string): string {
  return showInvisible(redactText(text));
}

function plain(text: string): Block {
  return { type: "plain_text", text, emoji: false };
}

/** At most `max` characters, the middle left out (never the end, where a padded value hides its tail). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `…[${cut} characters not shown]…`;
  const keep = max - marker(text.length).length;
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return `${text.slice(0, head)}${marker(text.length - keep)}${text.slice(text.length - tail)}`;
}

/** Slack's three control characters in mrkdwn (https://api.slack.com/reference/surfaces/formatting#escaping). */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
