import { describe, expect, test } from "bun:test";
import type { FileSink } from "bun";
import { LineSink } from "../../src/stdio/line-sink.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A pipe that takes everything at once, keeping each write. */
function pipe(): { sink: FileSink; writes: Uint8Array[] } {
  const writes: Uint8Array[] = [];
  const sink = { write: (bytes: Uint8Array) => (writes.push(bytes.slice()), bytes.length), flush: () => 0, end: () => 0 };
  return { sink: sink as unknown as FileSink, writes };
}

/** The views a line splitter hands out: each line of `text` without its newline, in `text`'s own buffer. */
function linesOf(text: string): Uint8Array[] {
  const chunk = enc.encode(text);
  const lines: Uint8Array[] = [];
  for (let start = 0, nl = chunk.indexOf(0x0a); nl !== -1; start = nl + 1, nl = chunk.indexOf(0x0a, start)) lines.push(chunk.subarray(start, nl));
  return lines;
}

describe("LineSink: every line is written followed by one newline, in order, in one write per turn", () => {
  test("a chunk whose lines all go on is written as the bytes that came in", async () => {
    const { sink, writes } = pipe();
    const out = new LineSink(sink, () => {});
    const text = '{"a":1}\n{"b":2}\r\n{"c":3}\n';
    for (const line of linesOf(text)) out.send(line);
    await Promise.resolve();
    expect(writes.map((w) => dec.decode(w))).toEqual([text]);
  });

  test("lines left out, lines of our own, and lines of other chunks: each still gets exactly one newline", async () => {
    const { sink, writes } = pipe();
    const out = new LineSink(sink, () => {});
    const [a, b, c] = linesOf('{"a":1}\n{"b":2}\n{"c":3}\n') as [Uint8Array, Uint8Array, Uint8Array];
    const [x] = linesOf('{"x":9}\n') as [Uint8Array];
    out.send(a);
    out.send(c); // b was not forwarded: c does not follow a in the chunk
    out.sendText('{"error":"ours"}');
    out.send(x);
    out.send(b.slice()); // a copy: no newline after it in its own buffer
    out.send(enc.encode('{"d":4}\nXYZ').subarray(0, 7)); // followed by a newline in its buffer
    await Promise.resolve();
    expect(writes.map((w) => dec.decode(w))).toEqual(['{"a":1}\n{"c":3}\n{"error":"ours"}\n{"x":9}\n{"b":2}\n{"d":4}\n']);
  });

  test("a line at the very end of its buffer, with no newline after it, gets one", async () => {
    const { sink, writes } = pipe();
    const out = new LineSink(sink, () => {});
    const bytes = enc.encode('{"a":1}');
    out.send(bytes);
    out.send(bytes);
    await Promise.resolve();
    expect(writes.map((w) => dec.decode(w))).toEqual(['{"a":1}\n{"a":1}\n']);
  });
});
