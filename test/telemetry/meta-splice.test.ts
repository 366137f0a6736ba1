import { describe, expect, test } from "bun:test";
import { withTraceparent } from "../../src/telemetry/tracing/meta-splice.ts";

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/** The request as a parser sees it, with the traceparent taken out of `_meta` (and an emptied `_meta` dropped). */
function withoutTraceparent(text: string): unknown {
  const body = JSON.parse(text) as { params: { _meta?: Record<string, unknown> } };
  if (body.params._meta) {
    delete body.params._meta.traceparent;
    if (Object.keys(body.params._meta).length === 0) delete body.params._meta;
  }
  return body;
}

describe("withTraceparent: the server's copy of a request gets our context and nothing else changes", () => {
  test("no _meta: one is added first in params, every other byte kept", () => {
    const line = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":12345678901234567890,"x":1e400}}}';
    expect(withTraceparent(line, TP)).toBe(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"${TP}"},"name":"echo","arguments":{"n":12345678901234567890,"x":1e400}}}`,
    );
  });

  test("empty params and empty _meta get no stray comma", () => {
    expect(withTraceparent('{"id":1,"params":{}}', TP)).toBe(`{"id":1,"params":{"_meta":{"traceparent":"${TP}"}}}`);
    expect(withTraceparent('{"id":1,"params":{ "_meta" : { } }}', TP)).toBe(`{"id":1,"params":{ "_meta" : {"traceparent":"${TP}" } }}`);
  });

  test("the agent's traceparent is replaced in place; its tracestate and the rest of _meta stay", () => {
    const line = '{"id":"a","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00","tracestate":"rojo=1"}}}';
    expect(withTraceparent(line, TP)).toBe(
      `{"id":"a","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"${TP}","tracestate":"rojo=1"}}}`,
    );
  });

  test("names are compared decoded, as the gates saw them; look-alikes inside strings and nested objects are not members", () => {
    const line = String.raw`{"method":"tools/call","x":"\"params\":{","p\u0061rams":{"arguments":{"params":{},"_meta":{"traceparent":"keep"}},"\u005fmeta":{"t\u0072aceparent":"old"}}}`;
    const out = withTraceparent(line, TP) as string;
    expect(out).toBe(String.raw`{"method":"tools/call","x":"\"params\":{","p\u0061rams":{"arguments":{"params":{},"_meta":{"traceparent":"keep"}},"\u005fmeta":{"t\u0072aceparent":` + `"${TP}"}}}`);
    expect((JSON.parse(out) as { params: { arguments: unknown } }).params.arguments).toEqual({ params: {}, _meta: { traceparent: "keep" } });
  });

  test("whitespace, escapes and unicode around the members survive", () => {
    const line = '{ "params" : {\t"name" : "caf\\u00e9 \\\\\\"q\\"" ,\n "arguments" : [ true , null , -0.5e-3 , "🙂" ] } , "id" : 7 }';
    const out = withTraceparent(line, TP) as string;
    expect(withoutTraceparent(out)).toEqual(JSON.parse(line));
    expect(out.replace(`"_meta":{"traceparent":"${TP}"},`, "")).toBe(line);
  });

  test("params or _meta that are not objects: nowhere to put it, the request goes unchanged", () => {
    expect(withTraceparent('{"id":1,"params":["x"]}', TP)).toBeNull();
    expect(withTraceparent('{"id":1,"params":{"_meta":null}}', TP)).toBeNull();
    expect(withTraceparent('{"id":1,"method":"ping"}', TP)).toBeNull();
  });

  test("every generated request parses to the same call, with only our traceparent added", () => {
    const samples = [
      { name: "a", arguments: { deep: { list: [1, [2, { three: "}" }]], "quote\"d": "\\" } } },
      { uri: "file:///tmp/{x}", _meta: { progressToken: 5 } },
      { name: "b", _meta: { traceparent: 12, other: [1, 2] }, arguments: {} },
    ];
    for (const params of samples) {
      const line = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params }, null, 1);
      const out = withTraceparent(line, TP) as string;
      const parsed = JSON.parse(out) as { params: { _meta: { traceparent: string } } };
      expect(parsed.params._meta.traceparent).toBe(TP);
      expect(withoutTraceparent(out)).toEqual(withoutTraceparent(line));
    }
  });
});
