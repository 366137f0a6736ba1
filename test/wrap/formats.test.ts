/**
 * The TOML and YAML edits behind `rewrite` and `restoreOwnedKeys`: every way a server can be
 * written, what the edit looks like, and that the restore gives the exact bytes back.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { rewrite, STANDARD_LAYOUT, type AgentType, type EntryLayout, type ServerEntry, type ShimCommand } from "../../src/wrap/adapters/index.ts";
import { formatOf } from "../../src/wrap/formats/index.ts";
import { planPutBack, sha256OfBytes } from "../../src/wrap/put-back.ts";
import { tempDir } from "../support/harness.ts";

const shim: ShimCommand = { command: "/tg", args: ["shim", "--"], env: { RUN: "r1" } };
const shimFor = (entry: ServerEntry): ShimCommand => ({ ...shim, args: [...shim.args, entry.command ?? "", ...entry.args] });

/** A governed entry as discovery would give it. */
function entry(agent: AgentType, jsonPath: JSONPath, command: string, args: string[] = [], layout: EntryLayout = STANDARD_LAYOUT): ServerEntry {
  return { name: String(jsonPath.at(-1)), agent, scope: "user", file: "/cfg", jsonPath, layout, transport: "stdio", command, args, env: {}, effective: undefined, status: "governed", governed: true, warnings: [] };
}

/** Rewrite, check the restore of the untouched text, and hand back the rewritten text. */
function roundTrip(agent: AgentType, text: string, entries: ServerEntry[]): string {
  const { text: rewritten, owned } = rewrite(text, entries, shimFor);
  const { restoreOwnedKeys } = formatOf(agent);
  expect(restoreOwnedKeys(text, rewritten, rewritten, owned)).toBe(text);
  // Through the span edits too (what runs when the agent saved the file): the same bytes.
  expect(restoreOwnedKeys(text, rewritten, `${rewritten}\n`, owned)).toBe(`${text}\n`);
  return rewritten;
}

const GOOSE: EntryLayout = { at: [], command: "cmd", args: "args", env: "envs" };

describe("TOML", () => {
  test.each([
    [
      "a [table] with a trailing comment on the command",
      '[mcp_servers.a]\ncommand = "x" # why\nenabled = false\n',
      '[mcp_servers.a]\ncommand = "/tg" # why\nenabled = false\nargs = ["shim", "--", "x"]\nenv = { RUN = "r1" }\n',
    ],
    ["an inline table", '[mcp_servers]\na = { command = "x", args = ["1"] }\n', '[mcp_servers]\na = { command = "/tg", args = ["shim", "--", "x", "1"], env = { RUN = "r1" } }\n'],
    [
      "a TOML 1.1 inline table over several lines, trailing comma",
      '[mcp_servers]\na = {\n  command = "x",\n}\n',
      '[mcp_servers]\na = {\n  command = "/tg", args = ["shim", "--", "x"], env = { RUN = "r1" },\n}\n',
    ],
    ["dotted keys under [mcp_servers]", '[mcp_servers]\n  a.command = "x"\n', '[mcp_servers]\n  a.command = "/tg"\n  a.args = ["shim", "--", "x"]\n  a.env = { RUN = "r1" }\n'],
    ["dotted keys at the top, quoted", 'mcp_servers."a".command = "x"\n', 'mcp_servers."a".command = "/tg"\nmcp_servers."a".args = ["shim", "--", "x"]\nmcp_servers."a".env = { RUN = "r1" }\n'],
    [
      "an [x.env] table with keys",
      '[mcp_servers.a]\ncommand = "x"\n\n[mcp_servers.a.env]\nK = "v"\n',
      '[mcp_servers.a]\ncommand = "/tg"\nargs = ["shim", "--", "x"]\n\n[mcp_servers.a.env]\nK = "v"\nRUN = "r1"\n',
    ],
    [
      "an empty [x.env] table",
      '[mcp_servers.a]\ncommand = "x"\n[mcp_servers.a.env]\n[other]\n',
      '[mcp_servers.a]\ncommand = "/tg"\nargs = ["shim", "--", "x"]\n[mcp_servers.a.env]\nRUN = "r1"\n[other]\n',
    ],
    ["an empty inline env", '[mcp_servers.a]\ncommand = "x"\nenv = {}\n', '[mcp_servers.a]\ncommand = "/tg"\nenv = { RUN = "r1" }\nargs = ["shim", "--", "x"]\n'],
    ["dotted env keys", '[mcp_servers.a]\ncommand = "x"\nenv.K = "v"\n', '[mcp_servers.a]\ncommand = "/tg"\nargs = ["shim", "--", "x"]\nenv.K = "v"\nenv.RUN = "r1"\n'],
    ["a byte-order mark", '\uFEFF[mcp_servers.a]\ncommand = "x"\n', '\uFEFF[mcp_servers.a]\ncommand = "/tg"\nargs = ["shim", "--", "x"]\nenv = { RUN = "r1" }\n'],
    ["CRLF line ends", '[mcp_servers.a]\r\ncommand = "x"\r\n', '[mcp_servers.a]\r\ncommand = "/tg"\r\nargs = ["shim", "--", "x"]\r\nenv = { RUN = "r1" }\r\n'],
  ])("%s", (_, text, expected) => {
    expect(roundTrip("codex", text, [entry("codex", ["mcp_servers", "a"], "x", text.includes('"1"') ? ["1"] : [])])).toBe(expected);
  });

  test("strings TOML must escape are escaped; keys that are not bare are quoted", () => {
    const special: ShimCommand = { command: 'C:\\tg "x"\u007f', args: [], env: { "KEY WITH SPACE": "é" } };
    const { text } = rewrite('[mcp_servers.a]\ncommand = "x"\n', [entry("codex", ["mcp_servers", "a"], "x")], () => special);
    expect(text).toBe('[mcp_servers.a]\ncommand = "C:\\\\tg \\"x\\"\\u007F"\nargs = []\nenv = { "KEY WITH SPACE" = "é" }\n');
    expect(Bun.TOML.parse(text)).toEqual({ mcp_servers: { a: { command: 'C:\\tg "x"\u007f', args: [], env: { "KEY WITH SPACE": "é" } } } });
  });

  test("a server the agent removed stays removed; keys an agent reordered are each put back", () => {
    const { restoreOwnedKeys } = formatOf("codex");
    const backup = '[mcp_servers]\na = { command = "x" }\nb = { command = "y" }\n';
    const entries = [entry("codex", ["mcp_servers", "a"], "x"), entry("codex", ["mcp_servers", "b"], "y")];
    const { text, owned } = rewrite(backup, entries, shimFor);
    const withoutA = text.replace(/^a = .*\n/m, "");
    expect(restoreOwnedKeys(backup, text, withoutA, owned)).toBe('[mcp_servers]\nb = { command = "y" }\n');
    // Every key of a's inline table is one wrap owns: removing them one at a time, as they overlap.
    const reordered = text.replace(/^a = .*$/m, 'a = { env = { RUN = "r1" }, args = ["shim"], command = "/tg", enabled = false }');
    expect(Bun.TOML.parse(restoreOwnedKeys(backup, text, reordered, owned))).toEqual({ mcp_servers: { a: { command: "x", enabled: false }, b: { command: "y" } } });
  });

  test("a rewrite that no longer matches what was read, or a text that does not parse, is refused", () => {
    const a = entry("codex", ["mcp_servers", "a"], "x");
    expect(() => rewrite('[mcp_servers.a]\ncommand = "other"\n', [a], shimFor)).toThrow('the server "a" changed since it was read');
    expect(() => rewrite("[mcp_servers.a\n", [a], shimFor)).toThrow("/cfg does not parse as TOML (line 2, column 1: Unterminated table-key): not rewritten");
    expect(() => formatOf("codex").restoreOwnedKeys('a = "x"\n', 'a = "y"\n', "a = [\n", [["a"]])).toThrow("cannot put back the entries wrap owns");
  });
});

describe("YAML", () => {
  test.each([
    [
      "a block mapping: new keys before the first one, block values replaced with flow ones",
      "extensions:\n  a:\n    type: stdio\n    cmd: x   # why\n    args:\n    - '1'\n    enabled: false\n",
      'extensions:\n  a:\n    envs: {RUN: "r1"}\n    type: stdio\n    cmd: "/tg"   # why\n    args: ["shim", "--", "x", "1"]\n    enabled: false\n',
    ],
    [
      "a flow mapping",
      "extensions:\n  a: {type: stdio, cmd: x, args: ['1']}\n",
      'extensions:\n  a: {type: stdio, cmd: "/tg", args: ["shim", "--", "x", "1"], envs: {RUN: "r1"}}\n',
    ],
    [
      "envs with keys, args with no value",
      "extensions:\n  a:\n    cmd: x\n    args:\n    envs:\n      K: v\n",
      'extensions:\n  a:\n    cmd: "/tg"\n    args: ["shim", "--", "x"]\n    envs:\n      RUN: "r1"\n      K: v\n',
    ],
    ["CRLF line ends", "extensions:\r\n  a:\r\n    cmd: x\r\n", 'extensions:\r\n  a:\r\n    args: ["shim", "--", "x"]\r\n    envs: {RUN: "r1"}\r\n    cmd: "/tg"\r\n'],
  ])("%s", (_, text, expected) => {
    const args = text.includes("'1'") ? ["1"] : [];
    expect(roundTrip("goose", text, [entry("goose", ["extensions", "a"], "x", args, GOOSE)])).toBe(expected);
  });

  test("a mapping that starts a sequence item gets its new keys at the key's column", () => {
    const text = "servers:\n  - cmd: x\n    type: stdio\n";
    expect(roundTrip("goose", text, [entry("goose", ["servers", 0], "x", [], GOOSE)])).toBe('servers:\n  - args: ["shim", "--", "x"]\n    envs: {RUN: "r1"}\n    cmd: "/tg"\n    type: stdio\n');
  });

  test("keys YAML 1.1 reads as booleans are quoted", () => {
    const { text } = rewrite("extensions:\n  a:\n    cmd: x\n", [entry("goose", ["extensions", "a"], "x", [], GOOSE)], () => ({ command: "/tg", args: [], env: { y: "1", on: "2", OK: "3" } }));
    expect(text).toBe('extensions:\n  a:\n    args: []\n    envs: {"y": "1", "on": "2", OK: "3"}\n    cmd: "/tg"\n');
  });

  test("a key wrap added that the agent moved to the end of the mapping is still cut out cleanly", () => {
    const backup = "extensions:\n  a:\n    cmd: x # the server\n    enabled: true\n";
    const { text, owned } = rewrite(backup, [entry("goose", ["extensions", "a"], "x", [], GOOSE)], shimFor);
    const moved = 'extensions:\n  a:\n    cmd: "/tg" # the server\n    enabled: false\n    args: ["shim"]\n    envs:\n      RUN: r1\n';
    expect(formatOf("goose").restoreOwnedKeys(backup, text, moved, owned)).toBe("extensions:\n  a:\n    cmd: x # the server\n    enabled: false\n");
  });
});

test("the format follows the agent, and for an agent type this build does not know, the file name", () => {
  expect(["codex", "goose", "claude-code", "custom"].map((agent) => formatOf(agent, "/x/settings.yaml").name)).toEqual(["toml", "yaml", "jsonc", "jsonc"]);
  expect(["a.toml", "a.yml", "a.YAML", "a.json"].map((path) => formatOf("some-future-agent", path).name)).toEqual(["toml", "yaml", "yaml", "jsonc"]);
});

test("unwrap after a crash puts back only the owned keys of a TOML config the agent changed, told by the journal's agent type", () => {
  using dir = tempDir();
  const configPath = join(dir.path, "config.toml");
  const backupPath = `${configPath}.thoughtgate-backup`;
  const original = '# mine\n[mcp_servers.a]\ncommand = "x"\n';
  const { text, owned } = rewrite(original, [entry("codex", ["mcp_servers", "a"], "x")], shimFor);
  writeFileSync(backupPath, original);
  writeFileSync(configPath, `${text}\n[projects."/p"]\ntrust_level = "trusted"\n`);
  const plan = planPutBack({ configPath, backupPath, agentType: "codex", rewrittenSha256: sha256OfBytes(Buffer.from(text)), owned });
  expect(plan.kind).toBe("owned-keys");
  expect(plan.restored?.toString()).toBe(`${original}\n[projects."/p"]\ntrust_level = "trusted"\n`);
});
