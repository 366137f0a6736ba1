/**
 * A 2025-11-25 client through the compiled shim to a server of the 2026-07-28 era. tmcp as it is
 * (`--era dual`, the fixture's default) also serves `initialize`: the real MCP SDK client (1.32.2,
 * legacy only) opens a session, and the shim governs its calls as any legacy agent's, with the
 * embedded default policy a first run gets (read-only forwarded, destructive asked through the
 * agent). A server of the new era alone (`--era modern`) is not made to speak the old one: the
 * shim translates nothing between the eras (docs/governance.md, "Both MCP eras").
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ElicitRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { callTool, connect, type Connection } from "../support/mcp-sdk.ts";
import { RawAgent } from "../support/raw-agent.ts";
import { personReads } from "../support/approval-answers.ts";

setDefaultTimeout(30_000);
requireBinary();

const DUAL = fixture("tmcp-server-fixture.ts");

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const each of open.splice(0)) await each.close();
});

/** The SDK client through the shim to tmcp; it answers the shim's approval form with `decision`, and a tool's own form with `confirm`. */
async function oldClient(dir: string, decision: "once" | "deny"): Promise<{ shim: Connection; forms: string[] }> {
  const forms: string[] = [];
  const shim = await connect({
    route: "shim",
    server: DUAL,
    serverId: "notes",
    dir,
    capabilities: { elicitation: {} },
    setup: (client) =>
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        const properties = (request.params as { requestedSchema?: { properties?: Record<string, unknown> } }).requestedSchema?.properties ?? {};
        forms.push(String(request.params.message));
        await personReads();
        return "decision" in properties ? { action: "accept", content: { decision } } : { action: "accept", content: { confirm: true } };
      }),
  });
  open.push(shim.client);
  return { shim, forms };
}

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("the call was not refused");
}

describe("the MCP SDK client (2025-11-25) through the shim to tmcp (serves both eras)", () => {
  test("initialize opens a legacy session; the read-only call is forwarded; the destructive one is asked about with elicitation/create and, denied, never runs", async () => {
    using dir = tempDir();
    const { shim, forms } = await oldClient(dir.path, "deny");
    // The initialize result came through whole: the server's own name and instructions.
    expect(shim.client.getServerVersion()).toMatchObject({ name: "tmcp-server-fixture" });
    expect(shim.client.getInstructions()).toBe("Notes by id. confirm_action asks the user before it answers.");
    expect((await shim.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["confirm_action", "delete_note", "read_note"]);
    expect(textOf(await callTool(shim, { name: "read_note", arguments: { id: "a" } }))).toBe("first note");

    const refused = await rejection(callTool(shim, { name: "delete_note", arguments: { id: "a" } }));
    expect(refused.code).toBe(-32007);
    expect(refused.data).toMatchObject({ gate: "approval", rule_id: "default-destructive", tool: "delete_note", server_id: "notes" });
    expect(forms).toEqual(['ThoughtGate: allow delete_note on server notes? (rule default-destructive: approval required)\nid: "a"']);
    expect(textOf(await callTool(shim, { name: "read_note", arguments: { id: "a" } }))).toBe("first note");

    await shim.client.close();
    const decided = readEvents(shim.eventsPath ?? "").filter((e) => e.type === "tool_call_decision" && e.decision !== "pending");
    expect(decided.map((e) => [e.tool, e.decision, e.rule_id])).toEqual([
      ["read_note", "forward", "default-read-only"],
      ["delete_note", "deny", "default-destructive"],
      ["read_note", "forward", "default-read-only"],
    ]);
  });

  test("approved through the agent, the destructive call runs once; a tool's own elicitation/create request passes to the agent and its answer back", async () => {
    using dir = tempDir();
    const { shim, forms } = await oldClient(dir.path, "once");
    expect(textOf(await callTool(shim, { name: "delete_note", arguments: { id: "b" } }))).toBe("deleted b");
    expect(textOf(await callTool(shim, { name: "read_note", arguments: { id: "b" } }))).toBe("no note b");
    // confirm_action has no annotations: "possibly destructive" by MCP's defaults, so the shim asks first.
    expect(textOf(await callTool(shim, { name: "confirm_action", arguments: { action: "wipe" } }))).toBe("confirmed: wipe");
    expect(forms).toEqual([
      'ThoughtGate: allow delete_note on server notes? (rule default-destructive: approval required)\nid: "b"',
      "ThoughtGate: allow confirm_action on server notes? (rule default-destructive: approval required; the tool declares no annotations, so MCP's defaults apply: not read-only, destructive)\naction: \"wipe\"",
      "Confirm: wipe?",
    ]);
  });
});

describe("an old-era agent and a server of the 2026-07-28 era alone (tmcp --era modern)", () => {
  test("nothing is translated: initialize gets the server's own refusal unchanged, and the gates still refuse what they deny", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: no-delete, match: delete_note, action: deny }\n");
    const agent = new RawAgent(["--server-id", "notes", "--events", "none", "--thoughtgate-config", join(dir.path, "thoughtgate.yaml"), "--", ...fixture("tmcp-server-fixture.ts", "--era", "modern")]);
    open.push({ close: () => agent.close() });
    const opened = await agent.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } });
    expect(opened.error).toEqual({ code: -32601, message: "initialize is not part of MCP 2026-07-28; this server supports only 2026-07-28", data: { supported: ["2026-07-28"] } });
    const denied = await agent.request(1, "tools/call", { name: "delete_note", arguments: { id: "a" } });
    expect(denied.error).toMatchObject({ code: -32014, data: { gate: "rules", rule_id: "no-delete" } });
    // Forwarded as sent, without the _meta the shim does not invent: the server's own answer.
    const forwarded = await agent.request(2, "tools/call", { name: "read_note", arguments: { id: "a" } });
    expect(forwarded.error).toMatchObject({ code: -32602, message: expect.stringContaining("Missing io.modelcontextprotocol/protocolVersion") });
  });
});
