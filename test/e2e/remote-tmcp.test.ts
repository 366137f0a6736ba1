/**
 * A server of the 2026-07-28 era over Streamable HTTP (tmcp with `@tmcp/transport-http`,
 * test/fixtures/tmcp-server-fixture.ts --http) behind the compiled `shim --url`: stateless requests
 * from a modern agent, a legacy agent's session on the same dual-era server (its elicitation
 * request on the response stream), governance denials and an approval asked through the agent
 * (the legacy elicitation request, and the 2026-07-28 `input_required` round trip), and the audit
 * of each call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir, waitFor } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(30_000);

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
const POLICY = `schema: 1
governance:
  rules:
    - { id: no-delete, match: delete_note, action: deny }
    - { id: ask-confirm, match: confirm_action, action: approve, approval: quick }
approval:
  quick: { timeout: 10s }
`;

const dir = tempDir("thoughtgate-remote-tmcp-");
const policyPath = join(dir.path, "thoughtgate.yaml");
writeFileSync(policyPath, POLICY);
const servers: HttpFixture[] = [];

beforeAll(async () => {
  servers.push(await startHttpFixture(fixture("tmcp-server-fixture.ts", "--http", "--era", "modern")));
  servers.push(await startHttpFixture(fixture("tmcp-server-fixture.ts", "--http", "--era", "dual")));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  dir[Symbol.dispose]();
});

const modern = () => servers[0] as HttpFixture;
const dual = () => servers[1] as HttpFixture;
const calls = (events: string) => readEvents(events).filter((event) => String(event.type).startsWith("tool_call_"));

describe("a 2026-07-28 agent, stateless requests", () => {
  test("discover, list and call go through; a denied call never reaches the server; every call is audited", async () => {
    const events = join(dir.path, "modern-events.jsonl");
    const agent = new RawAgent(["--server-id", "notes", "--events", events, "--thoughtgate-config", policyPath, "--url", modern().url]);
    const discovered = await agent.request(1, "server/discover", { _meta: META });
    expect(discovered.result).toMatchObject({ supportedVersions: ["2026-07-28"], resultType: "complete" });
    const listed = await agent.request(2, "tools/list", { _meta: META });
    expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toEqual(["read_note", "delete_note", "confirm_action"]);

    const read = await agent.request(3, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: META });
    expect(read.result).toMatchObject({ content: [{ type: "text", text: "first note" }], resultType: "complete" });
    const denied = await agent.request(4, "tools/call", { name: "delete_note", arguments: { id: "a" }, _meta: META });
    expect(denied.error).toMatchObject({ code: -32014, data: { gate: "rules", rule_id: "no-delete" } });
    // The deny is the gate's, not the server's: the note is still there.
    const again = await agent.request(5, "tools/call", { name: "read_note", arguments: { id: "a" }, _meta: META });
    expect(again.result.content).toEqual([{ type: "text", text: "first note" }]);
    // A request the server refuses for its own reasons is its answer, passed on as it sent it.
    const legacyInit = await agent.request(6, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
    expect(legacyInit.error).toMatchObject({ code: -32601, data: { supported: ["2026-07-28"] } });

    expect(await agent.close()).toBe(0);
    expect(calls(events).map((event) => [event.type, event.tool, event.decision ?? event.status ?? null])).toEqual([
      ["tool_call_start", "read_note", null],
      ["tool_call_decision", "read_note", "forward"],
      ["tool_call_end", "read_note", "ok"],
      ["tool_call_start", "delete_note", null],
      ["tool_call_decision", "delete_note", "deny"],
      ["tool_call_end", "delete_note", "denied"],
      ["tool_call_start", "read_note", null],
      ["tool_call_decision", "read_note", "forward"],
      ["tool_call_end", "read_note", "ok"],
    ]);
    expect(readEvents(events)[0]).toMatchObject({ type: "run_start", server_command: [], server_url: modern().url });
  });
});

describe("a 2025-11-25 agent on the same dual-era server", () => {
  test("the approval is asked through the agent, then the server's own elicitation arrives on the response stream and its answer goes back", async () => {
    const events = join(dir.path, "legacy-events.jsonl");
    const transport = new StdioClientTransport({
      command: requireBinary(),
      args: ["shim", "--server-id", "notes", "--events", events, "--thoughtgate-config", policyPath, "--url", dual().url],
      stderr: "pipe",
    });
    const client = new Client({ name: "legacy-agent", version: "1" }, { capabilities: { elicitation: {} } });
    const prompts: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      prompts.push(request.params.message);
      await personReads();
      // ThoughtGate's approval form has `approve`; the server's own question has `confirm`.
      const schema = JSON.stringify("requestedSchema" in request.params ? request.params.requestedSchema : {});
      return { action: "accept", content: schema.includes('"decision"') ? { decision: "once" } : { confirm: true } };
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "confirm_action", arguments: { action: "wipe" } });
      expect(result.content).toEqual([{ type: "text", text: "confirmed: wipe" }]);
      expect(prompts).toEqual(['ThoughtGate: allow confirm_action on server notes? (rule ask-confirm: approval required)\naction: "wipe"', "Confirm: wipe?"]);
      const denied = await client.callTool({ name: "delete_note", arguments: { id: "b" } }).catch((error: { code?: number }) => error);
      expect(denied).toMatchObject({ code: -32014 });
    } finally {
      await client.close();
    }
    await waitFor(() => readEvents(events).at(-1)?.type === "run_end", "run_end");
    expect(calls(events).filter((event) => event.type === "tool_call_decision").map((event) => [event.tool, event.decision, event.approved_by ?? null])).toEqual([
      ["confirm_action", "pending", null],
      ["confirm_action", "forward", "elicitation"],
      ["delete_note", "deny", null],
    ]);
  });
});

describe("a 2026-07-28 approval over the remote upstream", () => {
  test("a destructive call is answered input_required; a declining answer never reaches the server; the approved retry reaches it once, without the shim's round-trip parts", async () => {
    const server = await startHttpFixture(fixture("tmcp-server-fixture.ts", "--http", "--era", "modern", "--log-calls"));
    const events = join(dir.path, "modern-approval-events.jsonl");
    // No policy file: delete_note says it is destructive (destructiveHint), so it is asked about by default.
    const agent = new RawAgent(["--server-id", "notes", "--events", events, "--url", server.url]);
    try {
      const asking = { ...META, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } };
      const reached = () => server.stderr().split("\n").filter((line) => line.startsWith("tools/call "));
      let id = 0;
      /** Call delete_note, expect the approval question, and retry with `answer`. */
      const askThenAnswer = async (note: string, answer: Record<string, unknown>) => {
        const call = { name: "delete_note", arguments: { id: note } };
        const asked = await agent.request(++id, "tools/call", { ...call, _meta: asking });
        expect(asked.result).toMatchObject({
          resultType: "input_required",
          inputRequests: { thoughtgate_approval: { method: "elicitation/create", params: { mode: "form", requestedSchema: { required: ["decision"] } } } },
        });
        expect(String(asked.result.inputRequests.thoughtgate_approval.params.message)).toContain(`delete_note on server notes? (rule default-destructive: approval required)\nid: "${note}"`);
        await personReads();
        return agent.request(++id, "tools/call", { ...call, _meta: asking, inputResponses: { thoughtgate_approval: answer }, requestState: asked.result.requestState });
      };

      const denied = await askThenAnswer("b", { action: "accept", content: { decision: "deny" } });
      expect(denied.error).toMatchObject({ code: -32007, data: { gate: "approval", rule_id: "default-destructive" } });
      expect(denied.error?.message).toContain("rejected by the person in the agent's prompt");
      const declined = await askThenAnswer("b", { action: "decline" });
      expect(declined.error).toMatchObject({ code: -32007, data: { gate: "approval", rule_id: "default-destructive" } });
      const approved = await askThenAnswer("a", { action: "accept", content: { decision: "once" } });
      expect(approved.result).toMatchObject({ content: [{ type: "text", text: "deleted a" }], resultType: "complete" });

      const kept = await agent.request(++id, "tools/call", { name: "read_note", arguments: { id: "b" }, _meta: META });
      expect(kept.result.content).toEqual([{ type: "text", text: "second note" }]);
      // The server logs a call before it answers it: with the last call's line in, every earlier one is.
      await waitFor(() => reached().some((line) => line.includes("read_note")), "the server's log of the last call");
      expect(reached()).toEqual(['tools/call {"name":"delete_note","arguments":{"id":"a"}}', 'tools/call {"name":"read_note","arguments":{"id":"b"}}']);

      expect(await agent.close()).toBe(0);
      expect(calls(events).filter((event) => event.type === "tool_call_end").map((event) => [event.tool, event.status])).toEqual([
        ["delete_note", "input_required"],
        ["delete_note", "denied"],
        ["delete_note", "input_required"],
        ["delete_note", "denied"],
        ["delete_note", "input_required"],
        ["delete_note", "ok"],
        ["read_note", "ok"],
      ]);
    } finally {
      if (agent.proc.exitCode === null) await agent.close();
      await server.stop();
    }
  });
});
