/**
 * Sessions side by side share one Slack app (docs/governance.md, Slack): two `thoughtgate serve`
 * (the compiled binary, one state directory, so each finds the other's service descriptor) post to
 * one loopback fake Slack that, like Slack, hands each click to ONE of the app's open Socket Mode
 * connections at random. Every click decides its own task, whichever session's connection got it;
 * reactions and expiries reach the session that owns the task. (A handoff from anything but a
 * sibling ThoughtGate: attacks/slack-handoff.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksText, FakeSlack, findButton, type Message } from "../support/fake-slack.ts";
import { tempDir, waitFor } from "../support/harness.ts";
import { ServeProcess } from "../support/serve.ts";

setDefaultTimeout(60_000);

const TOKENS = { SLACK_BOT_TOKEN: "xoxb-fake-bot-token", SLACK_APP_TOKEN: "xapp-fake-app-token", THOUGHTGATE_DESKTOP_NOTIFY: "off" };

function policy(baseUrl: string, appToken: boolean, timeout = "30s"): string {
  const destination = `{ type: slack, channel: approvals, token: "\${SLACK_BOT_TOKEN}", approvers: [U0LEAD], base_url: "${baseUrl}"${appToken ? ', app_token: "${SLACK_APP_TOKEN}"' : ""} }`;
  return `schema: 1\ngovernance:\n  rules:\n    - { id: ask, match: "*", action: approve, approval: lead }\napproval:\n  lead: { destination: ${destination}, timeout: ${timeout} }\n`;
}

const dir = tempDir();

async function twoSessions(name: string, yaml: string): Promise<[ServeProcess, ServeProcess]> {
  const file = join(dir.path, `${name}.yaml`);
  writeFileSync(file, yaml);
  return [await ServeProcess.start(["--thoughtgate-config", file], { env: TOKENS }), await ServeProcess.start(["--thoughtgate-config", file], { env: TOKENS })];
}

/** A task in `serve`, and its message in Slack. */
async function asked(serve: ServeProcess, slack: FakeSlack, name: string): Promise<{ id: string; message: Message }> {
  const answer = await serve.evaluate({ server_id: "fs", name, arguments: { path: `/tmp/${name}` } });
  const id = String(answer.task_id);
  const message = await waitFor(() => slack.messages.find((m) => findButton(m.blocks, "thoughtgate_deny").startsWith(id) || blocksText(m.blocks).includes(`Task\n${id}`)), `the message of ${name}`);
  return { id, message };
}

afterAll(() => dir[Symbol.dispose]());

describe("two sessions, one Slack app, clicks handed to either connection", () => {
  // Deterministic, yet like Slack's: over two connections, runs of the same one, so clicks land on
  // the owner's connection and on the other session's alike.
  const picks = [0, 0, 1, 1, 0, 1, 1, 0];
  let next = 0;
  const slack = new FakeSlack(() => picks[next++ % picks.length] ?? 0);
  let a: ServeProcess;
  let b: ServeProcess;
  beforeAll(async () => {
    [a, b] = await twoSessions("buttons", policy(slack.baseUrl, true));
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await slack.stop();
  });

  test("every click decides its own task, whichever session's connection Slack gave it to; the message says who decided", async () => {
    const tasks = [];
    for (const [i, serve] of [a, b, a, b, a, b, a, b].entries()) tasks.push({ serve, ...(await asked(serve, slack, `delete_${i}`)) });
    await waitFor(() => slack.open.length === 2, "both sessions' Socket Mode connections");
    for (const [i, task] of tasks.entries()) {
      await slack.click(task.message, i % 3 === 0 ? "thoughtgate_deny" : "thoughtgate_approve", "U0LEAD", undefined, i === 0 ? "not this one" : undefined);
      await waitFor(async () => (await task.serve.task(task.id)).status !== "pending", `task ${i} to be decided`).catch((e) => {
        throw new Error(`${e}\nA:\n${a.stderr}\nB:\n${b.stderr}`);
      });
    }
    const outcomes = await Promise.all(tasks.map(async (task) => (await task.serve.task(task.id)) as Record<string, unknown>));
    expect(outcomes.map((o) => [o.status, o.decided_by, o.decided_by_who])).toEqual(tasks.map((_, i) => [i % 3 === 0 ? "denied" : "approved", "slack", "U0LEAD"]));
    expect(outcomes[0]?.person_reason).toBe("not this one");
    // Both connections got clicks, and the clicks that reached the other session were handed on.
    expect(new Set(slack.deliveries)).toEqual(new Set([0, 1]));
    expect(`${a.stderr}${b.stderr}`).toContain("a click on another session's approval message was handed on to it");
    for (const task of tasks) expect(await waitFor(() => task.message.updates.at(-1), "the message's update")).toBeDefined();
  });

  test("a click on a message no running session posted is answered once, saying nothing was decided", async () => {
    const { message } = await asked(a, slack, "delete_gone");
    await a.stop();
    const before = slack.ephemerals.length;
    await slack.click(message, "thoughtgate_approve", "U0LEAD");
    const told = await waitFor(() => slack.ephemerals.slice(before).find((e) => e.user === "U0LEAD"), "the clicker to be told");
    expect(told.text).toContain("ThoughtGate does not know this approval request");
  });
});

describe("two sessions, one Slack app, reactions and expiries", () => {
  test("each session reads the reactions on its own messages, and says when its own tasks expire", async () => {
    await using slack = new FakeSlack();
    const [a, b] = await twoSessions("reactions", policy(slack.baseUrl, false, "3s"));
    try {
      const first = await asked(a, slack, "delete_a");
      const second = await asked(b, slack, "delete_b");
      const expiring = await asked(b, slack, "delete_c");
      slack.react(second.message, "+1", "U0LEAD");
      slack.react(first.message, "-1", "U0LEAD");
      await waitFor(async () => (await a.task(first.id)).status === "denied" && (await b.task(second.id)).status === "approved", "both reactions to decide");
      await waitFor(async () => (await b.task(expiring.id)).status === "timed_out", "the third task to expire");
      const update = await waitFor(() => expiring.message.updates.at(-1), "the expired message's update");
      expect(blocksText(update.blocks)).toContain("No decision within 3s: the call was denied");
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
