/**
 * Attack family: an agent approving its own call with the CLI. The agent runs commands as the user,
 * so it can run `thoughtgate approve`, read the CLI key from the service descriptor (0600, but the
 * user's) and post with it. `approve` and `deny` are a person's tools: they confirm on the
 * controlling terminal, which an agent's shell tool does not have, and the service refuses a
 * decision (or the approvals link) from any process the governed agent runs, whatever it claims and
 * whichever key it holds. Through the compiled binary: `wrap`, a fake injected agent, a real server.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, fixture, readEvents, tempDir } from "../../support/harness.ts";
import { unansweredApprovalPolicy, wrapCustomAgent } from "./support.ts";

setDefaultTimeout(60_000);

/** delete_note needs a person; nobody answers, so after 6 s the call is refused (-32008). */
const POLICY = unansweredApprovalPolicy("delete_note", "6s");

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

test("under wrap, the agent's `thoughtgate approve` (with or without a terminal of its own), its direct POST with the CLI key and its request for the page link are all refused", async () => {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  writeFileSync(join(dir.path, "thoughtgate.yaml"), POLICY);
  const config = join(dir.path, "mcp.json");
  const report = join(dir.path, "agent.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [fixture("sdk-server-fixture.ts")[1] ?? ""] } } }));
  const wrap = await wrapCustomAgent(config, join(dir.path, "thoughtgate.yaml"), fixture("self-approving-agent-fixture.ts", config, report, BINARY), (stop) => cleanup.push(stop));
  expect(wrap.exitCode).toBe(0);

  const { attempts, result } = JSON.parse(readFileSync(report, "utf8")) as { attempts: Array<{ what: string; status: number; said: string }>; result: { code?: number } };
  expect(attempts.map((a) => [a.what, a.status])).toEqual([
    ["thoughtgate tasks in the agent's shell", 1],
    ["the task list with the CLI key", 403],
    ["the task with the CLI key", 403],
    ["thoughtgate approve in the agent's shell", 1],
    ["thoughtgate approve on a terminal of its own, confirming itself", 1],
    ["the CLI key posted directly", 403],
    ["the page link with the CLI key", 403],
  ]);
  // Each refusal is one line that says why and where a person decides instead; what waits (digests, arguments) is not shown.
  expect(attempts[0]?.said).toMatch(/^\[error\] the task list needs a person at a terminal, and this command has none \(an agent's shell tool has none\): approve on the approvals page/);
  expect(attempts[1]?.said).toContain("refused the task list: it came from a process the governed agent runs");
  expect(attempts[2]?.said).toContain("refused a decision: it came from a process the governed agent runs");
  expect(attempts.slice(0, 3).map((a) => a.said).join("\n")).not.toContain('"digest"');
  expect(attempts[3]?.said).toMatch(/^\[error\] a decision needs a person at a terminal, and this command has none \(an agent's shell tool has none\): approve on the approvals page/);
  expect(attempts[4]?.said).toContain("refused a decision: it came from a process the governed agent runs (only a person decides)");
  expect(attempts[5]?.said).toContain("it came from a process the governed agent runs");
  expect(attempts[6]?.said).toContain("refused the approvals link: it came from a process the governed agent runs");
  // The call was never approved: it waited for a person and timed out.
  expect(result.code).toBe(-32008);
  expect(readEvents(wrap.events).filter((e) => e.type === "tool_call_decision").map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["deny", null]]);
});
