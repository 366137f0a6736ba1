/**
 * The shim's lists stage alone, with a fake `next`: a call for a tool the shim has not seen listed
 * waits for the shim's own read of the whole list (so policies that read annotations see them), read
 * once, checked against the pins, and a call already known or decided goes on at once.
 */
import { describe, expect, test } from "bun:test";
import type { JsonRpcResponse } from "../../../src/core/jsonrpc.ts";
import { taggedLog } from "../../../src/core/log.ts";
import { HeldDecisions } from "../../../src/shim/held-decisions.ts";
import { listsStage } from "../../../src/shim/stages/lists-stage.ts";
import { ToolCatalog } from "../../../src/shim/tool-catalog.ts";
import { deny, fakeNext, governed, later, modernCall, toolCall } from "./governed.ts";

const TOOLS = [{ name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }];
const listAnswer = (tools: unknown[]): JsonRpcResponse => ({ kind: "response", id: "own", isError: false, body: { jsonrpc: "2.0", id: "own", result: { tools } } as JsonRpcResponse["body"] });

function setup() {
  const catalog = new ToolCatalog(taggedLog("s"));
  const held = new HeldDecisions();
  const asked: { method: string; params: unknown }[] = [];
  const answers = [later<JsonRpcResponse | null>()];
  const checked: unknown[][] = [];
  const kinds: string[] = [];
  const stage = listsStage({
    catalog,
    definitions: { check: (kind, items) => (kinds.push(kind), checked.push([...items]), new Set<string>()) },
    pinPolicy: () => ({ mode: "strict", blockSeverity: "high", enforce: true }),
    own: { askServer: (method, params) => (asked.push({ method, params }), (answers[asked.length - 1] ?? later<JsonRpcResponse | null>()).promise) },
    held,
  });
  return { catalog, held, asked, answer: answers[0] as ReturnType<typeof later<JsonRpcResponse | null>>, checked, kinds, stage };
}

describe("lists (the shim's way in)", () => {
  test("a call for a tool not seen listed waits, held, for one read of the whole list; then it goes on with the tool's annotations known", async () => {
    const { catalog, held, asked, answer, checked, kinds, stage } = setup();
    const first = governed(toolCall(1, "echo"));
    const second = governed(toolCall(2, "other"));
    const a = fakeNext(first);
    const b = fakeNext(second);
    const runs = [stage.request?.(first, a.next), stage.request?.(second, b.next)];
    expect({ asked: asked.map((r) => r.method), held: [held.has(1), held.has(2)], went: a.seen.length + b.seen.length }).toEqual({ asked: ["tools/list"], held: [true, true], went: 0 });
    answer.settle(listAnswer(TOOLS));
    await Promise.all(runs);
    // Each waiting call has what was read checked against the pins before it goes on (the second
    // is the guard's lookup of a page it has seen).
    expect({ went: [a.seen.length, b.seen.length], held: held.size, checked, annotations: catalog.annotationsOf("echo") }).toEqual({ went: [1, 1], held: 0, checked: [TOOLS, TOOLS], annotations: { readOnlyHint: true } });
    expect(kinds).toEqual(["tool", "tool"]);
    // Read once: a later call for a tool still unknown is decided under the MCP defaults, not read again.
    const third = governed(toolCall(3, "missing"));
    const c = fakeNext(third);
    expect(stage.request?.(third, c.next)).toBeUndefined();
    expect({ asked: asked.length, went: c.seen.length }).toEqual({ asked: 1, went: 1 });
  });

  test("a known tool, a call already decided, or another method goes on at once, synchronously, with no read", () => {
    const { catalog, asked, stage } = setup();
    catalog.remember(TOOLS, false);
    const known = governed(toolCall(1, "echo"));
    const refused = governed(toolCall(2, "unknown"));
    refused.verdict = deny;
    const prompt = governed({ ...toolCall(3, "p"), method: "prompts/get" });
    const results = [known, refused, prompt].map((call) => {
      const { next, seen } = fakeNext(call);
      return { result: stage.request?.(call, next), went: seen.length };
    });
    expect({ results, asked }).toEqual({ results: [1, 2, 3].map(() => ({ result: undefined, went: 1 })), asked: [] });
  });

  test("a modern call's read carries the protocol version in _meta, as a modern server requires", () => {
    const { asked, stage } = setup();
    const call = modernCall(1, "echo");
    void stage.request?.(call, () => {});
    expect(asked[0]?.params).toMatchObject({ _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } });
  });

  test("a list the server does not give: nothing to check against the pins, and the call goes on (decided under the MCP defaults)", async () => {
    const { held, answer, checked, stage } = setup();
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    answer.settle(null);
    await run;
    expect({ went: seen.length, held: held.size, checked }).toEqual({ went: 1, held: 0, checked: [] });
  });

  test("a call cancelled while the list is read goes no further", async () => {
    const { held, answer, stage } = setup();
    const call = governed(toolCall(1, "echo"));
    const { next, seen } = fakeNext(call);
    const run = stage.request?.(call, next);
    held.cancel(1);
    answer.settle(listAnswer(TOOLS));
    await run;
    expect(seen).toEqual([]);
  });
});
