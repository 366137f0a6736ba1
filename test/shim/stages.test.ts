/**
 * The shim's security stages, each run alone with a fake `next`, so a mutant in them is caught
 * without building the binary (docs/testing.md, "Mutation testing").
 */
import { describe, expect, test } from "bun:test";
import type { JsonRpcRequest, JsonRpcResponse } from "../../src/core/jsonrpc.ts";
import type { Verdict } from "../../src/governance/verdict/decider.ts";
import type { PendingRequest } from "../../src/shim/request-tracker.ts";
import { statusOf, type Answer } from "../../src/shim/stages/answer.ts";
import { auditStage } from "../../src/shim/stages/audit-stage.ts";
import { verdictOf, type DecidedRequest } from "../../src/shim/stages/governed-request.ts";
import { definitionsStage } from "../../src/shim/stages/definitions-stage.ts";
import { forwardStage } from "../../src/shim/stages/forward-stage.ts";
import { secretsStage } from "../../src/shim/stages/secrets-stage.ts";
import { traceStage } from "../../src/shim/stages/trace-stage.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);
const forward: Verdict = { action: "forward", gate: "rules", ruleId: "r0", reason: "ok" };
const deny: Verdict = { action: "deny", gate: "rules", ruleId: "r1", reason: "no", error: { code: -32014, message: "denied by rule r1", data: { gate: "rules" } } };

const callEntry = (): PendingRequest => ({ id: 1, method: "tools/call", startedAt: 0, call: { callId: "c1", tool: "echo", argsHash: "h" } });
const request: JsonRpcRequest = { kind: "request", id: 1, method: "tools/call", params: { name: "echo" }, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } } };
const response = (result: unknown, isError = false): JsonRpcResponse => ({ kind: "response", id: 1, isError, body: { jsonrpc: "2.0", id: 1, ...(isError ? { error: result } : { result }) } as JsonRpcResponse["body"] });
const answer = (entry: PendingRequest, message: JsonRpcResponse, data = "{}"): Answer => ({ entry, message, bytes: bytes(data), delivered: false });

/** A `next` that notes each call, and what a probe reads at that moment. */
function fakeNext<T>(read: () => T) {
  const seen: T[] = [];
  return { next: () => void seen.push(read()), seen };
}

describe("secrets", () => {
  test("what goes on after it is the scanner's redacted result, never the server's bytes", () => {
    const passing = answer(callEntry(), response({}), '{"token":"ghp_secret"}');
    const { next, seen } = fakeNext(() => text(passing.bytes));
    secretsStage({ scanResult: () => ({ bytes: bytes('{"token":"[REDACTED]"}') }) as never }).response?.(passing, next);
    expect(seen).toEqual(['{"token":"[REDACTED]"}']);
  });
});

describe("definitions (lists on the way back)", () => {
  test("a list the filter takes over is delivered by it: the router sends nothing; other answers go on as they are", () => {
    const taken: string[] = [];
    const stage = definitionsStage({ deliver: (entry) => (taken.push(entry.method), true) });
    const list = answer({ id: 1, method: "tools/list", startedAt: 0 }, response({ tools: [] }));
    const { next, seen } = fakeNext(() => list.delivered);
    stage.response?.(list, next);
    expect(seen).toEqual([true]);
    const call = answer(callEntry(), response({}));
    const failedList = answer({ id: 2, method: "tools/list", startedAt: 0 }, response({ code: 1 }, true));
    for (const other of [call, failedList]) stage.response?.(other, () => {});
    expect({ taken, call: call.delivered, failedList: failedList.delivered }).toEqual({ taken: ["tools/list"], call: false, failedList: false });
  });
});

describe("audit", () => {
  const recorder = () => {
    const written: string[] = [];
    return { written, audit: { decision: (_e: PendingRequest, v: Verdict | { action: "pending" }) => void written.push(`decision ${v.action}`), recordEnd: (_e: PendingRequest, status: string, n: number) => void written.push(`end ${status} ${n}`) } };
  };

  test("the decision before the stages after it; a refused call's end after the forward answered it, with the bytes it sent", () => {
    const { written, audit } = recorder();
    const decided: DecidedRequest = { entry: callEntry(), request, verdict: deny, bytes: bytes("") };
    auditStage(audit).request?.(decided, () => {
      written.push("forward");
      decided.answeredBytes = 77;
    });
    expect(written).toEqual(["decision deny", "forward", "end denied 77"]);
    const { written: passed, audit: again } = recorder();
    auditStage(again).request?.({ entry: callEntry(), request, verdict: forward, bytes: bytes("") }, () => {});
    expect(passed).toEqual(["decision forward"]);
  });

  test("on the way back: a call ends with its status and the bytes the agent gets; a cancelled call or a list does not", () => {
    const { written, audit } = recorder();
    const stage = auditStage(audit);
    stage.response?.(answer(callEntry(), response({ isError: true }), "1234567"), () => {});
    stage.response?.(answer(callEntry(), response({ resultType: "input_required" })), () => {});
    stage.response?.(answer({ ...callEntry(), cancelled: true }, response({})), () => {});
    stage.response?.(answer({ id: 3, method: "tools/list", startedAt: 0 }, response({ tools: [] })), () => {});
    expect(written).toEqual(["end error 7", "end input_required 2"]);
  });
});

describe("how a call ended, from its answer", () => {
  test("an error, a result that is an error, an ask for input, or ok", () => {
    expect([response({ code: -32000, message: "x" }, true), response({ isError: true }), response({ resultType: "input_required" }), response({ content: [] }), response(undefined)].map(statusOf)).toEqual([
      "error",
      "error",
      "input_required",
      "ok",
      "ok",
    ]);
  });
});

describe("forward", () => {
  test("a request that reached it undecided is refused, never sent (fails closed)", () => {
    const sent: string[] = [];
    const agent: string[] = [];
    const undecided: DecidedRequest = { entry: callEntry(), request, bytes: bytes("original") };
    forwardStage((_entry, data) => void sent.push(text(data)), { sendText: (line) => void agent.push(line) }).request?.(undecided, () => {});
    expect(sent).toEqual([]);
    const reason = "no decision was reached";
    expect(agent.map((line) => JSON.parse(line))).toEqual([{ jsonrpc: "2.0", id: 1, error: { code: -32603, message: `ThoughtGate refused the request: ${reason}`, data: { gate: "governance", reason } } }]);
    expect(verdictOf({})).toMatchObject({ action: "deny", gate: "governance", ruleId: null, reason });
  });

  test("a forward goes to the server with the bytes the stages before it made; a deny never does, and answers the agent with its error", () => {
    const sent: string[] = [];
    const agent: string[] = [];
    const stage = forwardStage((_entry, data) => void sent.push(text(data)), { sendText: (line) => void agent.push(line) });
    stage.request?.({ entry: callEntry(), request, verdict: forward, bytes: bytes("with-traceparent") }, () => {});
    const refused: DecidedRequest = { entry: callEntry(), request, verdict: deny, bytes: bytes("original") };
    stage.request?.(refused, () => {});
    expect(sent).toEqual(["with-traceparent"]);
    expect(agent.map((line) => JSON.parse(line))).toEqual([{ jsonrpc: "2.0", id: 1, error: { code: -32014, message: "denied by rule r1", data: { gate: "rules" } } }]);
    expect(refused.answeredBytes).toBe(agent[0]?.length);
  });
});

describe("trace", () => {
  const spans = () => {
    const seen: string[] = [];
    const trace = {
      decided: (v: Verdict) => void seen.push(`decided ${v.action}`),
      forwarded: (data: Uint8Array) => (seen.push("forwarded"), bytes(`${text(data)}+traceparent`)),
      end: (status: string) => void seen.push(`end ${status}`),
    };
    return { seen, entry: { ...callEntry(), trace } as unknown as PendingRequest };
  };

  test("a forward's copy for the server carries the span's context; a refused call's spans end after its error went out", () => {
    const { seen, entry } = spans();
    const let_through: DecidedRequest = { entry, request, verdict: forward, bytes: bytes("line") };
    traceStage(undefined).request?.(let_through, () => void seen.push("forward"));
    expect({ seen: [...seen], bytes: text(let_through.bytes) }).toEqual({ seen: ["decided forward", "forwarded", "forward"], bytes: "line+traceparent" });
    const other = spans();
    const refused: DecidedRequest = { entry: other.entry, request, verdict: deny, bytes: bytes("line") };
    traceStage(undefined).request?.(refused, () => {
      other.seen.push("forward");
      refused.answeredBytes = 10;
    });
    expect({ seen: other.seen, bytes: text(refused.bytes) }).toEqual({ seen: ["decided deny", "forward", "end denied"], bytes: "line" });
  });

  test("on the way back: the answer goes to the tracer, and a call's spans end with its status", () => {
    const { seen, entry } = spans();
    const answered: string[] = [];
    traceStage({ response: (e) => void answered.push(e.method) }).response?.(answer(entry, response({ isError: true })), () => {});
    expect({ answered, seen }).toEqual({ answered: ["tools/call"], seen: ["end error"] });
  });

  test("on the way back: a cancelled call's or a list's answer ends no spans; with tracing off, nothing is traced and the answer goes on", () => {
    const cancelled = spans();
    const list = spans();
    const stage = traceStage({ response: () => {} });
    stage.response?.(answer({ ...cancelled.entry, cancelled: true }, response({})), () => {});
    stage.response?.(answer({ ...list.entry, method: "tools/list", call: undefined }, response({ tools: [] })), () => {});
    expect([cancelled.seen, list.seen]).toEqual([[], []]);
    const went: boolean[] = [];
    traceStage(undefined).response?.(answer(callEntry(), response({})), () => void went.push(true));
    expect(went).toEqual([true]);
  });
});
