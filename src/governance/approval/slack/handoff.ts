import * as v from "valibot";
import { createHash } from "node:crypto";
import { messageOf } from "../../../core/errors.ts";
import { log } from "../../../core/log.ts";
import { notSibling, pidListeningOn } from "../../../core/peer-process.ts";
import { SLACK_HANDOFF_PATH, slackHandoffResponse, type SlackHandoffRequest } from "../../wire/api.ts";

/** A governance service running beside this one (its service descriptor: endpoint and pid). */
export type Sibling = { endpoint: string; pid: number };

/** Which Slack app a click came through: its Web API URL and a SHA-256 of its app token. */
export type SlackAppIdentity = { baseUrl: string; appTokenDigest: string };

/** A sibling gets this long to take a click (Slack's user waits for the outcome). */
const HANDOFF_TIMEOUT_MS = 3_000;

export function appTokenDigest(appToken: string): string {
  return createHash("sha256").update(appToken).digest("hex");
}

/**
 * Hand a click this service did not post for to the sibling that did (docs/governance.md, Slack:
 * sessions side by side share one app, and Slack gives each click to one of its connections at
 * random). Only to a sibling the kernel vouches for: the descriptor's endpoint is a port that very
 * process listens on, and it runs this binary, untraced, with a clean environment
 * (core/peer-process.ts): a descriptor another process wrote cannot draw clicks to itself. The
 * sibling checks the same of this process before it believes the click, and then checks the click
 * as its own (the message it posted, a listed approver, the task's digest). True when one took it.
 */
export async function handOn(siblings: readonly Sibling[], app: SlackAppIdentity, payload: unknown): Promise<boolean> {
  const body: SlackHandoffRequest = { base_url: app.baseUrl, app_token_sha256: app.appTokenDigest, payload };
  for (const sibling of siblings) {
    const port = Number(new URL(sibling.endpoint).port);
    if (pidListeningOn(port, [sibling.pid]) !== sibling.pid) {
      log.debug(`Slack handoff: ${sibling.endpoint} is not served by pid ${sibling.pid}; skipped`);
      continue;
    }
    const why = notSibling(sibling.pid);
    if (why) {
      log.debug(`Slack handoff: ${why}; skipped`);
      continue;
    }
    try {
      const answer = await fetch(`${sibling.endpoint}${SLACK_HANDOFF_PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(HANDOFF_TIMEOUT_MS),
        redirect: "error",
      });
      const parsed = v.safeParse(slackHandoffResponse, await answer.json().catch(() => null));
      if (answer.ok && parsed.success && parsed.output.claimed) {
        log.info(`Slack: a click on another session's approval message was handed on to it (pid ${sibling.pid})`);
        return true;
      }
    } catch (error) {
      log.debug(`Slack handoff to ${sibling.endpoint} failed: ${messageOf(error)}`);
    }
  }
  return false;
}
