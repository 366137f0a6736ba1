/**
 * Attack: hide a destructive tool where the shim does not look. Reading one page of a paginated
 * tools/list used to mark every tool's annotations as known, so a destructive tool on an unread page
 * was decided as unannotated and forwarded without approval; a server refusing the shim's own list
 * request had the same effect. Now the shim reads every page first, and a tool whose annotations
 * still cannot be known is decided under the MCP defaults (possibly destructive), never as benign.
 * No policy file: the embedded default asks a person about destructive tools, and this agent
 * offers no way to ask (no elicitation), so such a call is refused with -32007.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { requireBinary, tempDir } from "../../support/harness.ts";
import type { RawAgent } from "../../support/raw-agent.ts";
import { callsReceived, shimWithScriptedServer } from "./support.ts";

requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

describe("tool annotations the shim has not read", () => {
  test("a destructive tool on an unread page of tools/list still needs approval", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { serverArgs: ["--page-size", "2", "--with-destructive"] });
    agents.push(shim.agent);
    const first = await shim.agent.request(1, "tools/list", {});
    expect(first.result.nextCursor).toBe("2");
    expect(first.result.tools.map((t: { name: string }) => t.name)).not.toContain("delete_everything");
    const call = await shim.agent.request(2, "tools/call", { name: "delete_everything", arguments: {} });
    expect(call.error).toMatchObject({ code: -32007, data: { gate: "approval", rule_id: "default-destructive" } });
    expect(callsReceived(shim)).toEqual([]);
    // The shim read the rest of the list itself, page by page, with its own request ids.
    const pages = shim.received().filter((m) => m.method === "tools/list" && String(m.id).startsWith("thoughtgate-"));
    expect(pages.map((m) => m.params?.cursor ?? null)).toEqual([null, "2", "4", "6"]);
  });

  test("a server that refuses the shim's own tools/list: its tools are decided under the MCP defaults", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { serverArgs: ["--refuse-list", "--with-destructive"] });
    agents.push(shim.agent);
    const call = await shim.agent.request(1, "tools/call", { name: "delete_everything", arguments: {} });
    expect(call.error).toMatchObject({ code: -32007, data: { rule_id: "default-destructive" } });
    expect(callsReceived(shim)).toEqual([]);
    expect(shim.agent.stderr).toContain("could not read the whole tool list");
  });

  test("a read-only tool listed on a later page is forwarded once the shim has read it", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { serverArgs: ["--page-size", "2", "--with-destructive"] });
    agents.push(shim.agent);
    await shim.agent.request(1, "tools/list", {});
    const call = await shim.agent.request(2, "tools/call", { name: "env", arguments: {} });
    expect(call.error).toBeUndefined();
    expect(callsReceived(shim)).toEqual(["env"]);
  });
});
