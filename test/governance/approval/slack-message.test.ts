import { describe, expect, test } from "bun:test";
import { clip, finishedMessage, parseButtonValue, pendingMessage } from "../../../src/governance/approval/slack/message.ts";
import { verdictOf } from "../../../src/governance/approval/slack/reactions.ts";
import { callDigest, type Task } from "../../../src/governance/approval/tasks.ts";
import { blocksText, findButton } from "../../support/fake-slack.ts";

function task(overrides: Partial<Task> = {}): Task {
  const base = { serverId: "github", method: "tools/call", name: "delete_repo", arguments: { repo: "acme/site", token: "ghp_0123456789abcdef" } };
  const merged = { ...base, ...overrides };
  return {
    id: "0123456789ab",
    status: "pending",
    ruleId: "destructive",
    workflowName: "oncall",
    workflow: { destination: { type: "any" }, timeout: 300_000, on_timeout: "deny" },
    reason: "rule destructive: approval required",
    digest: callDigest(merged.serverId, merged.method, merged.name, merged.arguments),
    createdAt: Date.parse("2026-01-01T10:00:00Z"),
    expiresAt: Date.parse("2026-01-01T10:05:00Z"),
    ...merged,
  };
}

const context = { approvers: ["U0LEAD", "W0SEC"], origin: "claude under thoughtgate wrap on ada@laptop", decideBy: "buttons" as const };

describe("the Slack message", () => {
  test("says server, tool, arguments (credentials redacted), rule, who asked and the expiry, with Approve/Deny buttons bound to the digest", () => {
    const t = task();
    const message = pendingMessage(t, context);
    const text = blocksText(message.blocks);
    for (const part of ["Approval needed: github.delete_repo", "acme/site", "destructive", "oncall", "claude under thoughtgate wrap on ada@laptop", "<!date^1767261900^", "<@U0LEAD>, <@W0SEC>", "thoughtgate approve 0123456789ab"]) {
      expect(text).toContain(part);
    }
    expect(JSON.stringify(message)).not.toContain("ghp_0123456789abcdef");
    expect(parseButtonValue(findButton(message.blocks, "thoughtgate_approve"))).toEqual({ taskId: t.id, digest: t.digest });
    expect(parseButtonValue(findButton(message.blocks, "thoughtgate_deny"))).toEqual({ taskId: t.id, digest: t.digest });
  });

  test("buttons for every choice the form offers (always only where a rule could be written), and a reason box whose text comes with the click", () => {
    const labels = (blocks: unknown[]) => JSON.stringify(blocks).match(/"action_id":"thoughtgate_[a-z_]+"/g);
    expect(labels(pendingMessage(task({ alwaysPossible: true }), context).blocks)).toEqual([
      '"action_id":"thoughtgate_approve"',
      '"action_id":"thoughtgate_approve_session"',
      '"action_id":"thoughtgate_approve_always_project"',
      '"action_id":"thoughtgate_approve_always_everywhere"',
      '"action_id":"thoughtgate_deny"',
    ]);
    const plain = pendingMessage(task(), context);
    expect(labels(plain.blocks)).toEqual(['"action_id":"thoughtgate_approve"', '"action_id":"thoughtgate_approve_session"', '"action_id":"thoughtgate_deny"']);
    expect(blocksText(plain.blocks)).toContain("Allow this tool for this session");
    expect(plain.blocks).toContainEqual(expect.objectContaining({ type: "input", block_id: "thoughtgate_reason", optional: true, element: expect.objectContaining({ type: "plain_text_input", action_id: "reason" }) }));
  });

  test("an edit's change is a block of its own, the same diff the page shows", () => {
    const message = pendingMessage(task({ change: { path: "/p/a.md", diff: "--- /p/a.md\n+++ /p/a.md\n@@ edit 1 of 1 @@\n-old\n+new", covers: [] } }), context);
    expect(blocksText(message.blocks)).toContain("Change to /p/a.md:\n--- /p/a.md\n+++ /p/a.md\n@@ edit 1 of 1 @@\n-old\n+new");
  });

  test("what the agent or server wrote is plain_text: a tool name cannot mention @channel, link or hide characters", () => {
    const hostile = task({ name: "<!channel> <https://evil.example|click me> x\u202eyz", arguments: { note: "<@U0LEAD> approved already" } });
    const message = pendingMessage(hostile, { ...context, decideBy: "reactions" });
    const mrkdwn = JSON.stringify(message.blocks.filter((block) => JSON.stringify(block).includes('"mrkdwn"')));
    expect(mrkdwn).not.toContain("<!channel>");
    expect(mrkdwn).not.toContain("evil.example");
    expect(message.text).toContain("&lt;!channel&gt;");
    expect(blocksText(message.blocks)).toContain("x\\u202eyz");
    expect(findButton(message.blocks, "thoughtgate_approve")).toBe("");
    expect(blocksText(message.blocks)).toContain("React with :+1: to approve or :-1: to deny");
  });

  test("the finished message says the outcome and who decided, without buttons", () => {
    const approved = finishedMessage(task({ status: "approved", decidedBy: "slack" }), "serve", "U0LEAD");
    expect(blocksText(approved.blocks)).toContain(":white_check_mark: Approved by <@U0LEAD> in Slack.");
    expect(findButton(approved.blocks, "thoughtgate_approve")).toBe("");
    const denied = finishedMessage(task({ status: "denied", decidedBy: "cli", personReason: "not on a Friday <!here>" }), "serve", undefined);
    expect(blocksText(denied.blocks)).toContain("Denied on the command line");
    expect(JSON.stringify(denied.blocks)).toContain('{"type":"plain_text","text":"Reason: not on a Friday <!here>","emoji":false}');
    const expired = finishedMessage(task({ status: "timed_out", decidedBy: "timeout", timeoutOutcome: "deny" }), "serve", undefined);
    expect(blocksText(expired.blocks)).toContain("No decision within 5m: the call was denied (on_timeout: deny).");
  });

  test("long text keeps both ends and says how much was left out", () => {
    const text = `${"a".repeat(100)}TAIL`;
    const clipped = clip(text, 60);
    expect(clipped.length).toBeLessThanOrEqual(60);
    expect(clipped).toEndWith("TAIL");
    expect(clipped).toContain("characters not shown");
    expect(pendingMessage(task({ arguments: { big: "x".repeat(50_000) } }), context).blocks.every((b) => JSON.stringify(b).length < 6_000)).toBe(true);
  });
});

describe("reactions", () => {
  const approvers = new Set(["U0LEAD", "U0SEC"]);
  test("an approver's 👍 approves, any approver's 👎 denies (disagreement fails closed), others count for nothing", () => {
    expect(verdictOf([{ name: "+1", users: ["U0STRANGER"] }], approvers)).toBeNull();
    expect(verdictOf([{ name: "+1::skin-tone-4", users: ["U0STRANGER", "U0LEAD"] }], approvers)).toEqual({ decision: "approve", user: "U0LEAD" });
    expect(verdictOf([{ name: "+1", users: ["U0LEAD"] }, { name: "-1", users: ["U0SEC"] }], approvers)).toEqual({ decision: "deny", user: "U0SEC" });
    expect(verdictOf([{ name: "thumbsdown", users: ["U0STRANGER"] }, { name: "thumbsup", users: ["U0SEC"] }], approvers)).toEqual({ decision: "approve", user: "U0SEC" });
    expect(verdictOf([{ name: "heart", users: ["U0LEAD"] }], approvers)).toBeNull();
  });
});
