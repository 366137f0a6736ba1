import type { SlackFailure, SlackWebApi } from "./web-api.ts";
import { reactionsAnswer, type Reaction } from "./wire.ts";

/**
 * One `reactions.get` every this often, for one waiting message at a time in turn: Slack allows
 * about 50 a minute (Tier 3), and several waiting calls share the budget.
 */
export const REACTION_POLL_MS = 2_000;

const APPROVE = new Set(["+1", "thumbsup"]);
const DENY = new Set(["-1", "thumbsdown"]);

export type Watched = { taskId: string; channel: string; ts: string; approvers: ReadonlySet<string> };

export type ReactionVerdict = { decision: "approve" | "deny"; user: string };

/**
 * What the listed approvers' reactions say: 👎 from any of them denies (a disagreement fails
 * closed), else 👍 from any of them approves. Everyone else's reactions count for nothing; skin
 * tones (`+1::skin-tone-3`) are the same reaction.
 */
export function verdictOf(reactions: readonly Reaction[], approvers: ReadonlySet<string>): ReactionVerdict | null {
  const by = (names: Set<string>) => {
    for (const reaction of reactions) {
      if (!names.has(reaction.name.split("::")[0] ?? "")) continue;
      const user = (reaction.users ?? []).find((id) => approvers.has(id));
      if (user) return user;
    }
    return undefined;
  };
  const denier = by(DENY);
  if (denier) return { decision: "deny", user: denier };
  const approver = by(APPROVE);
  return approver ? { decision: "approve", user: approver } : null;
}

/**
 * Reads the reactions on the waiting messages of one Slack app without Socket Mode, one message
 * per tick, round robin. A rate limit pauses it for as long as Slack asked.
 */
export class ReactionPoller<T extends Watched = Watched> {
  private readonly watched = new Map<string, T>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private busy = false;
  private resumeAt = 0;

  constructor(
    private readonly api: SlackWebApi,
    private readonly token: string,
    private readonly onVerdict: (watched: T, verdict: ReactionVerdict) => void,
    private readonly onResult: (failure: SlackFailure | null) => void,
    private readonly intervalMs = REACTION_POLL_MS,
  ) {}

  add(watched: T): void {
    this.watched.set(watched.taskId, watched);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.intervalMs);
      this.timer.unref?.();
    }
  }

  remove(taskId: string): void {
    this.watched.delete(taskId);
    if (this.watched.size === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.busy || Date.now() < this.resumeAt) return;
    const next = this.watched.values().next();
    if (next.done) return;
    const watched = next.value;
    // To the back of the line: the others get their turn first.
    this.watched.delete(watched.taskId);
    this.watched.set(watched.taskId, watched);
    this.busy = true;
    try {
      const answer = await this.api.call("reactions.get", this.token, { channel: watched.channel, timestamp: watched.ts, full: true }, reactionsAnswer, "form");
      if (!answer.ok) {
        if (answer.failure.retryAfterMs !== undefined) this.resumeAt = Date.now() + answer.failure.retryAfterMs;
        this.onResult(answer.failure);
        return;
      }
      this.onResult(null);
      if (!this.watched.has(watched.taskId)) return;
      const verdict = verdictOf(answer.value.message.reactions ?? [], watched.approvers);
      if (verdict) this.onVerdict(watched, verdict);
    } finally {
      this.busy = false;
    }
  }
}
