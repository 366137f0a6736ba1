/**
 * Attack: text built so the secret scanner reads the same bytes again at every anchor. `token=`
 * repeated over 60 KB and then `(` sent the assignment rule 60 KB ahead at each `=`, only for it to
 * give up at the `(`: a few MiB held the shim for tens of seconds (a ping sent after such a result
 * went unanswered), and an agent could do the same with its own arguments, which are scanned for
 * the audit. The scanner now never reads a stretch twice for the same look (the adversarial corpus
 * of `bun run bench` measures it).
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { requireBinary, tempDir } from "../../support/harness.ts";
import type { RawAgent, Received } from "../../support/raw-agent.ts";
import { shimWithScriptedServer } from "./support.ts";

requireBinary();
setDefaultTimeout(60_000);

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** 60 KB of assignments whose value ends in code: the worst case of the assignment rule. */
const BLOCK = `${"token=".repeat(10_000)}(`;
/** 8 MiB of it: minutes of scanning when each anchor re-reads its block, a fraction of a second when none does. */
const BLOCKS = Math.floor((8 * 1024 * 1024) / BLOCK.length);

function shim(): RawAgent {
  const dir = tempDir();
  cleanup.push(() => dir[Symbol.dispose]());
  const s = shimWithScriptedServer(dir.path, { shimArgs: ["--profile", "production"] });
  cleanup.push(() => s.agent.close());
  return s.agent;
}

/** The answers to `ids`, in whatever order the shim sends them; each must come within the default 20 s. */
async function answers(agent: RawAgent, ids: number[]): Promise<Map<number, Received>> {
  const got = new Map<number, Received>();
  while (got.size < ids.length) {
    const message = await agent.next();
    if (typeof message.id === "number" && ids.includes(message.id) && message.method === undefined) got.set(message.id, message);
  }
  return got;
}

describe("text built against the secret scanner does not stall the shim", () => {
  test("an 8 MiB tool result of worst-case assignments: the ping sent after it is answered, and the result arrives whole", async () => {
    const agent = shim();
    await agent.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack", version: "1" } });
    const big = { head: '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"', fill: BLOCK, count: BLOCKS, tail: '"}]}}\n' };
    agent.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "emit", arguments: { big } } });
    agent.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    const got = await answers(agent, [1, 2]);
    expect(got.get(2)?.result).toEqual({});
    // Nothing in it is a credential (every value runs into code): it reaches the agent unchanged.
    expect(got.get(1)?.result.content[0].text).toBe(BLOCK.repeat(BLOCKS));
  });

  test("an agent's own 8 MiB of worst-case arguments (scanned for the audit): the call and a ping after it are answered", async () => {
    const agent = shim();
    await agent.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "attack", version: "1" } });
    const text = BLOCK.repeat(BLOCKS);
    agent.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text } } });
    agent.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    const got = await answers(agent, [1, 2]);
    expect(got.get(2)?.result).toEqual({});
    expect(JSON.stringify(got.get(1)?.result)).toContain(BLOCK);
  });
});
