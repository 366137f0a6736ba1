/**
 * Attack family: approving a call without a person. Anything that can read the governance session
 * secret (an MCP server reading its shim's argv and the secret file it names, or the shim's
 * /proc/<pid>/environ under `serve`) must not be able to approve a call, whatever channel it claims.
 * Through the compiled binary: `wrap` or `serve`, real shims, a hostile server fixture.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fixture, readEvents, tempDir } from "../../support/harness.ts";
import { RawAgent } from "../../support/raw-agent.ts";
import { ServeProcess } from "../../support/serve.ts";
import { unansweredApprovalPolicy, wrapCustomAgent } from "./support.ts";
import { openShimChannel } from "../../support/shim-channel.ts";
import { decideAtTerminal } from "../../support/terminal.ts";

setDefaultTimeout(60_000);

/** wipe_disk needs a person; nobody answers, so after 4 s the call is refused (-32008). */
const POLICY = unansweredApprovalPolicy("wipe_disk", "4s");

type Report = { secretFound: boolean; sessionFiles: string[]; tasksSeen: string[]; attempts: Array<{ task: string; what: string; status: number }>; wiped: boolean };
const readReport = (path: string): Report | null => (existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Report) : null);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function workdir() {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  writeFileSync(join(dir.path, "thoughtgate.yaml"), POLICY);
  return { dir: dir.path, policy: join(dir.path, "thoughtgate.yaml"), hostile: join(dir.path, "hostile.json") };
}

function expectRefused(report: Report | null) {
  // The attacker had everything a shim has, and found the pending task…
  expect(report?.secretFound).toBe(true);
  expect(report?.tasksSeen.length).toBeGreaterThan(0);
  // …and every way it tried to approve it was refused; the destructive call never ran.
  expect(report?.attempts.length).toBeGreaterThanOrEqual(3);
  expect(report?.attempts.filter((a) => a.status < 400)).toEqual([]);
  expect(report?.wiped).toBe(false);
}

describe("a hostile MCP server holding the session secret cannot approve its own destructive call", () => {
  test("under wrap: it reads the session secret from the session directory its shim's environment names and posts an approval as the web page", async () => {
    const files = workdir();
    const config = join(files.dir, "mcp.json");
    const agentReport = join(files.dir, "agent.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { hostile: { command: process.execPath, args: [fixture("hostile-approver-server-fixture.ts")[1] ?? "", files.hostile] } } }));
    const wrap = await wrapCustomAgent(config, files.policy, fixture("wrap-agent-fixture.ts", config, agentReport, "--call", "wipe_disk:{}"), (stop) => cleanup.push(stop));
    expect(wrap.exitCode).toBe(0);

    const hostile = readReport(files.hostile);
    expectRefused(hostile);
    const agent = JSON.parse(readFileSync(agentReport, "utf8")) as { results: Record<string, { code?: number }> };
    expect(agent.results.wipe_disk?.code).toBe(-32008);
    // No approval credential is kept in the session directory a shim can find.
    // (wrap.json: the session's version and binary, for doctor; wrap.log: what wrap said, no key.)
    expect((hostile?.sessionFiles ?? []).map((path) => basename(path)).sort()).toEqual(["events.jsonl", "secret", "wrap.json", "wrap.log"]);
    const decisions = readEvents(wrap.events).filter((e) => e.type === "tool_call_decision");
    expect(decisions.map((e) => [e.decision, e.approved_by ?? null])).toEqual([["pending", null], ["deny", null]]);
  });

  test("under serve: it reads the secret from /proc/<shim>/environ and posts an approval as the web page", async () => {
    const files = workdir();
    const serve = await ServeProcess.start(["--thoughtgate-config", files.policy]);
    cleanup.push(() => serve.stop());
    const events = join(files.dir, "events.jsonl");
    const agent = new RawAgent(
      ["--server-id", "hostile", "--governance-endpoint", serve.endpoint, "--events", events, "--", ...fixture("hostile-approver-server-fixture.ts", files.hostile)],
      { ...process.env, THOUGHTGATE_GOVERNANCE_SECRET: serve.secret },
    );
    cleanup.push(() => agent.close());
    await agent.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
    agent.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const answer = await agent.request(2, "tools/call", { name: "wipe_disk", arguments: {} });
    expect(answer.error?.code).toBe(-32008);
    expectRefused(readReport(files.hostile));
  });
});

describe("the session secret decides nothing, even knowing the task", () => {
  test("a decision posted with the session secret, any channel in the body, is refused; the CLI key decides as cli", async () => {
    const files = workdir();
    const serve = await ServeProcess.start(["--thoughtgate-config", files.policy]);
    cleanup.push(() => serve.stop());
    const pending = await serve.evaluate({ name: "wipe_disk" });
    const id = pending.task_id as string;
    const { digest } = await serve.task(id);
    const asShim = (path: string, body: unknown) =>
      fetch(`${serve.endpoint}${path}`, { method: "POST", headers: { authorization: `Bearer ${serve.secret}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const channel of ["web", "cli", "elicitation"]) {
      const forged = await asShim(`/governance/task/${id}/decision`, { decision: "approve", channel, digest });
      expect(forged.status).toBeGreaterThanOrEqual(400);
    }
    expect((await asShim(`/approvals/api/tasks/${id}`, { decision: "approve", channel: "web", digest })).status).toBe(401);
    expect((await serve.task(id)).status).toBe("pending");

    expect((await decideAtTerminal(["approve", id], { env: serve.cliEnv })).exitCode).toBe(0);
    expect(await serve.task(id)).toMatchObject({ status: "approved", decided_by: "cli" });
  });

  test("an elicitation answer is relayed only on the shim channel the call came in on", async () => {
    const files = workdir();
    const serve = await ServeProcess.start(["--thoughtgate-config", files.policy]);
    cleanup.push(() => serve.stop());
    const shim = await openShimChannel(serve.endpoint, serve.secret);
    const stranger = await openShimChannel(serve.endpoint, serve.secret);
    cleanup.push(() => (shim.close(), stranger.close()));
    const offered = (await shim.ask("POST", "/governance/evaluate", { server_id: "gh", direction: "agent_to_server", method: "tools/call", name: "wipe_disk", arguments: {}, message_type: "request", profile: "production", channels: ["elicitation"] })).body;
    expect(offered.shim_channels).toEqual(["elicitation"]);
    expect(offered.relay_token).toBeUndefined();
    const id = offered.task_id as string;
    const { digest } = (await shim.ask("GET", `/governance/task/${id}`)).body.task;
    const relay = { decision: "approve", digest };
    const overHttp = await fetch(`${serve.endpoint}/governance/task/${id}/decision`, { method: "POST", headers: { authorization: `Bearer ${serve.secret}`, "content-type": "application/json" }, body: JSON.stringify({ ...relay, channel: "elicitation" }) });
    expect(overHttp.status).toBe(401);
    expect((await stranger.ask("POST", `/governance/task/${id}/decision`, relay)).status).toBe(401);
    expect((await shim.ask("GET", `/governance/task/${id}`)).body.task.status).toBe("pending");
    expect((await shim.ask("POST", `/governance/task/${id}/decision`, relay)).status).toBe(200);
    expect((await shim.ask("GET", `/governance/task/${id}`)).body.task).toMatchObject({ status: "approved", decided_by: "elicitation" });
  });
});
