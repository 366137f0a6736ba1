/**
 * Attack: a governed request whose tool name is not a string, or whose params are positional. The
 * gates would decide it as the empty name while the server, which may accept the other shape, runs
 * the tool. Such a request is refused with -32602 and reaches no one.
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

const shapes: Array<[string, unknown]> = [
  ["a name in an array", { name: ["delete_everything"], arguments: {} }],
  ["a name as an object", { name: { value: "delete_everything" } }],
  ["positional params", ["delete_everything", {}]],
  ["arguments as an array", { name: "echo", arguments: ["rm", "-rf"] }],
  // The gates would decide on `{}` (absent arguments), the server gets null: not the same call.
  ["arguments as null", { name: "delete_everything", arguments: null }],
  ["arguments as a string", { name: "echo", arguments: "rm -rf /" }],
];

describe("names and params that are not what they claim", () => {
  for (const [what, params] of shapes) {
    test(`tools/call with ${what} is refused with -32602 and never forwarded`, async () => {
      using dir = tempDir();
      const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE, serverArgs: ["--with-destructive"] });
      agents.push(shim.agent);
      const answer = await shim.agent.request(1, "tools/call", params);
      expect(answer.error).toMatchObject({ code: -32602, data: { gate: "governance" } });
      await shim.agent.request(2, "ping");
      expect(callsReceived(shim)).toEqual([]);
      expect(shim.received().filter((m) => m.id === 1)).toEqual([]);
    });
  }

  test("prompts/get with null arguments is refused the same way", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE });
    agents.push(shim.agent);
    const answer = await shim.agent.request(1, "prompts/get", { name: "greeting", arguments: null });
    expect(answer.error).toMatchObject({ code: -32602, data: { gate: "governance" } });
    await shim.agent.request(2, "ping");
    expect(shim.received().filter((m) => m.id === 1)).toEqual([]);
  });

  test("resources/read with a URI that is not a string is refused", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { policy: DENY_DELETE });
    agents.push(shim.agent);
    const answer = await shim.agent.request(1, "resources/read", { uri: ["file:///etc/shadow"] });
    expect(answer.error).toMatchObject({ code: -32602 });
    await shim.agent.request(2, "ping");
    expect(shim.received().filter((m) => m.id === 1)).toEqual([]);
  });
});
