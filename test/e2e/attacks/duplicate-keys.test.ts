/**
 * Attack: a name twice in one JSON object. JSON.parse keeps the last one; many servers' parsers keep
 * the first. A shim that decides on the parsed message and forwards the original bytes would let
 * the server run a call the gates never saw. Such a message is rejected in both directions.
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

const DENY_DELETE = "schema: 1\ngovernance:\n  defaults: { action: forward }\n  rules:\n    - { id: no-delete, match: delete_everything, action: deny }\n";

describe("duplicate JSON keys", () => {
  test("a blocked tool hidden behind a second \"name\" never reaches the server; the agent gets a framing error", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE, serverArgs: ["--with-destructive"] });
    agents.push(shim.agent);
    shim.agent.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_everything","name":"echo","arguments":{}}}\n');
    const answer = (await shim.agent.until(1)).match;
    expect(answer.error).toMatchObject({ code: -31002, data: { gate: "framing", reason: "DuplicateKey" } });
    await shim.agent.request(2, "ping");
    expect(callsReceived(shim)).toEqual([]);
  });

  test("an escaped spelling of the same name (\"n\\u0061me\") is the same name", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE, serverArgs: ["--with-destructive"] });
    agents.push(shim.agent);
    shim.agent.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_everything","n\\u0061me":"echo"}}\n');
    expect((await shim.agent.until(1)).match.error).toMatchObject({ code: -31002, data: { reason: "DuplicateKey" } });
    await shim.agent.request(2, "ping");
    expect(callsReceived(shim)).toEqual([]);
  });

  test("a governed call disguised as an ungoverned method (\"method\" twice) is never forwarded", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE, serverArgs: ["--with-destructive"] });
    agents.push(shim.agent);
    shim.agent.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"delete_everything","arguments":{}}}\n');
    expect((await shim.agent.until(1)).match.error).toMatchObject({ code: -31002, data: { reason: "DuplicateKey" } });
    await shim.agent.request(2, "ping");
    expect(shim.received().filter((m) => m.id === 1)).toEqual([]);
  });

  test("different arguments for the approver and the server (\"arguments\" twice, nested) are refused", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE });
    agents.push(shim.agent);
    shim.agent.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"path":"/tmp/x","path":"/etc/passwd"}}}\n');
    expect((await shim.agent.until(1)).match.error).toMatchObject({ code: -31002, data: { reason: "DuplicateKey" } });
    await shim.agent.request(2, "ping");
    expect(callsReceived(shim)).toEqual([]);
  });

  test("in an object of more than 16 names, the name that made it large is compared too, plain or escaped", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE });
    agents.push(shim.agent);
    // Sixteen names, then the seventeenth ("path", where the check switches to a lookup table) twice:
    // the gates would decide on one path, the server could write the other.
    const sixteen = Array.from({ length: 16 }, (_, i) => `"a${i}":${i}`).join(",");
    const twice = (second: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{${sixteen},"path":"/tmp/ok",${second}:"/home/u/.ssh/authorized_keys"}}}\n`;
    shim.agent.write(twice('"path"'));
    expect((await shim.agent.until(1)).match.error).toMatchObject({ code: -31002, data: { gate: "framing", reason: "DuplicateKey", detail: 'the name "path" appears twice in one object' } });
    shim.agent.write(twice('"p\\u0061th"').replace('"id":1', '"id":2'));
    expect((await shim.agent.until(2)).match.error).toMatchObject({ code: -31002, data: { reason: "DuplicateKey" } });
    await shim.agent.request(3, "ping");
    expect(callsReceived(shim)).toEqual([]);
  });

  test("server → agent: a response with a duplicate key is not delivered; the call it answered gets an error", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path);
    agents.push(shim.agent);
    const forged = '{"jsonrpc":"2.0","id":5,"result":{"isError":false,"isError":true,"content":[]}}\n';
    const answer = await shim.agent.request(5, "tools/call", { name: "emit", arguments: { b64: Buffer.from(forged).toString("base64") } });
    expect(answer.error).toMatchObject({ code: -31002, data: { gate: "framing", reason: "DuplicateKey" } });
    expect(await shim.agent.close()).toBe(0);
    const rejected = shim.events().filter((e) => e.type === "framing_error");
    expect(rejected).toMatchObject([{ direction: "server_to_agent", error: "DuplicateKey", action: "rejected", answered_id: 5 }]);
  });
});
