/**
 * The real interactive Claude Code (its TUI, no `-p`) for tmux tests (test/support/tmux.ts),
 * against the loopback fake Anthropic API, with nothing asked before its prompt:
 *
 * - onboarding done (`hasCompletedOnboarding`, a `theme`) and the project trusted
 *   (`projects[<dir>].hasTrustDialogAccepted`), as its own messages name them;
 * - the API key approved: `customApiKeyResponses.approved` holds the key's last 20 characters
 *   (what Claude Code 2.1.330's bundle compares: `e.trim().slice(-20)`);
 * - `--permission-mode default`: its newer default, auto mode, sends each action to a server-side
 *   check a loopback API does not pass on, and stops the turn to say so;
 * - MCP servers from `--mcp-config FILE --strict-mcp-config` (a config wrap rewrites for the run),
 *   and the tools a test names allowed (`--allowedTools`), so the only question is ThoughtGate's.
 *
 * Its MCP servers connect in the background after the prompt appears: `waitForServer` opens
 * `/mcp` and waits until the server shows connected (✔) before a test types its prompt.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, type AgentSandbox, type McpServer } from "./agents.ts";
import type { FakeModel } from "./fake-models/fake-model.ts";
import type { Tmux } from "./tmux.ts";

const API_KEY = "sk-ant-thoughtgate-test";

export type ClaudeTui = { argv: string[]; env: Record<string, string> };

export function claudeTui(sandbox: AgentSandbox, options: { model: FakeModel; servers: Record<string, McpServer>; allowedTools: string[] }): ClaudeTui {
  writeFileSync(
    join(sandbox.home, ".claude.json"),
    `${JSON.stringify(
      {
        hasCompletedOnboarding: true,
        theme: "dark",
        customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
        projects: { [sandbox.project]: { hasTrustDialogAccepted: true } },
      },
      null,
      2,
    )}\n`,
  );
  const mcpConfig = join(sandbox.root, "claude-mcp.json");
  writeFileSync(mcpConfig, `${JSON.stringify({ mcpServers: options.servers }, null, 2)}\n`);
  return {
    argv: [agentBinary("claude-code"), "--permission-mode", "default", "--allowedTools", ...options.allowedTools, "--mcp-config", mcpConfig, "--strict-mcp-config"],
    env: {
      ...sandbox.env,
      TERM: "xterm-256color",
      ANTHROPIC_BASE_URL: options.model.url,
      ANTHROPIC_API_KEY: API_KEY,
      ENABLE_TOOL_SEARCH: "false",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    },
  };
}

/** The prompt is up: Claude Code's input line. */
export const PROMPT = "❯";

/** Open `/mcp`, wait until `server` shows connected, close it again. */
export async function waitForServer(tty: Tmux, server: string): Promise<void> {
  tty.type("/mcp");
  await tty.waitForScreen("/mcp");
  tty.press("Enter");
  await tty.waitForScreen(new RegExp(`✔ ${server}\\b`));
  tty.press("Escape");
  await tty.waitForScreen(/⏸ manual mode on/);
}
