import * as v from "valibot";
import { log } from "../../../core/log.ts";
import type { DecideResult, Task } from "../tasks.ts";
import type { Choice } from "../../verdict/choices.ts";
import { choiceOf, decidedBy, parseButtonValue, REASON_ACTION, REASON_BLOCK } from "./message.ts";
import type { Posted, Workspace } from "./workspace.ts";
import type { SlackTrouble } from "./trouble.ts";
import { blockActions, ephemeralAnswer } from "./wire.ts";

export type InteractionsOptions = {
  /** The message posted for a task (once a post in flight for it has finished: a click can beat Slack's answer to us). */
  posted(taskId: string): Promise<Posted | undefined>;
  decide(posted: Posted, choice: Choice, digest: string, user: string, reason: string | undefined): Promise<DecideResult>;
  /** Update a finished task's message again (an earlier update may have failed). */
  refresh(posted: Posted, task: Task): void;
  /**
   * Hand a click on a message this service did not post to the session beside it that did (one
   * Slack app, several sessions: Slack gives each click to one connection at random); true when
   * one took it (handoff.ts).
   */
  handOn(workspace: Workspace, payload: unknown): Promise<boolean>;
  trouble: SlackTrouble;
};

/** Where a click came from: this service's own Socket Mode connection, or a sibling session that handed it on. */
export type ClickSource = "socket" | "sibling";

/**
 * Button clicks that arrive by Socket Mode (`block_actions`). A click counts only when it is on the
 * message ThoughtGate posted for that task (same channel and timestamp), names the task's digest,
 * and comes from a user the workflow lists. Whoever is refused, or clicks after the task was
 * decided, is told so in a message only they see (`chat.postEphemeral`). A click on a message
 * another session posted is handed on to it; one a sibling handed here is checked the same way.
 */
export class Interactions {
  constructor(private readonly options: InteractionsOptions) {}

  /** `claimed`: the click was on a message this service posted (decided or refused here); `unclaimed`: not ours. */
  async handle(workspace: Workspace, payload: unknown, source: ClickSource = "socket"): Promise<"claimed" | "unclaimed"> {
    const parsed = v.safeParse(blockActions, payload);
    if (!parsed.success) return "unclaimed";
    const click = parsed.output;
    const action = click.actions.find((a) => choiceOf(a.action_id) !== undefined);
    const choice = action ? choiceOf(action.action_id) : undefined;
    if (!action || !choice) return "unclaimed";
    const user = click.user.id;
    const ref = parseButtonValue(action.value);
    const posted = ref ? await this.options.posted(ref.taskId) : undefined;
    const channel = click.container?.channel_id ?? click.channel?.id;
    const ts = click.container?.message_ts ?? click.message?.ts;
    if (!ref || !posted || posted.workspace !== workspace || posted.channel !== channel || posted.ts !== ts) {
      // Another session's message (they share the Slack app), or one that finished long ago.
      if (source === "sibling" || (ref && (await this.options.handOn(workspace, payload)))) return "unclaimed";
      log.warn(`Slack: a click by ${user} names no approval message this service or a session beside it posted (finished long ago, or the service restarted); ignored`);
      if (channel) this.tell(workspace, channel, user, "ThoughtGate does not know this approval request (it finished long ago, or the service restarted). Nothing was decided.");
      return "unclaimed";
    }
    if (!posted.approvers.has(user)) {
      log.warn(`approval task ${posted.taskId}: Slack user ${user} is not an approver of workflow ${posted.workflowName}; their click was ignored`);
      this.tell(workspace, posted.channel, user, `Only the approvers this workflow lists may decide this request; your click changed nothing. The task is still waiting.`);
      return "claimed";
    }
    const reason = click.state?.values?.[REASON_BLOCK]?.[REASON_ACTION]?.value ?? undefined;
    const result = await this.options.decide(posted, choice, ref.digest, user, reason);
    if (result.ok) return "claimed";
    if (result.error === "not_possible") {
      this.tell(workspace, posted.channel, user, `${result.reason}. Nothing was decided: the request is still waiting.`);
    } else if (result.error === "not_pending") {
      const { task } = result;
      this.tell(workspace, posted.channel, user, `This request was already ${task.status.replace("_", " ")} ${decidedBy(task, posted.slackUser)}; your answer changed nothing.`);
      if (!posted.updated) this.options.refresh(posted, task);
    } else if (result.error === "digest_mismatch") {
      log.warn(`approval task ${posted.taskId}: a Slack click named a different call than the task (digest mismatch); refused`);
      this.tell(workspace, posted.channel, user, "This button names a different call than the task; refused.");
    } else {
      this.tell(workspace, posted.channel, user, "ThoughtGate no longer knows this request; nothing was decided.");
    }
    return "claimed";
  }

  /** A message only `user` sees; failing to send it changes nothing but is counted. */
  private tell(workspace: Workspace, channel: string, user: string, text: string): void {
    if (workspace.off) return;
    void workspace.api.call("chat.postEphemeral", workspace.token, { channel, user, text }, ephemeralAnswer, "json").then((answer) => {
      if (!answer.ok) this.options.trouble.failed(`channel ${channel}`, "chat.postEphemeral", answer.failure);
    });
  }
}
