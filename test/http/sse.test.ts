import { describe, expect, test } from "bun:test";
import { SseParser } from "../../src/http/sse.ts";
import { resumableEventId } from "../../src/http/sse-reader.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const data = (parser: SseParser, ...chunks: string[]) =>
  chunks.flatMap((chunk) => parser.push(bytes(chunk))).map((event) => (event.kind === "event" ? new TextDecoder().decode(event.data) : `oversize ${event.size}`));

describe("SSE parsing (WHATWG event stream rules, on bytes)", () => {
  test("LF, CRLF and CR all end lines, also when a CRLF is split across chunks", () => {
    expect(data(new SseParser(1024), "data: a\r", "\n\r\ndata: b\n\ndata: c\r\r")).toEqual(["a", "b", "c"]);
  });

  test("data lines join with LF; comments, unknown fields and a leading BOM are ignored; id and retry are kept", () => {
    const parser = new SseParser(1024);
    expect(data(parser, "\u{feff}: hi\nfoo: bar\nid: 7\nretry: 250\ndata: {\ndata: }\n\n")).toEqual(["{\n}"]);
    expect({ id: parser.lastEventId, retry: parser.retryMs }).toEqual({ id: "7", retry: 250 });
  });

  test("an event past the cap is counted, not kept, and reported as oversize", () => {
    const parser = new SseParser(10);
    expect(data(parser, "data: 0123456789abcdef\n", "data: more\n\n", "data: ok\n\n")).toEqual(["oversize 21", "ok"]);
  });

  test("an event the stream ends in the middle of is not dispatched", () => {
    const parser = new SseParser(1024);
    expect(data(parser, "data: half")).toEqual([]);
    parser.end();
  });
});

describe("an event id goes back in Last-Event-ID only when a header can carry it unchanged", () => {
  test.each([
    ["r-1", true],
    ["event 42", true],
    ["r-\u2713", false],
    ["caf\u00e9", false],
    [" padded", false],
    ["a\u0000b", false],
    ["", false],
    ["x".repeat(1025), false],
  ])("%j: %p", (id, usable) => {
    expect(resumableEventId(id)).toBe(usable);
  });
});
