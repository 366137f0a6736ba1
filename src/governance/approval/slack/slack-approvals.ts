import type { SlackDestination } from "../../../core/config/schema.ts";
import { log } from "../../../core/log.ts";
import type { GovernanceMetrics } from "../../../telemetry/metrics.ts";
import type { TaskAnswer, DecideResult, Task } from "../tasks.ts";
import { CHOICE_DECISIONS, type Choice } from "../../verdict/choices.ts";
import { finishedMessage, pendingMessage } from "./message.ts";
import { Interactions } from "./interactions.ts";
import { ReactionPoller, REACTION_POLL_MS, type ReactionVerdict } from "./reactions.ts";
import { SocketModeClient } from "./socket-mode.ts";
import { SlackTrouble } from "./trouble.ts";
import { SlackWebApi, type SlackFailure } from "./web-api.ts";
import { postMessageAnswer, updateAnswer } from "./wire.ts";
import type { Posted, Workspace } from "./workspace.ts";
import { appTokenDigest, handOn, type Sibling } from "./handoff.ts";
import type { SlackHandoffRequest } from "../../wire/api.ts";

/** Updating a finished task's message is retried this many times (Slack down, rate limited). */
const UPDATE_ATTEMPTS = 5;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** A finished task's message is remembered this long, to answer late clicks. */
const POSTED_RETENTION_MS = 10 * 60_000;
/** A click that arrives while its task's message is being posted waits at most this long for the post. */
const POSTING_WAIT_MS = 5_000;
/** On stop, the outcome updates ("the service stopped") get this long before calls are aborted. */
const CLOSE_GRACE_MS = 3_000;

export type SlackApprovalsOptions = {
  /** The service's `decide` (decide-task.ts): the one path every channel's decision takes. */
  decide(id: string, decision: TaskAnswer, channel: "slack"): Promise<DecideResult>;
  metrics: GovernanceMetrics;
  /** Who asked, as the message says ("claude under thoughtgate wrap on ada@laptop"). */
  origin: string;
  reactionPollMs?: number;
  /** The governance services running beside this one (their descriptors), for clicks on their messages; none: no handoff. */
  siblings?: () => Sibling[];
};

/**
 * Slack as an approval channel (docs/governance.md, Slack). A task whose workflow's destination is
 * Slack is posted to its channel; a listed approver's click (Socket Mode) or reaction decides it
 * through the task store like every other channel, bound to the task's digest; whatever decides
 * first, the message is updated with the outcome and who decided (also on expiry). Slack failing
 * never holds a call: it is logged once, counted, and the workflow's timeout applies.
 */
export class SlackApprovals {
  private readonly workspaces = new Map<string, Workspace>();
  private readonly posted = new Map<string, Posted>();
  /** Posts in flight, by task id. */
  private readonly posting = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly trouble: SlackTrouble;
  private readonly interactions: Interactions;
  private closed = false;

  constructor(private readonly options: SlackApprovalsOptions) {
    this.trouble = new SlackTrouble(options.metrics);
    this.interactions = new Interactions({
      posted: (taskId) => this.postedFor(taskId),
      decide: (posted, choice, digest, user, reason) => this.decide(posted, choice, digest, user, reason),
      refresh: (posted, task) => this.finished(task, posted),
      handOn: (workspace, payload) => (workspace.app && options.siblings ? handOn(options.siblings(), workspace.app, payload) : Promise.resolve(false)),
      trouble: this.trouble,
    });
  }

  /** A task was created: post it when its workflow asks in Slack. */
  created(task: Task): void {
    const destination = task.workflow.destination;
    if (destination.type !== "slack" || this.closed) return;
    const posting = this.post(task, destination, this.workspaceFor(destination), 0);
    this.posting.set(task.id, posting);
    void posting.finally(() => this.posting.delete(task.id));
    this.track(posting);
  }

  /**
   * A click a sibling session got for a message it did not post (handoff.ts; the caller has checked
   * the sibling): decided here as if it came on this service's own connection, when this service
   * posted that message in that Slack app. True when it did (claimed).
   */
  async handedOn(request: SlackHandoffRequest): Promise<boolean> {
    const workspace = [...this.workspaces.values()].find((w) => w.app !== null && w.app.baseUrl === request.base_url && w.app.appTokenDigest === request.app_token_sha256);
    if (!workspace) return false;
    return (await this.interactions.handle(workspace, request.payload, "sibling")) === "claimed";
  }

  /** Slack shows the message before its answer to chat.postMessage reaches us: a quick click waits for that answer. */
  private async postedFor(taskId: string): Promise<Posted | undefined> {
    const posting = this.posting.get(taskId);
    if (posting && !this.posted.has(taskId)) await Promise.race([posting, Bun.sleep(POSTING_WAIT_MS)]);
    return this.posted.get(taskId);
  }

  /** A task left `pending` (any channel, or expiry): its message says so. */
  finished(task: Task, posted = this.posted.get(task.id)): void {
    if (!posted || posted.updated || posted.updating) return;
    posted.workspace.poller?.remove(task.id);
    this.track(this.update(posted, task, 0));
    const forget = setTimeout(() => this.posted.delete(task.id), POSTED_RETENTION_MS);
    forget.unref?.();
  }

  /** Stop listening; give the last updates a moment, then abort what is still in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const workspace of this.workspaces.values()) {
      workspace.socket?.stop();
      workspace.poller?.stop();
    }
    await Promise.race([Promise.allSettled([...this.inFlight]), Bun.sleep(CLOSE_GRACE_MS)]);
    for (const workspace of this.workspaces.values()) workspace.api.close();
  }

  private workspaceFor(destination: SlackDestination): Workspace {
    const key = JSON.stringify([destination.base_url, destination.token, destination.app_token ?? null]);
    const known = this.workspaces.get(key);
    if (known) return known;
    const api = new SlackWebApi(destination.base_url);
    const where = `Slack app for ${destination.channel}`;
    const workspace: Workspace = { api, token: destination.token, socket: null, poller: null, off: null, app: destination.app_token ? { baseUrl: destination.base_url, appTokenDigest: appTokenDigest(destination.app_token) } : null };
    if (destination.app_token) {
      workspace.socket = new SocketModeClient(api, destination.app_token, {
        interactive: (payload) => void this.interactions.handle(workspace, payload),
        failure: (failure, fatal) => this.socketFailure(where, failure, fatal),
        connected: () => this.trouble.recovered(`${where}, Socket Mode`),
      });
    } else {
      workspace.poller = new ReactionPoller(
        api,
        destination.token,
        (posted, verdict) => this.reacted(posted, verdict),
        (failure) => this.result(workspace, where, "reactions.get", failure),
        this.options.reactionPollMs ?? REACTION_POLL_MS,
      );
    }
    this.workspaces.set(key, workspace);
    return workspace;
  }

  private async post(task: Task, destination: SlackDestination, workspace: Workspace, attempt: number): Promise<void> {
    if (task.status !== "pending" || workspace.off || this.closed) return;
    workspace.socket?.start();
    const decideBy = workspace.socket ? "buttons" : "reactions";
    const message = pendingMessage(task, { approvers: destination.approvers, origin: this.options.origin, decideBy });
    const where = `channel ${destination.channel}`;
    const answer = await workspace.api.call("chat.postMessage", workspace.token, { channel: destination.channel, ...message, unfurl_links: false, unfurl_media: false }, postMessageAnswer, "json");
    if (!answer.ok) {
      this.result(workspace, where, "chat.postMessage", answer.failure);
      const delay = retryDelay(answer.failure, attempt);
      // Worth another try only while someone could still answer it.
      if (delay !== null && Date.now() + delay < task.expiresAt) {
        await Bun.sleep(delay);
        return this.post(task, destination, workspace, attempt + 1);
      }
      return;
    }
    this.result(workspace, where, "chat.postMessage", null);
    const posted: Posted = {
      taskId: task.id,
      channel: answer.value.channel,
      ts: answer.value.ts,
      approvers: new Set(destination.approvers),
      workspace,
      digest: task.digest,
      workflowName: task.workflowName,
      where,
      updated: false,
      updating: false,
    };
    this.posted.set(task.id, posted);
    log.info(`approval task ${task.id}: posted to Slack ${destination.channel}`);
    // Decided (on the page, say) while it was being posted: say so at once.
    if (task.status !== "pending") this.finished(task, posted);
    else workspace.poller?.add(posted);
  }

  private async update(posted: Posted, task: Task, attempt: number): Promise<void> {
    posted.updating = true;
    const message = finishedMessage(task, this.options.origin, posted.slackUser);
    const answer = await posted.workspace.api.call("chat.update", posted.workspace.token, { channel: posted.channel, ts: posted.ts, ...message }, updateAnswer, "json");
    this.result(posted.workspace, posted.where, "chat.update", answer.ok ? null : answer.failure);
    if (answer.ok) {
      posted.updated = true;
      posted.updating = false;
      return;
    }
    const delay = retryDelay(answer.failure, attempt);
    if (delay === null || attempt + 1 >= UPDATE_ATTEMPTS || this.closed) {
      posted.updating = false;
      return;
    }
    await Bun.sleep(delay);
    return this.update(posted, task, attempt + 1);
  }

  /** A listed approver's click or reaction: the same `decide` as every channel, with their reason if they wrote one. */
  private async decide(posted: Posted, choice: Choice, digest: string, user: string, reason?: string): Promise<DecideResult> {
    const before = posted.slackUser;
    // Set first: the task store reports the outcome (and the message is updated) inside `decide`.
    posted.slackUser = user;
    const { decision, scope, alwaysScope } = CHOICE_DECISIONS[choice];
    const said = decision === "approve" ? "approved" : "denied";
    const result = await this.options.decide(
      posted.taskId,
      { decision, scope, ...(alwaysScope ? { alwaysScope } : {}), digest, who: user, reason: `${said} in Slack by ${user}`, ...(reason !== undefined ? { personReason: reason } : {}) },
      "slack",
    );
    if (!result.ok) posted.slackUser = before;
    else log.info(`approval task ${posted.taskId}: ${said} in Slack by ${user}`);
    return result;
  }

  private reacted(posted: Posted, verdict: ReactionVerdict): void {
    void this.decide(posted, verdict.decision === "approve" ? "once" : "deny", posted.digest, verdict.user);
  }

  private socketFailure(where: string, failure: SlackFailure, fatal: boolean): void {
    const method = failure.code === "socket_closed" || failure.code === "link_disabled" ? "socket_mode" : "apps.connections.open";
    this.trouble.failed(`${where}, Socket Mode`, method, failure);
    if (fatal) log.error(`Slack approvals (${where}): Socket Mode stopped; Approve/Deny clicks cannot reach ThoughtGate until the policy is reloaded with a working app token`);
  }

  private result(workspace: Workspace, where: string, method: string, failure: SlackFailure | null): void {
    if (!failure) {
      this.trouble.recovered(where);
      return;
    }
    this.trouble.failed(where, method, failure);
    if (failure.kind === "auth" && !workspace.off) {
      workspace.off = failure.code;
      workspace.socket?.stop();
      workspace.poller?.stop();
    }
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }
}

/** How long before another try, or null when trying again cannot help. */
function retryDelay(failure: SlackFailure, attempt: number): number | null {
  if (failure.kind === "rate_limited") return failure.retryAfterMs ?? MAX_RETRY_MS;
  if (failure.kind !== "transient") return null;
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt);
}
