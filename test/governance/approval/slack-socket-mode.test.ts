import { afterEach, describe, expect, test } from "bun:test";
import { SocketModeClient } from "../../../src/governance/approval/slack/socket-mode.ts";
import { SlackWebApi, type SlackFailure } from "../../../src/governance/approval/slack/web-api.ts";
import { FakeSlack } from "../../support/fake-slack.ts";
import { waitFor } from "../../support/harness.ts";

const started: Array<{ slack: FakeSlack; client: SocketModeClient }> = [];
afterEach(async () => {
  for (const { slack, client } of started.splice(0)) {
    client.stop();
    await slack.stop();
  }
});

function connect(appToken = "xapp-fake-app-token") {
  const slack = new FakeSlack();
  const seen = { payloads: [] as unknown[], failures: [] as Array<{ failure: SlackFailure; fatal: boolean }>, hellos: 0 };
  const client = new SocketModeClient(new SlackWebApi(slack.baseUrl), appToken, {
    interactive: (payload) => seen.payloads.push(payload),
    failure: (failure, fatal) => seen.failures.push({ failure, fatal }),
    connected: () => (seen.hellos += 1),
  });
  started.push({ slack, client });
  client.start();
  return { slack, client, seen };
}

describe("Socket Mode", () => {
  test("opens a connection with the app token, waits for hello, and acknowledges every envelope with its envelope_id", async () => {
    const { slack, client, seen } = connect();
    await waitFor(() => seen.hellos === 1, "hello");
    expect(client.connected).toBe(true);
    expect(slack.callsOf("apps.connections.open")).toEqual([{ method: "apps.connections.open", contentType: "application/x-www-form-urlencoded", token: "xapp-fake-app-token", args: {} }]);
    const message = { channel: "C0APPROVALS", ts: "1.000100", text: "", blocks: [], updates: [], reactions: new Map() };
    await slack.click(message, "thoughtgate_approve", "U0APPROVER");
    expect(seen.payloads).toEqual([expect.objectContaining({ type: "block_actions", user: expect.objectContaining({ id: "U0APPROVER" }) })]);
    expect(slack.acks).toEqual(["env-1"]);
  });

  test("a disconnect from Slack opens a new single-use URL, and the old connection is closed once the new one says hello", async () => {
    const { slack, seen } = connect();
    await waitFor(() => seen.hellos === 1, "hello");
    slack.disconnect("refresh_requested");
    await waitFor(() => seen.hellos === 2 && slack.open.length === 1, "the second connection, alone");
    expect(slack.callsOf("apps.connections.open")).toHaveLength(2);
    const message = { channel: "C0APPROVALS", ts: "1.000100", text: "", blocks: [], updates: [], reactions: new Map() };
    await slack.click(message, "thoughtgate_deny", "U0APPROVER");
    expect(seen.payloads).toHaveLength(1);
    expect(seen.failures).toEqual([]);
  });

  test("a dropped connection is reported and reopened", async () => {
    const { slack, seen } = connect();
    await waitFor(() => seen.hellos === 1, "hello");
    for (const socket of slack.open) socket.close(1011, "server restart");
    await waitFor(() => seen.hellos === 2, "a new connection after the drop");
    expect(seen.failures.map((f) => [f.failure.code, f.fatal])).toEqual([["socket_closed", false]]);
  });

  test("Slack down while opening is retried with a delay; the connection comes up once it answers", async () => {
    const { slack, seen } = connect();
    await waitFor(() => seen.hellos === 1, "hello");
    slack.fail("apps.connections.open", { status: 429, retryAfter: "1" });
    slack.disconnect("warning");
    await waitFor(() => seen.hellos === 2, "the connection after the rate limit", 10_000);
    expect(seen.failures.map((f) => [f.failure.code, f.fatal])).toEqual([["ratelimited", false]]);
  });

  test("link_disabled (Socket Mode turned off) and a refused app token stop it for good", async () => {
    const off = connect();
    await waitFor(() => off.seen.hellos === 1, "hello");
    off.slack.disconnect("link_disabled");
    await waitFor(() => off.seen.failures.length === 1, "the failure");
    expect(off.seen.failures[0]).toMatchObject({ failure: { code: "link_disabled" }, fatal: true });
    await waitFor(() => off.slack.open.length === 0, "the connection closed");
    expect(off.slack.callsOf("apps.connections.open")).toHaveLength(1);

    const refused = connect("xapp-not-a-known-token");
    await waitFor(() => refused.seen.failures.length === 1, "the refusal");
    expect(refused.seen.failures[0]).toMatchObject({ failure: { code: "invalid_auth", kind: "auth" }, fatal: true });
    expect(refused.client.connected).toBe(false);
  });
});
