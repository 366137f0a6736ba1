/**
 * Attack: arguments nested tens of thousands of levels deep. Hashing them for the audit recursed
 * until the stack overflowed, which ended the shim's read loop as if the agent had hung up: no
 * answer, no record. Messages nested deeper than 128 levels are now rejected as a framing error,
 * answered, and the shim keeps serving.
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

describe("deeply nested messages", () => {
  test("arguments nested 60,000 deep are answered with an error, and the shim keeps working", async () => {
    using dir = tempDir();
    const shim = shimWithScriptedServer(dir.path, { shimArgs: ["--profile", "production"] });
    agents.push(shim.agent);
    const depth = 60_000;
    const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    shim.agent.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"deep":${nested}}}}\n`);
    expect((await shim.agent.until(1)).match.error).toMatchObject({ code: -31002, data: { gate: "framing", reason: "NestingTooDeep" } });
    expect((await shim.agent.request(2, "tools/call", { name: "echo", arguments: { shallow: [[[1]]] } })).result).toBeDefined();
    expect(callsReceived(shim)).toEqual(["echo"]);
    expect(await shim.agent.close()).toBe(0);
    expect(shim.events().filter((e) => e.type === "framing_error")).toMatchObject([{ error: "NestingTooDeep", answered_id: 1 }]);
  });
});
