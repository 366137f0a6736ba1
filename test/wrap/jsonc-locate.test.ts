import { expect, test } from "bun:test";
import { findNodeAtLocation, parseTree, type JSONPath } from "jsonc-parser";
import { jsoncProblem, locateValues } from "../../src/wrap/adapters/jsonc.ts";

// Everything that could fool a scanner that skips values by bracket matching.
const TRICKY = `\uFEFF// a "quoted" comment with { and [
{
  "skip": ["}", "\\"]", "\\\\", { "x": "{{" }, 1.5e3, true, null, /* ] */ "end"],
  /* "mcpServers": { "fake": {} } */
  "nested": { "deeper": { "target": { "a": 1 } }, "after": "\\u007d" },
  "esc\\"aped": { "k": [] },
  "\\u0041": "escaped key",
  "empty": {},
  "mcpServers": {
    "a": { "command": "x", "args": ["//not a comment", "/* nor this */"] }, // trailing
    "b": { "command": "y", }, // trailing comma inside
  },
}
`;

test.each<[string, JSONPath]>([
  ["a value after skipped arrays full of brackets in strings", ["mcpServers"]],
  ["a deep path", ["nested", "deeper", "target"]],
  ["a key with an escaped quote", ['esc"aped']],
  ["a key written with a unicode escape", ["A"]],
  ["an empty object", ["empty"]],
  ["an entry after a comment", ["mcpServers", "b"]],
])("%s: the same span as jsonc-parser", (_, path) => {
  expect(jsoncProblem(TRICKY)).toBeUndefined();
  const tree = parseTree(TRICKY, [], { allowTrailingComma: true });
  const node = tree && findNodeAtLocation(tree, path);
  const { spans } = locateValues(TRICKY, [path]);
  expect(spans[0]).toEqual(node ? { offset: node.offset, length: node.length } : undefined);
});

test("a path that is not there, or runs through a non-object, is not found", () => {
  expect(locateValues(TRICKY, [["missing"], ["skip", "0"], ["mcpServers", "a", "args", "x"]]).spans).toEqual([undefined, undefined, undefined]);
});

test("a key on the path that appears twice is reported", () => {
  expect(locateValues('{ "a": { "b": 1 }, "a": { "b": 2 } }', [["a", "b"]]).duplicates).toEqual(["a"]);
});
