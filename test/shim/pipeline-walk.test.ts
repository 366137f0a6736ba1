/**
 * One tools/call walked from the agent's line to the server and back, counting each stage it
 * enters (docs/architecture.md, "Every tool call, one pipeline"): at most once per direction,
 * whether the call is let through, refused, or decided later.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir, waitFor } from "../support/harness.ts";
import { EventStream } from "../../src/telemetry/events.ts";
import type { Decider, Verdict } from "../../src/governance/verdict/decider.ts";
import { Framer } from "../../src/stdio/framer.ts";
import { Router, type Sink } from "../../src/shim/router.ts";

const collect = (): Sink & { lines: string[] } => {
  const lines: string[] = [];
  return { lines, send: (bytes) => void lines.push(new TextDecoder().decode(bytes)), sendText: (line) => void lines.push(line) };
};

const forward: Verdict = { action: "forward", gate: "rules", ruleId: "r0", reason: "ok" };
const deny: Verdict = { action: "deny", gate: "rules", ruleId: "r1", reason: "no", error: { code: -32014, message: "denied by rule r1" } };

function walk(decide: Decider["decide"], listed = true) {
  using dir = tempDir();
  const entered: string[] = [];
  let decided = 0;
  const toAgent = collect();
  const toServer = collect();
  const events = EventStream.open(join(dir.path, "events.jsonl"), { run_id: "r", server_id: "s", profile: "production" });
  const decider: Decider = { policy: "test", decide: (request, context) => ((decided += 1), decide(request, context)) };
  const router = new Router({ serverId: "s", profile: "production", decider, events, toAgent, toServer, stageProbe: (direction, name) => entered.push(`${direction} ${name}`) });
  const line = (message: unknown) => new TextEncoder().encode(`${JSON.stringify(message)}\n`);
  const [agentFramer, serverFramer] = [new Framer(), new Framer()];
  const agent = (message: unknown) => agentFramer.push(line(message)).forEach((unit) => router.fromAgent(unit));
  const server = (message: unknown) => serverFramer.push(line(message)).forEach((unit) => router.fromServer(unit));
  if (listed) {
    agent({ jsonrpc: "2.0", id: "list", method: "tools/list" });
    server({ jsonrpc: "2.0", id: "list", result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } });
  }
  entered.length = 0;
  return { entered, decided: () => decided, agent, server, toAgent, toServer };
}

const WAY_IN = ["request parse", "request lists", "request definitions", "request decide", "request audit", "request trace", "request forward"];

const counts = (entered: string[]) => Object.fromEntries([...new Set(entered)].map((stage) => [stage, entered.filter((e) => e === stage).length]));

describe("one tools/call through the shim's stages", () => {
  test("let through: decided once, each stage entered once on the way in and once on the way back", () => {
    const { entered, decided, agent, server, toServer } = walk(() => forward);
    agent({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } });
    expect(toServer.lines).toHaveLength(2);
    server({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "hi" }] } });
    expect(decided()).toBe(1);
    expect(entered).toEqual([...WAY_IN, "response secrets", "response definitions", "response audit", "response trace"]);
  });

  test("refused: the stages after the decision see the deny, each once; nothing reaches the server", () => {
    const { entered, decided, agent, toServer, toAgent } = walk(() => deny);
    agent({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } });
    expect(decided()).toBe(1);
    expect(toServer.lines).toHaveLength(1);
    expect(JSON.parse(toAgent.lines.at(-1) ?? "{}").error.code).toBe(-32014);
    expect(counts(entered)).toEqual(Object.fromEntries(WAY_IN.map((stage) => [stage, 1])));
  });

  test("decided later (a person, the service): still once each way", async () => {
    const { entered, decided, agent, server, toServer } = walk(() => Promise.resolve(forward));
    agent({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: {} } });
    await waitFor(() => toServer.lines.length === 2, "the call to be forwarded");
    server({ jsonrpc: "2.0", id: 3, result: { content: [] } });
    expect(decided()).toBe(1);
    expect(Object.values(counts(entered))).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  test("a tool not listed yet: the shim reads the list first, and the call still enters each stage once", async () => {
    const { entered, decided, agent, server, toServer } = walk(() => forward, false);
    agent({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "added-later", arguments: {} } });
    await waitFor(() => toServer.lines.length === 1, "the shim's own tools/list");
    const own = JSON.parse(toServer.lines[0] ?? "{}");
    expect(own.method).toBe("tools/list");
    server({ jsonrpc: "2.0", id: own.id, result: { tools: [{ name: "added-later", inputSchema: { type: "object" } }] } });
    await waitFor(() => toServer.lines.length === 2, "the call to be forwarded");
    server({ jsonrpc: "2.0", id: 4, result: { content: [] } });
    expect(decided()).toBe(1);
    expect(entered).toEqual([...WAY_IN, "response secrets", "response definitions", "response audit", "response trace"]);
  });

  test("a modern call asked through input_required: it ends at decide; its retry enters each stage once, and is decided by the same decision", async () => {
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } };
    const { entered, decided, agent, toAgent, toServer } = walk(async (_request, context) => ((await context.elicit?.("Allow?", context.signal))?.kind === "approved" ? forward : deny));
    agent({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", arguments: {}, _meta: meta } });
    await waitFor(() => toAgent.lines.some((line) => line.includes("input_required")), "the question");
    expect(entered).toEqual(WAY_IN.slice(0, 4));
    const { requestState } = JSON.parse(toAgent.lines.at(-1) ?? "{}").result;
    entered.length = 0;
    agent({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "echo", arguments: {}, _meta: meta, requestState, inputResponses: { thoughtgate_approval: { action: "decline" } } } });
    await waitFor(() => toAgent.lines.some((line) => line.includes('"id":6')), "the retry's answer");
    expect({ decided: decided(), toServer: toServer.lines.length, entered }).toEqual({ decided: 1, toServer: 1, entered: WAY_IN });
  });
});
