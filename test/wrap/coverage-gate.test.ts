/**
 * The coverage gate wrap applies before the agent starts (src/wrap/coverage-gate.ts), on real
 * Claude Code config files read by the adapter: the exact line a user is stopped with, or warned
 * with under --allow-ungoverned. (test/e2e/wrap-coverage.test.ts drives the same through the binary.)
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ThoughtGateError } from "../../src/core/errors.ts";
import { discover, type AgentContext } from "../../src/wrap/adapters/index.ts";
import { checkCoverage } from "../../src/wrap/coverage-gate.ts";

let root = "";
let ctx: AgentContext;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "thoughtgate-coverage-"));
  const home = join(root, "home");
  const project = join(home, "project");
  mkdirSync(project, { recursive: true });
  ctx = { home, cwd: project, env: { HOME: home }, platform: "linux" };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const STDIO = { command: "node", args: ["server.js"] };
const SSE = (url: string) => ({ type: "sse", url });

function writeProject(servers: Record<string, unknown>, name = ".mcp.json"): string {
  const path = join(ctx.cwd, name);
  writeFileSync(path, JSON.stringify({ mcpServers: servers }));
  return path;
}

/** What the gate says: null (run), the warning line (run, warned), or the error's line (not run). */
function gate(options: { configPath?: string; allowUngoverned?: boolean } = {}): string | null {
  const files = discover("claude-code", ctx, options.configPath === undefined ? {} : { configPath: options.configPath });
  try {
    return checkCoverage(files, { agent: "claude-code", configPath: options.configPath, allowUngoverned: options.allowUngoverned === true });
  } catch (error) {
    if (!(error instanceof ThoughtGateError)) throw error;
    expect(error.code).toBe("CONFIG");
    return `error: ${error.message}`;
  }
}

test("every server governed: the agent runs, nothing said", () => {
  writeProject({ fs: STDIO, memory: STDIO });
  expect(gate()).toBeNull();
});

test("an HTTP+SSE server beside a governed stdio one stops the agent, named; --allow-ungoverned runs it with the same reason as a warning", () => {
  writeProject({ fs: STDIO, linear: SSE("https://mcp.example/sse") });
  const reason = 'the remote server "linear" would run ungoverned (see the table above)';
  expect(gate()).toBe(`error: ${reason}; the agent was not started (fix it, or pass --allow-ungoverned to run it anyway)`);
  expect(gate({ allowUngoverned: true })).toBe(`thoughtgate: warning: --allow-ungoverned: ${reason}`);
});

test("several remote servers are named together; one the config turns off, or one another scope's entry shadows, is not reached and not named", () => {
  writeProject({ fs: STDIO, a: SSE("https://a.example/sse"), b: SSE("https://b.example/sse"), off: SSE("https://c.example/sse"), dup: STDIO });
  mkdirSync(join(ctx.cwd, ".claude"));
  writeFileSync(join(ctx.cwd, ".claude", "settings.local.json"), JSON.stringify({ disabledMcpjsonServers: ["off"] }));
  writeFileSync(join(ctx.home, ".claude.json"), JSON.stringify({ mcpServers: { dup: SSE("https://d.example/sse") } }));
  expect(gate({ allowUngoverned: true })).toBe('thoughtgate: warning: --allow-ungoverned: the remote servers "a", "b" would run ungoverned (see the table above)');
});

test("no server to govern at all stops the agent; with only a remote one both reasons are given", () => {
  expect(gate()).toBe("error: no MCP server of claude-code can be governed (see the table above); the agent was not started (fix it, or pass --allow-ungoverned to run it anyway)");
  writeProject({ linear: SSE("https://mcp.example/sse") });
  expect(gate({ allowUngoverned: true })).toBe(
    'thoughtgate: warning: --allow-ungoverned: the remote server "linear" would run ungoverned (see the table above); no MCP server of claude-code can be governed (see the table above)',
  );
});

test("a config file wrap cannot edit leaves its servers ungoverned: named with its problem, even beside governed servers", () => {
  writeFileSync(join(ctx.home, ".claude.json"), JSON.stringify({ mcpServers: { fs: STDIO } }));
  writeFileSync(join(ctx.cwd, ".mcp.json"), '{"mcpServers": {"x": ');
  const said = gate();
  expect(said).toStartWith(`error: ${join(ctx.cwd, ".mcp.json")} `);
  expect(said).toContain(": its MCP servers would run ungoverned; the agent was not started");
  expect(gate({ allowUngoverned: true })).toStartWith(`thoughtgate: warning: --allow-ungoverned: ${join(ctx.cwd, ".mcp.json")} `);
});

test("--config-path names a file that cannot be used: missing, empty, or without servers, whatever --allow-ungoverned says", () => {
  const missing = join(ctx.cwd, "missing.json");
  expect(gate({ configPath: missing, allowUngoverned: true })).toBe(`error: ${missing}: no such file (given by --config-path)`);
  const empty = join(ctx.cwd, "empty.json");
  writeFileSync(empty, "  \n");
  expect(gate({ configPath: empty, allowUngoverned: true })).toBe(`error: ${empty}: is empty (given by --config-path)`);
  const none = writeProject({}, "none.json");
  expect(gate({ configPath: none, allowUngoverned: true })).toBe(`error: ${none}: holds no MCP servers for claude-code (given by --config-path)`);
  const good = writeProject({ fs: STDIO }, "good.json");
  expect(gate({ configPath: good })).toBeNull();
});
