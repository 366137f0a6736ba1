/**
 * `thoughtgate wrap` never runs an agent ungoverned by surprise, through the compiled binary in a
 * sandboxed home: a config file the user named that cannot be used, an agent file wrap cannot edit,
 * or nothing to govern at all stops wrap (exit 1, one line saying which file and why) before the
 * agent starts, unless the user says `--allow-ungoverned` (then one warning line). Servers turned
 * off in the agent are governed all the same, their off switch kept.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../support/harness.ts";
import { STDIO_SERVERS, wrapSandbox, type Sandbox, type WrapRun } from "../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

/** The agent: it records that it ran, and what the project's .mcp.json said while it did. */
const AGENT = ["sh", "-c", "cat .mcp.json > agent-saw.json 2>/dev/null; echo ran > agent-ran"];
const agentRan = (box: Sandbox) => existsSync(join(box.project, "agent-ran"));

/** `[error]` and `thoughtgate: warning` lines: what wrap says went wrong. */
const complaints = (run: WrapRun) => run.stderr.split("\n").filter((line) => line.startsWith("[error]") || line.startsWith("thoughtgate: warning"));

/** Nothing wrap works with is left beside `dir`'s files (lock, backup, temp files). */
const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.includes("thoughtgate"));

describe("a --config-path that cannot be used is an error naming it", () => {
  const cases = [
    { what: "a file that does not exist", name: "missing.json", content: null, reason: "no such file (given by --config-path)" },
    { what: "an empty file", name: "empty.json", content: "", reason: "is empty (given by --config-path)" },
    { what: "a TOML file given to --agent-type custom", name: "config.toml", content: '[mcp_servers.notes]\ncommand = "node"\n', reason: "does not parse" },
    { what: "a file with no servers", name: "none.json", content: '{ "mcpServers": {} }\n', reason: "holds no MCP servers for custom (given by --config-path)" },
  ];
  for (const { what, name, content, reason } of cases) {
    test(`${what}: exit 1, the path and the reason in one line, the agent not started, the file as it was`, async () => {
      await using box = wrapSandbox();
      const path = join(box.project, name);
      if (content !== null) writeFileSync(path, content);
      const run = await box.run(["wrap", "--agent-type", "custom", "--config-path", name, "--", ...AGENT]);
      expect({ code: run.code, timedOut: run.timedOut }).toEqual({ code: 1, timedOut: false });
      expect(complaints(run)).toEqual([expect.stringContaining(`[error] ${path}: ${reason}`)]);
      expect(agentRan(box)).toBe(false);
      if (content !== null) expect(readFileSync(path, "utf8")).toBe(content);
      expect(leftovers(box.project)).toEqual([]);
    });
  }

  test("--allow-ungoverned does not excuse a named file that cannot be used", async () => {
    await using box = wrapSandbox();
    const run = await box.run(["wrap", "--allow-ungoverned", "--agent-type", "custom", "--config-path", "missing.json", "--", ...AGENT]);
    expect(run.code).toBe(1);
    expect(complaints(run)).toEqual([`[error] ${join(box.project, "missing.json")}: no such file (given by --config-path)`]);
    expect(agentRan(box)).toBe(false);
  });
});

describe("nothing to govern", () => {
  test("only a server the shim cannot speak to (HTTP+SSE): exit 1, and the agent is not started", async () => {
    await using box = wrapSandbox();
    const config = join(box.project, "remote.json");
    writeFileSync(config, '{ "mcpServers": { "docs": { "type": "sse", "url": "https://example.invalid/sse" } } }\n');
    const run = await box.run(["wrap", "--agent-type", "custom", "--config-path", config, "--", ...AGENT]);
    expect(run.code).toBe(1);
    expect(complaints(run)).toEqual([expect.stringContaining("no MCP server of custom can be governed")]);
    expect(complaints(run)[0]).toContain("the agent was not started");
    expect(agentRan(box)).toBe(false);
  });

  test("a server the shim cannot speak to (HTTP+SSE) beside one it governs: exit 1 naming it, the agent not started; --allow-ungoverned warns and runs", async () => {
    await using box = wrapSandbox();
    const config = join(box.project, "mixed.json");
    const mixed = '{ "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] }, "docs": { "type": "sse", "url": "https://example.invalid/sse" } } }\n';
    writeFileSync(config, mixed);
    const refused = await box.run(["wrap", "--agent-type", "custom", "--config-path", config, "--", ...AGENT]);
    expect(refused.code).toBe(1);
    expect(complaints(refused)).toEqual([expect.stringContaining('"docs"')]);
    expect(complaints(refused)[0]).toContain("the agent was not started");
    expect(agentRan(box)).toBe(false);
    expect(readFileSync(config, "utf8")).toBe(mixed);

    const allowed = await box.run(["wrap", "--allow-ungoverned", "--agent-type", "custom", "--config-path", config, "--", ...AGENT]);
    expect(allowed.code).toBe(0);
    expect(complaints(allowed)).toEqual([expect.stringMatching(/^thoughtgate: warning: --allow-ungoverned: .*"docs"/)]);
    expect(agentRan(box)).toBe(true);
  });

  test("an agent with no MCP config at all: exit 1; with --allow-ungoverned, one warning line and the agent runs", async () => {
    await using box = wrapSandbox();
    const refused = await box.run(["wrap", "--agent-type", "claude-code", "--", ...AGENT]);
    expect(refused.code).toBe(1);
    expect(complaints(refused)).toEqual([expect.stringContaining("no MCP server of claude-code can be governed")]);
    expect(complaints(refused)[0]).toContain("pass --allow-ungoverned to run it anyway");
    expect(agentRan(box)).toBe(false);

    const allowed = await box.run(["wrap", "--allow-ungoverned", "--agent-type", "claude-code", "--", ...AGENT]);
    expect(allowed.code).toBe(0);
    expect(complaints(allowed)).toEqual(["thoughtgate: warning: --allow-ungoverned: no MCP server of claude-code can be governed (see the table above)"]);
    expect(agentRan(box)).toBe(true);
  });
});

describe("an agent file wrap cannot edit would leave its servers ungoverned", () => {
  const brokenUserConfig = (box: Sandbox) => {
    writeFileSync(join(box.home, ".claude.json"), '{ "mcpServers": { "mail": { "command": "node", "args": ["mail.js"] }, }\n');
    writeFileSync(join(box.project, ".mcp.json"), STDIO_SERVERS);
  };

  test("a user config that does not parse, beside a good project one: exit 1 naming it, the agent not started", async () => {
    await using box = wrapSandbox();
    brokenUserConfig(box);
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--", ...AGENT]);
    expect(run.code).toBe(1);
    expect(complaints(run)).toEqual([expect.stringContaining(`${join(box.home, ".claude.json")} does not parse`)]);
    expect(complaints(run)[0]).toContain("its MCP servers would run ungoverned");
    expect(agentRan(box)).toBe(false);
    expect(readFileSync(join(box.project, ".mcp.json"), "utf8")).toBe(STDIO_SERVERS);
  });

  test("with --allow-ungoverned: one warning line, the good file governed while the agent runs, then put back", async () => {
    await using box = wrapSandbox();
    brokenUserConfig(box);
    const run = await box.run(["wrap", "--allow-ungoverned", "--agent-type", "claude-code", "--", ...AGENT]);
    expect(run.code).toBe(0);
    expect(complaints(run)).toEqual([expect.stringMatching(/^thoughtgate: warning: --allow-ungoverned: .*\.claude\.json does not parse .*: its MCP servers would run ungoverned$/)]);
    expect(readFileSync(join(box.project, "agent-saw.json"), "utf8")).toContain('"shim"');
    expect(readFileSync(join(box.project, ".mcp.json"), "utf8")).toBe(STDIO_SERVERS);
  });
});

describe("servers turned off in the agent are governed, their switch kept", () => {
  test("Windsurf with every server disabled: each is rewritten to run through the shim and stays disabled", async () => {
    await using box = wrapSandbox();
    const dir = join(box.home, ".codeium", "windsurf");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "mcp_config.json"),
      '{ "mcpServers": {\n  "notes": { "command": "node", "args": ["notes.js"], "disabled": true },\n  "mail": { "command": "node", "args": ["mail.js"], "disabled": true }\n} }\n',
    );
    const run = await box.run(["wrap", "--dry-run", "--agent-type", "windsurf", "--", "windsurf"]);
    expect(run.code).toBe(0);
    expect(complaints(run)).toEqual([]);
    const added = run.stdout.split("\n").filter((line) => line.startsWith("+") && !line.startsWith("+++"));
    for (const name of ["notes", "mail"]) {
      const entry = added.find((line) => line.includes(`"${name}"`)) ?? "";
      expect(entry).toContain('"shim"');
      expect(entry).toContain('"disabled": true');
    }
  });
});
