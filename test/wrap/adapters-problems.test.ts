import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discover, rewrite, type AgentContext, type ConfigFile, type ServerEntry } from "../../src/wrap/adapters/index.ts";

function windsurfHome(content: string | Uint8Array): Disposable & { ctx: AgentContext; path: string } {
  const home = mkdtempSync(join(tmpdir(), "thoughtgate-adapters-"));
  const path = join(home, ".codeium", "windsurf", "mcp_config.json");
  mkdirSync(join(home, ".codeium", "windsurf"), { recursive: true });
  writeFileSync(path, content);
  return { ctx: { home, cwd: home, env: {}, platform: "linux" }, path, [Symbol.dispose]: () => rmSync(home, { recursive: true, force: true }) };
}

const only = (files: ConfigFile[]): ConfigFile => {
  const [file] = files;
  if (!file) throw new Error("no file");
  return file;
};

const shim = (entry: ServerEntry) => ({ command: "/opt/tg", args: ["shim", "--", entry.command ?? "", ...entry.args], env: { THOUGHTGATE_GOVERNANCE_SECRET: "s" } });

describe("a file wrap must not touch is a problem on that file, not a crash", () => {
  test.each([
    ["a missing comma", '{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": { "command": "y" }\n  }\n}\n', "does not parse (line 4, column 5: CommaExpected)"],
    ["an empty file", "", "is empty"],
    ["an array at the top", '[{ "command": "x" }]', "does not hold a JSON object at the top level"],
    ["a server defined twice", '{ "mcpServers": { "a": { "command": "x" }, "a": { "command": "y" } } }', 'has the server "a" twice in "mcpServers": the agent reads the last one, so wrap leaves the file alone'],
    ["a key twice inside a server", '{ "mcpServers": { "a": { "command": "x", "command": "y" } } }', 'has "command" twice in the server "a": the agent reads the last one, so wrap leaves the file alone'],
    ["a key twice in a server's env", '{ "mcpServers": { "a": { "command": "x", "env": { "K": "1", "K": "2" } } } }', 'has "K" twice in the server "a": the agent reads the last one, so wrap leaves the file alone'],
    ["mcpServers twice", '{ "mcpServers": {}, "mcpServers": { "a": { "command": "y" } } }', 'has "mcpServers" twice: the agent reads the last one, so wrap leaves the file alone'],
    ["mcpServers that is not an object", '{ "mcpServers": ["a"] }', '"mcpServers" is not an object'],
    ["bytes that are not UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), "is not valid UTF-8"],
  ])("%s", (_, content, problem) => {
    using home = windsurfHome(content);
    const file = only(discover("windsurf", home.ctx));
    expect(file.problems).toEqual([problem]);
    expect(file.entries.filter((entry) => entry.governed)).toEqual([]);
  });

  test("duplicate keys outside the server map do not block the file", () => {
    using home = windsurfHome('{ "mcpServers": { "a": { "command": "x", "args": ["1"] } }, "x": {}, "x": 2 }');
    expect(only(discover("windsurf", home.ctx)).problems).toEqual([]);
  });

  test("a problem anywhere in a file stops every entry in it, even ones read before the problem", () => {
    using home = windsurfHome("{}");
    const projects = { [home.ctx.cwd]: { mcpServers: { a: { command: "x" } } } };
    const text = JSON.stringify({ mcpServers: { u: { command: "u" } }, projects }).replace('"a":{"command":"x"}', '"a":{"command":"x"},"a":{"command":"y"}');
    writeFileSync(join(home.ctx.home, ".claude.json"), text);
    const [file] = discover("claude-code", home.ctx);
    expect(file?.problems).toEqual(['has the server "a" twice in "projects.' + home.ctx.cwd + '.mcpServers": the agent reads the last one, so wrap leaves the file alone']);
    expect(file?.entries.map((e) => [e.name, e.status, e.governed])).toEqual([["u", "file-problem", false]]);
  });

  test("rewrite refuses a text that does not parse, and one whose entries changed since discovery", () => {
    using home = windsurfHome('{ "mcpServers": { "a": { "command": "x" } } }');
    const file = only(discover("windsurf", home.ctx));
    expect(() => rewrite('{ "mcpServers": { "a": { "command": "x" } }', file.entries, shim)).toThrow("does not parse");
    expect(() => rewrite('{ "mcpServers": { "a": { "command": "other" } } }', file.entries, shim)).toThrow('the server "a" changed since it was read');
    expect(() => rewrite('{ "mcpServers": {} }', file.entries, shim)).toThrow('the server "a" changed since it was read');
  });

  test("a byte-order mark is kept and the file is still read and rewritten", () => {
    using home = windsurfHome('\uFEFF{ "mcpServers": { "a": { "command": "x" } } }');
    const file = only(discover("windsurf", home.ctx));
    expect(file.problems).toEqual([]);
    expect(file.text.startsWith("\uFEFF")).toBe(true);
    const { text } = rewrite(file.text, file.entries, shim);
    expect(text).toBe('\uFEFF{ "mcpServers": { "a": { "command": "/opt/tg", "args": ["shim", "--", "x"], "env": { "THOUGHTGATE_GOVERNANCE_SECRET": "s" } } } }');
  });

  test("an entry the agent cannot start is reported as invalid and left alone", () => {
    using home = windsurfHome('{ "mcpServers": { "a": { "args": ["x"] }, "b": { "command": "x", "args": "--flag" }, "c": "npx", "d": { "command": "x", "type": "websocket-ish" } } }');
    const entries = only(discover("windsurf", home.ctx)).entries;
    expect(entries.map((e) => [e.name, e.status, e.reason])).toEqual([
      ["a", "invalid", "has no command: the agent cannot start it, left untouched"],
      ["b", "invalid", "has args that are not a list of strings: the agent cannot start it, left untouched"],
      ["c", "invalid", "is not an object: the agent cannot start it, left untouched"],
      ["d", "invalid", 'has an unknown type "websocket-ish": the agent cannot start it, left untouched'],
    ]);
  });
});
