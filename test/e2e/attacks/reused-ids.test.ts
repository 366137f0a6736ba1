/**
 * Attack: while a destructive call waits for a person's approval, send another request with the
 * same id. The second used to take the first one's place, so one of them was silently lost (or ran
 * unseen). The duplicate is now answered with an error and never forwarded; the first keeps its
 * approval.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { requireBinary, tempDir, waitFor } from "../../support/harness.ts";
import type { RawAgent } from "../../support/raw-agent.ts";
import { callsReceived, shimWithScriptedServer } from "./support.ts";
import { personReads } from "../../support/approval-answers.ts";

requireBinary();

const agents: RawAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

describe("a request id reused while the first is pending", () => {
  test("the duplicate is refused; the call awaiting approval keeps its place and runs once approved", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { serverArgs: ["--with-destructive"] });
    agents.push(shim.agent);
    await shim.agent.request(0, "initialize", { protocolVersion: "2025-11-25", capabilities: { elicitation: { form: {} } }, clientInfo: { name: "attacker", version: "1" } });
    shim.agent.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
    const ask = await shim.agent.next();
    expect(ask).toMatchObject({ method: "elicitation/create" });
    shim.agent.send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { sneaky: true } } });
    const refused = await shim.agent.next();
    expect(refused).toMatchObject({ id: 7, error: { code: -32600, data: { gate: "framing", reason: "DuplicateRequestId" } } });
    await personReads();
    shim.agent.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { decision: "once" } } });
    const result = (await shim.agent.until(7)).match;
    expect(result.result?.content?.[0]?.text).toBe("deleted everything");
    expect(callsReceived(shim)).toEqual(["delete_everything"]);
  });

  test("reusing the id of a call the server is still running is refused too", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path);
    agents.push(shim.agent);
    shim.agent.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "hang", arguments: {} } });
    const refused = await shim.agent.request(3, "tools/call", { name: "echo", arguments: {} });
    expect(refused.error).toMatchObject({ code: -32600, data: { reason: "DuplicateRequestId" } });
    await shim.agent.request(4, "ping");
    await waitFor(() => callsReceived(shim).length > 0, "the first call to reach the server");
    expect(callsReceived(shim)).toEqual(["hang"]);
  });
});
