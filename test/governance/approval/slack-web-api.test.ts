import { afterAll, describe, expect, test } from "bun:test";
import { SlackWebApi } from "../../../src/governance/approval/slack/web-api.ts";
import { postMessageAnswer, reactionsAnswer, updateAnswer } from "../../../src/governance/approval/slack/wire.ts";
import { FakeSlack } from "../../support/fake-slack.ts";

const slack = new FakeSlack();
afterAll(() => slack.stop());

const TOKEN = "xoxb-fake-bot-token";

describe("the Slack Web API client", () => {
  test("chat methods send JSON with the token in the Authorization header; Slack answers with the channel's id", async () => {
    const api = new SlackWebApi(slack.baseUrl);
    const answer = await api.call("chat.postMessage", TOKEN, { channel: "approvals", text: "hi", blocks: [{ type: "divider" }] }, postMessageAnswer, "json");
    expect(answer).toEqual({ ok: true, value: expect.objectContaining({ ok: true, channel: "C0APPROVALS", ts: expect.stringMatching(/^\d+\.\d+$/) }) });
    const call = slack.callsOf("chat.postMessage").at(-1);
    expect(call).toMatchObject({ contentType: "application/json; charset=utf-8", token: TOKEN, args: { channel: "approvals", text: "hi" } });
    expect(JSON.stringify(call?.args)).not.toContain(TOKEN);
  });

  test("reads are form-encoded (a JSON body would be ignored by Slack), objects as JSON strings", async () => {
    const api = new SlackWebApi(slack.baseUrl);
    const posted = await api.call("chat.postMessage", TOKEN, { channel: "C0APPROVALS", text: "r" }, postMessageAnswer, "json");
    if (!posted.ok) throw new Error(posted.failure.detail);
    const message = await slack.message(slack.messages.length - 1);
    slack.react(message, "+1::skin-tone-2", "U0APPROVER");
    const answer = await api.call("reactions.get", TOKEN, { channel: posted.value.channel, timestamp: posted.value.ts, full: true }, reactionsAnswer, "form");
    expect(answer.ok && answer.value.message.reactions).toEqual([{ name: "+1::skin-tone-2", users: ["U0APPROVER"], count: 1 }]);
    expect(slack.callsOf("reactions.get").at(-1)?.contentType).toBe("application/x-www-form-urlencoded");
    // The same read as JSON is what Slack treats as a call without arguments.
    const asJson = await api.call("reactions.get", TOKEN, { channel: posted.value.channel, timestamp: posted.value.ts }, reactionsAnswer, "json");
    expect(asJson.ok).toBe(false);
  });

  test("ok: false is a failure named by Slack's error, sorted by what can help", async () => {
    const api = new SlackWebApi(slack.baseUrl);
    const gone = await api.call("chat.postMessage", TOKEN, { channel: "deleted-channel", text: "x" }, postMessageAnswer, "json");
    expect(gone).toEqual({ ok: false, failure: { code: "channel_not_found", kind: "permanent", detail: "chat.postMessage: Slack answered channel_not_found" } });
    slack.revoked.add("xoxb-revoked");
    slack.botTokens.add("xoxb-revoked");
    const revoked = await api.call("chat.update", "xoxb-revoked", { channel: "approvals", ts: "1.1", text: "x" }, updateAnswer, "json");
    expect(revoked.ok || revoked.failure).toMatchObject({ code: "token_revoked", kind: "auth" });
    slack.fail("chat.update", { error: "internal_error" });
    const down = await api.call("chat.update", TOKEN, { channel: "approvals", ts: "1.1", text: "x" }, updateAnswer, "json");
    expect(down.ok || down.failure).toMatchObject({ code: "internal_error", kind: "transient" });
  });

  test("HTTP 429 waits out Retry-After: calls of that method fail at once until then, without reaching Slack", async () => {
    const api = new SlackWebApi(slack.baseUrl);
    slack.fail("chat.postEphemeral", { status: 429, retryAfter: "2" });
    const limited = await api.call("chat.postEphemeral", TOKEN, { channel: "approvals", user: "U1", text: "x" }, updateAnswer, "json");
    expect(limited.ok || limited.failure).toMatchObject({ code: "ratelimited", kind: "rate_limited", retryAfterMs: 2000 });
    const before = slack.callsOf("chat.postEphemeral").length;
    const again = await api.call("chat.postEphemeral", TOKEN, { channel: "approvals", user: "U1", text: "x" }, updateAnswer, "json");
    expect(again.ok || again.failure.kind).toBe("rate_limited");
    expect(slack.callsOf("chat.postEphemeral")).toHaveLength(before);
    // Other methods are not held back.
    expect((await api.call("chat.postMessage", TOKEN, { channel: "approvals", text: "x" }, postMessageAnswer, "json")).ok).toBe(true);
  });

  test("a 5xx page, no answer at all and a server that never answers are transient failures, never a throw", async () => {
    slack.fail("chat.postMessage", { status: 503 });
    const api = new SlackWebApi(slack.baseUrl);
    const html = await api.call("chat.postMessage", TOKEN, { channel: "approvals", text: "x" }, postMessageAnswer, "json");
    expect(html.ok || html.failure).toMatchObject({ code: "http_error", kind: "transient" });

    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const deadUrl = `http://127.0.0.1:${closed.port}/api/`;
    await closed.stop(true);
    const unreachable = await new SlackWebApi(deadUrl).call("chat.postMessage", TOKEN, { channel: "approvals", text: "x" }, postMessageAnswer, "json");
    expect(unreachable.ok || unreachable.failure).toMatchObject({ code: "unreachable", kind: "transient" });

    const { promise: never, resolve: release } = Promise.withResolvers<Response>();
    const hanging = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => never });
    try {
      const slow = await new SlackWebApi(`http://127.0.0.1:${hanging.port}/api/`, 200).call("chat.postMessage", TOKEN, { channel: "approvals", text: "x" }, postMessageAnswer, "json");
      expect(slow.ok || slow.failure).toMatchObject({ code: "timeout", kind: "transient" });
    } finally {
      release(new Response(""));
      await hanging.stop(true);
    }
  });
});
