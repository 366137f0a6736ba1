import { describe, expect, test } from "bun:test";
import { decisionMessage, parseEvent, pingMessage } from "../../src/arbiter/protocol.ts";

describe("parseEvent", () => {
  test("a tool.request gets its defaults (args {}, requires_policy false) and keeps unknown keys out", () => {
    expect(parseEvent(`{"v":1,"type":"tool.request","id":"t-1","tool":"fs.read","extra":true}`, false)).toEqual({
      ok: true,
      event: { kind: "request", event: { v: 1, type: "tool.request", id: "t-1", tool: "fs.read", args: {}, requires_policy: false } },
    });
  });

  test("unprefixed: JSON that is not a tool.* event is output; a broken tool.* event is malformed", () => {
    expect(parseEvent(`{"type":"progress"}`, false)).toEqual({ ok: true, event: null });
    expect(parseEvent(`{not json`, false)).toEqual({ ok: true, event: null });
    expect(parseEvent(`{"v":1,"type":"tool.request","id":"t-1","args":[]}`, false)).toEqual({ ok: false, error: "InvalidEvent", detail: "tool: missing" });
  });

  test("prefixed: anything that is not a valid event is malformed", () => {
    expect(parseEvent(`{not json`, true)).toMatchObject({ ok: false, error: "InvalidJson" });
    expect(parseEvent(`"text"`, true)).toMatchObject({ ok: false, error: "NotAnObject" });
    expect(parseEvent(`{"type":"tool.result","id":"x"}`, true)).toMatchObject({ ok: false, error: "UnsupportedVersion" });
    expect(parseEvent(`{"v":1,"type":"tool.request","id":"","tool":"x"}`, true)).toMatchObject({ ok: false, error: "InvalidEvent" });
  });

  test("tool.result and other tool.* events", () => {
    expect(parseEvent(`{"v":1,"type":"tool.result","id":7,"ok":false}`, false)).toEqual({ ok: true, event: { kind: "result", event: { v: 1, type: "tool.result", id: 7, ok: false } } });
    expect(parseEvent(`{"v":1,"type":"tool.progress","id":"a"}`, false)).toEqual({ ok: true, event: { kind: "other", type: "tool.progress", id: "a" } });
  });
});

test("control messages carry the protocol's envelope", () => {
  expect(decisionMessage("r-1", 5, "deny", "no", "rule-x")).toEqual({
    v: 1,
    type: "policy.decision",
    ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    run_id: "r-1",
    id: 5,
    decision: "deny",
    reason: "no",
    rule_id: "rule-x",
  });
  expect(pingMessage("r-1", "ping-1", 1000)).toMatchObject({ type: "policy.ping", capabilities: ["policy.decision.v1", "policy.ping.v1", "policy.abort.v1"], timeout_ms: 1000 });
});
