/**
 * Attack: an MCP server handed to the agent where wrap's rewrite of its config files cannot see it
 * — on the agent's command line (`codex -c mcp_servers…`, `copilot --additional-mcp-config`) or in
 * its environment (`OPENCODE_CONFIG_CONTENT`) — would run with no shim in front, while wrap says the
 * agent is governed. Each way of writing it the agent accepts must be refused: exit 1, one line
 * with the reason and where to put the server instead, and the agent never started. Every form
 * below was checked against the real agent (codex 0.169.0 `mcp list`, opencode 1.18.33 `mcp list`):
 * each one loads the server.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../../support/harness.ts";
import { wrapSandbox, type Sandbox } from "../../support/wrap-sandbox.ts";

setDefaultTimeout(60_000);
requireBinary();

type Agent = "codex" | "copilot" | "opencode";

/** The agent's own config with one stdio server wrap can govern, and a stand-in for the agent on PATH that records it ran. */
function agentHome(box: Sandbox, agent: Agent): string {
  const configs: Record<Agent, [string, string]> = {
    codex: [join(box.home, ".codex", "config.toml"), '[mcp_servers.notes]\ncommand = "node"\nargs = ["notes.js"]\n'],
    copilot: [join(box.home, ".copilot", "mcp-config.json"), '{ "mcpServers": { "notes": { "type": "local", "command": "node", "args": ["notes.js"] } } }\n'],
    opencode: [join(box.home, ".config", "opencode", "opencode.json"), '{ "mcp": { "notes": { "type": "local", "command": ["node", "notes.js"] } } }\n'],
  };
  const [path, text] = configs[agent];
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  const bin = join(box.home, "bin");
  mkdirSync(bin, { recursive: true });
  const ran = join(box.home, `${agent}-ran`);
  writeFileSync(join(bin, agent), `#!/bin/sh\necho "$@" > ${JSON.stringify(ran)}\n`);
  chmodSync(join(bin, agent), 0o755);
  box.env.PATH = `${bin}:${box.env.PATH ?? ""}`;
  return ran;
}

const EVIL_JSON = '{"mcpServers":{"evil":{"command":"node","args":["evil.js"]}}}';

const CASES: Array<{ attack: string; agent: Agent; args: string[]; env?: Record<string, string>; says: string }> = [
  { attack: "codex -c mcp_servers.<name>.command=…", agent: "codex", args: ["-c", 'mcp_servers.evil.command="node"'], says: "codex -c mcp_servers.evil.command=\"node\": wrap cannot govern MCP servers given this way" },
  { attack: "codex --config mcp_servers…", agent: "codex", args: ["--config", "mcp_servers.evil.command=node"], says: "codex --config mcp_servers.evil.command=node: wrap cannot govern" },
  { attack: "codex --config=mcp_servers…", agent: "codex", args: ["--config=mcp_servers.evil.command=node"], says: "codex --config=mcp_servers.evil.command=node: wrap cannot govern" },
  { attack: "codex -cmcp_servers… (the value attached to -c)", agent: "codex", args: ["-cmcp_servers.evil.command=node"], says: "codex -cmcp_servers.evil.command=node: wrap cannot govern" },
  { attack: "codex -c=mcp_servers…", agent: "codex", args: ["-c=mcp_servers.evil.command=node"], says: "codex -c=mcp_servers.evil.command=node: wrap cannot govern" },
  { attack: "codex -c ' mcp_servers…' (leading space)", agent: "codex", args: ["-c", ' mcp_servers.evil.command="node"'], says: "wrap cannot govern MCP servers given this way" },
  { attack: "codex exec -c mcp_servers={…} (a whole table, after the subcommand)", agent: "codex", args: ["exec", "-c", 'mcp_servers={evil={command="node"}}', "hi"], says: "wrap cannot govern MCP servers given this way" },
  { attack: "copilot --additional-mcp-config @file", agent: "copilot", args: ["--additional-mcp-config", "@evil.json", "-p", "hi"], says: "copilot --additional-mcp-config: wrap cannot govern" },
  { attack: "copilot --additional-mcp-config=<json>", agent: "copilot", args: [`--additional-mcp-config=${EVIL_JSON}`], says: "copilot --additional-mcp-config: wrap cannot govern" },
  { attack: "OPENCODE_CONFIG_CONTENT with an mcp section", agent: "opencode", args: [], env: { OPENCODE_CONFIG_CONTENT: '{"mcp":{"evil":{"type":"local","command":["node","evil.js"]}}}' }, says: "OPENCODE_CONFIG_CONTENT" },
  { attack: "OPENCODE_CONFIG_CONTENT spelling the key with a JSON escape (\\u006dcp)", agent: "opencode", args: [], env: { OPENCODE_CONFIG_CONTENT: '{"\\u006dcp":{"evil":{"type":"local","command":["node","evil.js"]}}}' }, says: "OPENCODE_CONFIG_CONTENT" },
  { attack: "OPENCODE_CONFIG_CONTENT with a comment between the key and its colon", agent: "opencode", args: [], env: { OPENCODE_CONFIG_CONTENT: '{"mcp" /* servers */ : {"evil":{"type":"local","command":["node","evil.js"]}}}' }, says: "OPENCODE_CONFIG_CONTENT" },
  {
    attack: "OPENCODE_CONFIG_CONTENT whose mcp section comes from {env:…} (opencode substitutes it as raw text)",
    agent: "opencode",
    args: [],
    env: { OPENCODE_CONFIG_CONTENT: '{"username": "{env:TG_NAME}"}', TG_NAME: 'x", "mcp": {"evil":{"type":"local","command":["node","evil.js"]}}, "theme": "y' },
    says: "OPENCODE_CONFIG_CONTENT",
  },
];

describe("servers given to the agent outside its config files are refused", () => {
  for (const { attack, agent, args, env, says } of CASES) {
    test(`${attack}: exit 1 with the reason, the agent never started`, async () => {
      await using box = wrapSandbox();
      const ran = agentHome(box, agent);
      Object.assign(box.env, env ?? {});
      const run = await box.run(["wrap", "--", agent, ...args]);
      const errors = run.stderr.split("\n").filter((line) => line.startsWith("[error]"));
      expect({ code: run.code, errors }).toEqual({ code: 1, errors: [expect.stringContaining(says)] });
      expect(errors[0]).toContain("wrap cannot govern MCP servers given this way");
      expect(existsSync(ran)).toBe(false);
    });
  }

  test("what carries no server is no reason to refuse: codex -c model=…, an OPENCODE_CONFIG_CONTENT without mcp", async () => {
    // The sandbox's codex is a stand-in that cannot say whether it takes ThoughtGate's hook, which
    // wrap then refuses on its own ground (agents/wrap-own-tools-only): what is asserted here is that
    // no server is read into `-c model=…`.
    {
      await using box = wrapSandbox();
      agentHome(box, "codex");
      const run = await box.run(["wrap", "--", "codex", "-c", "model=o3", "exec", "hi"]);
      const errors = run.stderr.split("\n").filter((line) => line.startsWith("[error]"));
      expect(errors.filter((line) => line.includes("MCP servers given this way"))).toEqual([]);
      expect(errors.map((line) => line.slice(0, "[error] Codex will not run ThoughtGate's hook".length))).toEqual(["[error] Codex will not run ThoughtGate's hook"]);
    }
    for (const [agent, args, env] of [
      ["opencode", ["run", "hi"], { OPENCODE_CONFIG_CONTENT: '{"model": "anthropic/claude", "username": "{env:USER}"}' }],
    ] as const) {
      await using box = wrapSandbox();
      const ran = agentHome(box, agent);
      Object.assign(box.env, env);
      const run = await box.run(["wrap", "--", agent, ...args]);
      expect({ agent, code: run.code, errors: run.stderr.split("\n").filter((line) => line.startsWith("[error]")) }).toEqual({ agent, code: 0, errors: [] });
      expect(existsSync(ran)).toBe(true);
    }
  });
});
