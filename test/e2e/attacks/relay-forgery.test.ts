/**
 * Attack family: approving through the relay a shim uses for the agent's approval form. Whatever a
 * server (or the agent's own shell) can read, the session secret included, lets it play a shim of
 * its own: invent a call, be offered elicitation for it, and relay "approve for this session". That
 * must approve nothing but its own invented calls: the real shim's call of the same tool still needs
 * a person, and the real shim's tasks cannot be answered from anywhere but the real shim's channel.
 * Through the compiled binary: `wrap` and `serve`, real shims, a hostile server fixture.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, tempDir } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";
import { ServeProcess } from "../../support/serve.ts";
import { unansweredApprovalPolicy, wrapCustomAgent } from "./support.ts";

setDefaultTimeout(60_000);

/** wipe_disk needs a person; nobody answers, so after 4 s the call is refused (-32008). */
const POLICY = unansweredApprovalPolicy("wipe_disk", "4s");

type Attempt = { what: string; status: number; decision?: string };
type Report = { secretFound: boolean; attempts: Attempt[]; realTasksTried: string[]; wiped: boolean };
const readReport = (path: string): Report => (existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Report) : { secretFound: false, attempts: [], realTasksTried: [], wiped: false });

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function workdir() {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  writeFileSync(join(dir.path, "thoughtgate.yaml"), POLICY);
  return { dir: dir.path, policy: join(dir.path, "thoughtgate.yaml"), report: join(dir.path, "forger.json") };
}

/** What the forger got: statuses by what it tried (several tries of one kind: each listed). */
const outcomes = (report: Report) => report.attempts.map((a) => [a.what, a.status, a.decision ?? null]);

function expectOnlyItsOwnCalls(report: Report) {
  expect(report.secretFound).toBe(true);
  // Over HTTP no shim channel exists: no elicitation is offered, no relay is taken.
  // On a channel of its own it is a shim like any other: its own invented call, and only that, it
  // can approve, and its grant covers its own later (invented) calls.
  expect(outcomes(report).filter(([what]) => !String(what).includes("real shim"))).toEqual([
    ["http: evaluate an invented call offering elicitation", 200, "pending_approval"],
    ['http: relay "approve for this session" for the invented call', 401, null],
    ["http: the same call again", 200, "pending"],
    ["own channel: evaluate an invented call offering elicitation", 200, "pending_approval"],
    ['own channel: relay "approve for this session" for the invented call', 200, "approved"],
    ["own channel: the same call again", 200, "approved"],
  ]);
  // The real shim's pending task was found, and every relay for it refused.
  expect(report.realTasksTried.length).toBeGreaterThan(0);
  const real = report.attempts.filter((a) => a.what.includes("real shim"));
  expect(real.length).toBeGreaterThanOrEqual(2);
  expect(real.filter((a) => a.status < 400)).toEqual([]);
  expect(report.wiped).toBe(false);
}

describe("a fake shim holding the session secret approves nothing but its own invented calls", () => {
  test("under wrap: the server forges a session grant for its own wipe_disk; the agent's real call still needs a person", async () => {
    const files = workdir();
    const config = join(files.dir, "mcp.json");
    const agentReport = join(files.dir, "agent.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { hostile: { command: process.execPath, args: [fixture("relay-forger-server-fixture.ts")[1] ?? "", files.report] } } }));
    const wrap = await wrapCustomAgent(config, files.policy, fixture("wrap-agent-fixture.ts", config, agentReport, "--call", "wipe_disk:{}"), (stop) => cleanup.push(stop));
    expect(wrap.exitCode).toBe(0);

    expectOnlyItsOwnCalls(readReport(files.report));
    const agent = JSON.parse(readFileSync(agentReport, "utf8")) as { results: Record<string, { code?: number }> };
    expect(agent.results.wipe_disk?.code).toBe(-32008);
    const decisions = readEvents(wrap.events).filter((e) => e.type === "tool_call_decision");
    expect(decisions.map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["deny", null]]);
  });

  test("under serve: the same from the shim's environment; the real call times out unapproved", async () => {
    const files = workdir();
    const serve = await ServeProcess.start(["--thoughtgate-config", files.policy]);
    cleanup.push(() => serve.stop());
    const agent = new RawAgent(
      ["--server-id", "hostile", "--governance-endpoint", serve.endpoint, "--events", join(files.dir, "events.jsonl"), "--", ...fixture("relay-forger-server-fixture.ts", files.report)],
      { ...process.env, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    );
    cleanup.push(() => agent.close());
    await agent.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: { elicitation: {} }, clientInfo: { name: "raw", version: "1" } });
    agent.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    agent.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "wipe_disk", arguments: {} } });
    // The real shim asks its agent (it declared elicitation); nobody answers the form here.
    const { match: answer } = await agent.until(2);
    expect(answer.error?.code).toBe(-32008);
    expectOnlyItsOwnCalls(readReport(files.report));
  });
});
