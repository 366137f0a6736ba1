import { describe, expect, test } from "bun:test";
import { EventSplitter, type Piece } from "../../src/arbiter/event-splitter.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feed `chunks` and render the pieces: output as text, candidates as [text, complete]. */
function split(splitter: EventSplitter, chunks: string[]): Array<string | [string, boolean]> {
  const pieces: Piece[] = [];
  for (const chunk of chunks) pieces.push(...splitter.push(encoder.encode(chunk)));
  pieces.push(...splitter.end());
  // Adjacent output pieces are one stream of bytes: join them, as the pump's single write does.
  const out: Array<string | [string, boolean]> = [];
  for (const piece of pieces) {
    if (piece.kind === "candidate") out.push([decoder.decode(piece.bytes), piece.complete]);
    else if (typeof out.at(-1) === "string") out[out.length - 1] += decoder.decode(piece.bytes);
    else out.push(decoder.decode(piece.bytes));
  }
  return out;
}

describe("EventSplitter without a prefix", () => {
  test("a line starting with { is held until its newline; other lines pass at once", () => {
    const splitter = new EventSplitter(null);
    expect(splitter.push(encoder.encode("streaming tok")).map((p) => p.kind)).toEqual(["output"]);
    expect(split(splitter, ["ens\n{\"type\":", "\"tool.request\"}\nplain\n"])).toEqual(["ens\n", ['{"type":"tool.request"}\n', true], "plain\n"]);
  });

  test("an unterminated candidate at EOF comes back incomplete (passed through, not parsed)", () => {
    expect(split(new EventSplitter(null), ["{\"half\":"])).toEqual([['{"half":', false]]);
  });

  test("a candidate over the limit is released as incomplete and the rest of the line streams", () => {
    expect(split(new EventSplitter(null, 8), ["{12345", "6789", "abc\nnext\n"])).toEqual([["{123456789", false], "abc\nnext\n"]);
  });
});

describe("EventSplitter with a prefix", () => {
  test("only lines carrying the prefix are candidates, even when it is split across chunks", () => {
    expect(split(new EventSplitter("@@tg "), ["@@", "t", "g {\"a\":1}\n@@t nope\n{\"b\":2}\n"])).toEqual([
      ['@@tg {"a":1}\n', true],
      "@@t nope\n{\"b\":2}\n",
    ]);
  });

  test("a partial prefix held at EOF is output", () => {
    expect(split(new EventSplitter("@@tg "), ["x\n@@t"])).toEqual(["x\n@@t"]);
  });

  test("payloadStart points past the prefix", () => {
    const [piece] = new EventSplitter("EV:").push(encoder.encode("EV:{}\n"));
    expect(piece).toMatchObject({ kind: "candidate", payloadStart: 3, complete: true });
  });

  test("bytes are never lost or reordered", () => {
    const text = Array.from({ length: 500 }, (_, i) => (i % 3 === 0 ? `@@tg {"i":${i}}\n` : i % 3 === 1 ? `@@ line ${i}\n` : `{"j":${i}}\n`)).join("");
    const bytes = encoder.encode(text);
    const splitter = new EventSplitter("@@tg ");
    const parts: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 7) for (const piece of splitter.push(bytes.subarray(at, at + 7))) parts.push(piece.bytes.slice());
    for (const piece of splitter.end()) parts.push(piece.bytes);
    expect(parts.map((part) => decoder.decode(part)).join("")).toBe(text);
  });
});
