/**
 * Attack family: forging a Slack approver's click. Sessions that share a Slack app hand each other
 * the clicks Slack gave to the wrong one (POST /slack/handoff, docs/governance.md, Slack). Anything
 * that is not a ThoughtGate service running beside the receiver (here: a plain process of the same
 * user, which can read every file of the user's: the service descriptors, the Slack tokens) is
 * refused before the click is read, and decides nothing. Through the compiled binary (`thoughtgate
 * serve`) and the loopback fake Slack.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeSlack, findButton } from "../../support/fake-slack.ts";
import { tempDir, waitFor } from "../../support/harness.ts";
import { ServeProcess } from "../../support/serve.ts";

setDefaultTimeout(60_000);

const TOKENS = { SLACK_BOT_TOKEN: "xoxb-fake-bot-token", SLACK_APP_TOKEN: "xapp-fake-app-token", THOUGHTGATE_DESKTOP_NOTIFY: "off" };
const dir = tempDir();
const slack = new FakeSlack();
afterAll(async () => {
  await slack.stop();
  dir[Symbol.dispose]();
});

test("a handoff from a process that is not a ThoughtGate service beside it is refused (403) and decides nothing", async () => {
  const file = join(dir.path, "thoughtgate.yaml");
  const destination = `{ type: slack, channel: approvals, token: "\${SLACK_BOT_TOKEN}", app_token: "\${SLACK_APP_TOKEN}", approvers: [U0LEAD], base_url: "${slack.baseUrl}" }`;
  writeFileSync(file, `schema: 1\ngovernance:\n  rules:\n    - { id: ask, match: "*", action: approve, approval: lead }\napproval:\n  lead: { destination: ${destination}, timeout: 30s }\n`);
  await using serve = await ServeProcess.start(["--thoughtgate-config", file], { env: TOKENS });
  const asked = await serve.evaluate({ server_id: "fs", name: "delete_repo", arguments: {} });
  const message = await slack.message(0);
  const [taskId, digest] = findButton(message.blocks, "thoughtgate_approve").split(":");
  expect(taskId).toBe(asked.task_id);
  // Everything a real click would carry, from what the user's files and Slack's API give away.
  const payload = {
    type: "block_actions",
    user: { id: "U0LEAD" },
    container: { channel_id: message.channel, message_ts: message.ts },
    actions: [{ action_id: "thoughtgate_approve", value: `${taskId}:${digest}` }],
  };
  const forged = await fetch(`${serve.endpoint}/slack/handoff`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ base_url: slack.baseUrl, app_token_sha256: new Bun.CryptoHasher("sha256").update(TOKENS.SLACK_APP_TOKEN).digest("hex"), payload }),
  });
  expect(forged.status).toBe(403);
  expect(((await forged.json()) as { error: string }).error).toBe("the caller is not a ThoughtGate service running beside this one");
  await waitFor(() => serve.stderr.includes("Slack handoff refused"), "the refusal in the log");
  expect((await serve.task(asked.task_id)).status).toBe("pending");
});
