/**
 * Places agents read MCP servers from beyond their main server maps: Gemini CLI's and Qwen Code's
 * `mcp.serverCommand` (one command line, its server named "mcp"), Kiro's custom agent files.
 * Each is an entry wrap rewrites and recognises once rewritten.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discover, rewrite, type AgentContext, type AgentType } from "../../src/wrap/adapters/index.ts";
import { quoteCommandLine, splitCommandLine } from "../../src/wrap/adapters/command-line.ts";
import { formatOf } from "../../src/wrap/formats/index.ts";
import { markOwnShims, serverIds, shimCommandFor } from "../../src/wrap/shim-entry.ts";
import { fileIdentity } from "../../src/wrap/shim-path.ts";
import { tempDir } from "../support/harness.ts";

function home() {
  const dir = tempDir();
  const project = join(dir.path, "project");
  mkdirSync(project);
  const shim = join(dir.path, "bin", "thoughtgate");
  mkdirSync(join(dir.path, "bin"));
  writeFileSync(shim, "#!/bin/sh\n");
  chmodSync(shim, 0o755);
  const ctx: AgentContext = { home: dir.path, cwd: project, env: { HOME: dir.path, PORT: "8080" }, platform: "linux" };
  return { dir, project, shim, ctx };
}

function write(path: string, text: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** Rewrite every file of `agent` as wrap does; then read them again, own shims marked. */
function wrapOnce(agent: AgentType, h: ReturnType<typeof home>) {
  const files = discover(agent, h.ctx);
  const ids = serverIds(files);
  const rewritten = files.filter((file) => file.entries.some((e) => e.governed)).map((file) => ({ file, ...rewrite(file.text, file.entries, (entry) => shimCommandFor(h.shim, ids.get(entry) ?? "", entry)) }));
  for (const { file, text } of rewritten) writeFileSync(file.path, text);
  const again = discover(agent, h.ctx);
  markOwnShims(again, new Set([fileIdentity(statSync(h.shim))]), serverIds(again), h.ctx);
  return { files, rewritten, again };
}

describe("Gemini CLI and Qwen Code: mcp.serverCommand", () => {
  for (const agent of ["gemini", "qwen"] as const) {
    test(`${agent}: the command line is the server "mcp", governed; rewritten with the shim in front; recognised afterwards; put back exactly`, () => {
      const h = home();
      using _ = h.dir;
      const dir = agent === "gemini" ? ".gemini" : ".qwen";
      const original = `{\n  // mine\n  "mcp": { "serverCommand": "node 'my server.js' --port $PORT" },\n  "mcpServers": { "mcp": { "command": "other" }, "notes": { "command": "node" } }\n}\n`;
      const path = write(join(h.project, dir, "settings.json"), original);
      const { files, rewritten, again } = wrapOnce(agent, h);
      const entries = files[0]?.entries ?? [];
      expect(entries.map((e) => [e.name, e.status, e.effective?.command, e.effective?.args, e.shadowedBy?.scope])).toEqual([
        ["mcp", "governed", "node", ["my server.js", "--port", "8080"], undefined],
        ["mcp", "governed", "other", [], "project"],
        ["notes", "governed", "node", [], undefined],
      ]);
      const text = rewritten[0]?.text ?? "";
      expect(text).toContain(`"serverCommand": "${h.shim} shim --server-id mcp -- node 'my server.js' --port $PORT"`);
      expect(again[0]?.entries.map((e) => [e.name, e.status])).toEqual([["mcp", "wrapped"], ["mcp", "wrapped"], ["notes", "wrapped"]]);
      const owned = rewritten[0]?.owned ?? [];
      expect(owned).toContainEqual(["mcp", "serverCommand"]);
      expect(formatOf(agent, path).restoreOwnedKeys(original, text, `${text.trimEnd()}\n`, owned)).toBe(original);
    });
  }

  test("qwen: a first-version file's top-level mcpServerCommand, which Qwen Code moves on start, is a problem of the file", () => {
    const h = home();
    using _ = h.dir;
    write(join(h.dir.path, ".qwen", "settings.json"), '{ "mcpServerCommand": "node evil.js", "mcpServers": { "a": { "command": "x" } } }');
    const user = discover("qwen", h.ctx).find((file) => file.scope === "user");
    expect(user?.problems).toEqual([expect.stringContaining("has a top-level mcpServerCommand")]);
    expect(user?.entries.map((e) => e.status)).toEqual(["file-problem"]);
  });
});

describe("Kiro: custom agent files", () => {
  test("each agent file's mcpServers are governed, in the workspace and in the home directory", () => {
    const h = home();
    using _ = h.dir;
    write(join(h.project, ".kiro", "agents", "reviewer.json"), '{ "name": "reviewer", "mcpServers": { "git": { "command": "uvx", "args": ["mcp-server-git"] } } }');
    write(join(h.dir.path, ".kiro", "agents", "mine.json"), '{ "name": "mine", "includeMcpJson": false, "mcpServers": { "fs": { "command": "npx", "args": ["fs"] } } }');
    write(join(h.dir.path, ".kiro", "agents", "plain.json"), '{ "name": "plain" }');
    const { files, again } = wrapOnce("kiro", h);
    expect(files.flatMap((file) => file.entries).map((e) => `${e.scope} ${e.name} ${e.status} ${e.file.split("/").slice(-2).join("/")}`)).toEqual(["project git governed agents/reviewer.json", "user fs governed agents/mine.json"]);
    expect(again.flatMap((file) => file.entries).map((e) => e.status)).toEqual(["wrapped", "wrapped"]);
  });
});

describe("a command line as one string", () => {
  test.each([
    ["node server.js", ["node", "server.js"]],
    ["node 'a b' \"c $PORT\" d\\ e ${PORT}", ["node", "a b", "c 8080", "d e", "8080"]],
    ["npx -y pkg | tee log", null],
    ["node *.js", null],
    ["node 'unclosed", null],
  ])("%s", (text, words) => {
    expect(splitCommandLine(text, { PORT: "8080" })).toEqual(words);
  });

  test("quoted words read back exactly, whatever they hold", () => {
    const words = ["/Users/me/Library/Application Support/thoughtgate", "shim", "--server-id", "it's $HOME", "--"];
    expect(splitCommandLine(quoteCommandLine(words), { HOME: "/nope" })).toEqual(words);
  });
});
