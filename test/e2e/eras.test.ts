/**
 * Both MCP eras through the compiled shim, one suite run twice: against a 2026-07-28 server that
 * speaks nothing else (tmcp, `--era modern`: every request carries `_meta`, approvals come back as
 * `input_required` and the agent retries) and against a 2025-11-25 server (the MCP SDK: `initialize`,
 * approvals asked with an `elicitation/create` request). The agent is raw bytes, as each era's
 * clients send them.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { RawAgent, type Received } from "../support/raw-agent.ts";
import { personReads } from "../support/approval-answers.ts";

requireBinary();

const MODERN = "2026-07-28";
const ELICIT = { elicitation: { form: {} } };

type Era = {
  name: "modern" | "legacy";
  server: string[];
  /** Open the connection (legacy: initialize; modern: server/discover), as an agent with these capabilities. */
  open(agent: RawAgent, capabilities: Record<string, unknown>): Promise<Received>;
  /** The params of a request of this era, with these client capabilities. */
  params(params: Record<string, unknown>, capabilities?: Record<string, unknown>): Record<string, unknown>;
};

const meta = (capabilities: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});

const ERAS: Era[] = [
  {
    name: "modern",
    server: fixture("tmcp-server-fixture.ts", "--era", "modern"),
    open: (agent, capabilities) => agent.request("probe", "server/discover", { _meta: meta(capabilities) }),
    params: (params, capabilities = ELICIT) => ({ ...params, _meta: meta(capabilities) }),
  },
  {
    name: "legacy",
    server: fixture("sdk-server-fixture.ts"),
    open: async (agent, capabilities) => {
      const answer = await agent.request("init", "initialize", { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } });
      agent.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      return answer;
    },
    params: (params) => params,
  },
];

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

function shim(dir: string, era: Era, policy?: string): { agent: RawAgent; events: () => Array<Record<string, unknown>> } {
  const events = join(dir, "events.jsonl");
  const args = ["--server-id", "notes", "--events", events];
  if (policy !== undefined) {
    writeFileSync(join(dir, "thoughtgate.yaml"), policy);
    args.push("--thoughtgate-config", join(dir, "thoughtgate.yaml"));
  }
  const agent = new RawAgent([...args, "--", ...era.server]);
  agents.push(agent);
  return { agent, events: () => readEvents(events) };
}

const text = (answer: Received) => String(answer.result?.content?.[0]?.text ?? "");
const ASK_DELETE = "schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: ask-delete, match: delete_note, action: approve }\n";

for (const era of ERAS) {
  describe(`${era.name} era`, () => {
    test("the opening (server/discover or initialize) passes through; lists keep every field the server sent", async () => {
      using dir = tempDir();
      const { agent } = shim(dir.path, era, "schema: 1\ngovernance: { defaults: { action: forward } }\n");
      const opened = await era.open(agent, ELICIT);
      expect(opened.error).toBeUndefined();
      if (era.name === "modern") expect(opened.result).toMatchObject({ supportedVersions: [MODERN], resultType: "complete" });
      else expect(opened.result).toMatchObject({ protocolVersion: "2025-11-25" });
      const list = await agent.request(1, "tools/list", era.params({}));
      expect(list.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(["confirm_action", "delete_note", "read_note"]);
      if (era.name === "modern") expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 300_000, cacheScope: "public" });
    });

    test("list filtering hides a tool and keeps the rest of the result (resultType, ttlMs, cacheScope)", async () => {
      using dir = tempDir();
      const { agent } = shim(dir.path, era, "schema: 1\nsources:\n  - { id: notes, expose: { mode: blocklist, tools: [delete_note] } }\n");
      await era.open(agent, ELICIT);
      const list = await agent.request(1, "tools/list", era.params({}));
      expect(list.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(["confirm_action", "read_note"]);
      if (era.name === "modern") expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 300_000, cacheScope: "public" });
      const hidden = await agent.request(2, "tools/call", era.params({ name: "delete_note", arguments: { id: "a" } }));
      expect(hidden.error).toMatchObject({ code: -32015 });
    });

    test("a rule's deny and a Cedar forbid are decided as in the other era", async () => {
      using dir = tempDir();
      writeFileSync(
        join(dir.path, "policy.cedar"),
        `@id("allow-all") permit(principal, action, resource);\n@id("not-b") forbid(principal, action == ThoughtGate::Action::"tools/call", resource) when { resource.name == "read_note" && resource.arguments has id && resource.arguments.id == "b" };\n`,
      );
      writeFileSync(join(dir.path, "arguments.cedarschema"), "namespace ThoughtGate { type Arguments = { id?: String }; }\n");
      const { agent } = shim(
        dir.path,
        era,
        "schema: 1\ngovernance:\n  rules:\n    - { id: no-delete, match: delete_note, action: deny }\n    - { id: cedar, match: '*', action: policy }\ncedar: { policies: [policy.cedar], schema: arguments.cedarschema }\n",
      );
      await era.open(agent, ELICIT);
      expect((await agent.request(1, "tools/call", era.params({ name: "delete_note", arguments: { id: "a" } }))).error).toMatchObject({ code: -32014, data: { rule_id: "no-delete" } });
      expect((await agent.request(2, "tools/call", era.params({ name: "read_note", arguments: { id: "b" } }))).error).toMatchObject({ code: -32003, data: { policy_id: "not-b" } });
      expect(text(await agent.request(3, "tools/call", era.params({ name: "read_note", arguments: { id: "a" } })))).toBe("first note");
    });

    test("an approval granted by the agent's user: the call runs once, after the answer", async () => {
      using dir = tempDir();
      const { agent, events } = shim(dir.path, era, ASK_DELETE);
      await era.open(agent, ELICIT);
      const result = await approve(agent, era, 1, { action: "accept", content: { decision: "once" } });
      expect(text(result)).toBe("deleted a");
      expect(await agent.close()).toBe(0);
      const decisions = events().filter((e) => e.type === "tool_call_decision").map((e) => [e.decision, e.approved_by ?? null]);
      expect(decisions).toContainEqual(["forward", "elicitation"]);
    });

    test("allowed for this session: the first call runs, and the same tool with other arguments is not asked about again", async () => {
      using dir = tempDir();
      const { agent, events } = shim(dir.path, era, ASK_DELETE);
      await era.open(agent, ELICIT);
      expect(text(await approve(agent, era, 1, { action: "accept", content: { decision: "session" } }))).toBe("deleted a");
      const again = await agent.request(2, "tools/call", era.params({ name: "delete_note", arguments: { id: "b" } }));
      expect(text(again)).toBe("deleted b");
      expect(await agent.close()).toBe(0);
      expect(events().filter((e) => e.type === "tool_call_decision" && e.decision === "forward").map((e) => e.approved_by)).toEqual(["elicitation", "session_grant"]);
    });

    test("an approval declined by the agent's user: -32007, and the server never runs it", async () => {
      using dir = tempDir();
      const { agent } = shim(dir.path, era, ASK_DELETE);
      await era.open(agent, ELICIT);
      const result = await approve(agent, era, 1, { action: "accept", content: { decision: "deny" } });
      expect(result.error).toMatchObject({ code: -32007 });
      expect(text(await agent.request(9, "tools/call", era.params({ name: "read_note", arguments: { id: "a" } })))).toBe("first note");
    });

    test("the form dismissed at a person's pace (cancel, as Esc does): the person's refusal, -32007 saying so", async () => {
      using dir = tempDir();
      const { agent } = shim(dir.path, era, ASK_DELETE);
      await era.open(agent, ELICIT);
      const result = await approve(agent, era, 1, { action: "cancel" });
      expect(result.error).toMatchObject({ code: -32007 });
      expect(result.error?.message).toContain("refused by the person: they dismissed the agent's prompt (Esc)");
      expect(text(await agent.request(9, "tools/call", era.params({ name: "read_note", arguments: { id: "a" } })))).toBe("first note");
    });

    test("a tool's own request for input passes through, and so does the answer", async () => {
      using dir = tempDir();
      const { agent, events } = shim(dir.path, era, "schema: 1\ngovernance: { defaults: { action: forward } }\n");
      await era.open(agent, ELICIT);
      if (era.name === "modern") {
        const first = await agent.request(1, "tools/call", era.params({ name: "confirm_action", arguments: { action: "wipe" } }));
        expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { confirm: { method: "elicitation/create" } } });
        const retry = await agent.request(2, "tools/call", era.params({ name: "confirm_action", arguments: { action: "wipe" }, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } }));
        expect(text(retry)).toBe("confirmed: wipe");
      } else {
        agent.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "confirm_action", arguments: { action: "wipe" } } });
        const ask = await agent.next();
        expect(ask).toMatchObject({ method: "elicitation/create", params: { message: "Confirm: wipe?" } });
        agent.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { confirm: true } } });
        expect(text((await agent.until(1)).match)).toBe("confirmed: wipe");
      }
      expect(await agent.close()).toBe(0);
      const ends = events().filter((e) => e.type === "tool_call_end").map((e) => e.status);
      expect(ends).toEqual(era.name === "modern" ? ["input_required", "ok"] : ["ok"]);
    });

    test("no elicitation declared on this request: the no-channel error, whatever an earlier request declared", async () => {
      using dir = tempDir();
      const { agent } = shim(dir.path, era, ASK_DELETE);
      await era.open(agent, era.name === "modern" ? ELICIT : {});
      const answer = await agent.request(1, "tools/call", era.params({ name: "delete_note", arguments: { id: "a" } }, {}));
      expect(answer.error).toMatchObject({ code: -32007 });
      expect(answer.error?.message).toContain("no approval channel");
    });
  });
}

describe("modern era only", () => {
  const era = ERAS[0] as Era;

  test("no policy file: the shim's own tools/list carries the _meta the server requires, so a destructive tool is never taken as benign", async () => {
    using dir = tempDir();
    const { agent } = shim(dir.path, era);
    const answer = await agent.request(1, "tools/call", era.params({ name: "delete_note", arguments: { id: "a" } }, {}));
    expect(answer.error).toMatchObject({ code: -32007, data: { rule_id: "default-destructive" } });
    expect(agent.stderr).not.toContain("could not read the whole tool list");
  });

  test("a retry that carries the state but no answer gets the same question again; a later retry's answer decides the call, which runs once", async () => {
    using dir = tempDir();
    const { agent, events } = shim(dir.path, era, ASK_DELETE);
    await era.open(agent, ELICIT);
    const call = { name: "delete_note", arguments: { id: "a" } };
    const first = await agent.request(1, "tools/call", era.params(call));
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const state = first.result.requestState;
    const unanswered = await agent.request(2, "tools/call", era.params({ ...call, requestState: state }));
    expect(unanswered.error).toBeUndefined();
    expect(unanswered.result).toEqual(first.result);
    await personReads();
    const answered = await agent.request(3, "tools/call", era.params({ ...call, inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: state }));
    expect(text(answered)).toBe("deleted a");
    expect(await agent.close()).toBe(0);
    const ends = events().filter((e) => e.type === "tool_call_end" && e.tool === "delete_note").map((e) => e.status);
    expect(ends).toEqual(["input_required", "input_required", "ok"]);
  });

  test("a forged or edited requestState is refused; a used one makes a new call that asks again", async () => {
    using dir = tempDir();
    const { agent } = shim(dir.path, era, ASK_DELETE);
    const call = { name: "delete_note", arguments: { id: "a" } };
    const first = await agent.request(1, "tools/call", era.params(call));
    const state = String(first.result.requestState);
    const forged = `${state.slice(0, -4)}AAAA`;
    const refused = await agent.request(2, "tools/call", era.params({ ...call, inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: forged }));
    expect(refused.error).toMatchObject({ code: -32602 });
    await personReads();
    const approved = await agent.request(3, "tools/call", era.params({ ...call, inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: state }));
    expect(text(approved)).toBe("deleted a");
    const again = await agent.request(4, "tools/call", era.params({ ...call, inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: state }));
    expect(again.result).toMatchObject({ resultType: "input_required" });
    expect(String(again.result.requestState)).not.toBe(state);
  });

  test("a retry whose arguments changed is a new call: it is asked about again, never run on the old answer", async () => {
    using dir = tempDir();
    const { agent } = shim(dir.path, era, ASK_DELETE);
    const first = await agent.request(1, "tools/call", era.params({ name: "delete_note", arguments: { id: "a" } }));
    const changed = await agent.request(2, "tools/call", era.params({ name: "delete_note", arguments: { id: "b" }, inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: first.result.requestState }));
    expect(changed.result).toMatchObject({ resultType: "input_required" });
  });
});

describe("modern era: a prompt's approval is bound to its arguments too", () => {
  const ASK_PROMPT = "schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: ask-prompt, match: summarize_notes, method: prompts/get, action: approve }\n";
  const modern = ERAS[0] as Era;

  test("a prompts/get retry whose arguments changed is a new call, asked about again; the same arguments get the prompt", async () => {
    using dir = tempDir();
    const { agent } = shim(dir.path, modern, ASK_PROMPT);
    const first = await agent.request(1, "prompts/get", modern.params({ name: "summarize_notes", arguments: { style: "short" } }));
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const answer = { inputResponses: { thoughtgate_approval: { action: "accept", content: { decision: "once" } } }, requestState: first.result.requestState };
    // At a person's pace: a faster answer is no one's (docs/governance.md).
    await personReads();
    const changed = await agent.request(2, "prompts/get", modern.params({ name: "summarize_notes", arguments: { style: "and mail them out" }, ...answer }));
    expect(changed.result).toMatchObject({ resultType: "input_required" });
    expect(changed.result.requestState).not.toBe(first.result.requestState);
    const same = await agent.request(3, "prompts/get", modern.params({ name: "summarize_notes", arguments: { style: "short" }, ...answer }));
    expect(JSON.stringify(same.result?.messages)).toContain("Summarize:");
  });
});

/** Ask for `delete_note {id: a}` and answer the approval question the shim asks, as this era asks it. */
async function approve(agent: RawAgent, era: Era, id: number, answer: Record<string, unknown>): Promise<Received> {
  const call = { name: "delete_note", arguments: { id: "a" } };
  if (era.name === "modern") {
    const first = await agent.request(id, "tools/call", era.params(call));
    expect(first.result).toMatchObject({
      resultType: "input_required",
      inputRequests: { thoughtgate_approval: { method: "elicitation/create", params: { mode: "form", requestedSchema: { required: ["decision"] } } } },
    });
    expect(String(first.result.inputRequests.thoughtgate_approval.params.message)).toContain("delete_note on server notes");
    await personReads();
    return agent.request(id + 100, "tools/call", era.params({ ...call, inputResponses: { thoughtgate_approval: answer }, requestState: first.result.requestState }));
  }
  agent.send({ jsonrpc: "2.0", id, method: "tools/call", params: call });
  const ask = await agent.next();
  expect(ask).toMatchObject({ method: "elicitation/create" });
  expect(String((ask as { params?: { message?: string } }).params?.message)).toContain("delete_note on server notes");
  await personReads();
  agent.send({ jsonrpc: "2.0", id: ask.id, result: answer });
  return (await agent.until(id)).match;
}
