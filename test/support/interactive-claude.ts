/**
 * The real Claude Code, interactive (no `-p`), as a person meets it: in a terminal (tmux.ts),
 * against the loopback fake Anthropic API, with its first-run questions already answered in its
 * own config the way Claude Code records a person's answers (read from its bundled code, 2.1.330):
 * onboarding done (`hasCompletedOnboarding`, `lastOnboardingVersion`, `theme`), the API key in
 * `ANTHROPIC_API_KEY` accepted (`customApiKeyResponses.approved` holds its last 20 characters), the
 * project's trust dialog accepted (`projects[<dir>].hasTrustDialogAccepted`). Its permission mode
 * is `default` and its newer "auto" mode off (~/.claude/settings.json, `disableAutoMode`, which
 * also keeps it from offering auto mode at start): it asks "Do you want to proceed?" about each MCP
 * tool it was not told to allow, as it has long done (auto mode asks Anthropic's servers about
 * each call, which a loopback fake cannot answer).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentBinary, type AgentSandbox, type McpServer } from "./agents.ts";
import type { FakeModel } from "./fake-models/fake-model.ts";
import { readEvents, waitFor } from "./harness.ts";

const API_KEY = "sk-ant-thoughtgate-interactive-test";

/** Write Claude Code's user config (MCP servers in the user scope) and settings; the command and environment to start it. */
export function interactiveClaude(sandbox: AgentSandbox, model: FakeModel, servers: Record<string, McpServer>): { argv: string[]; env: Record<string, string> } {
  writeFileSync(
    join(sandbox.home, ".claude.json"),
    `${JSON.stringify(
      {
        hasCompletedOnboarding: true,
        lastOnboardingVersion: "2.1.330",
        theme: "dark",
        customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
        projects: { [sandbox.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
        mcpServers: servers,
      },
      null,
      2,
    )}\n`,
  );
  mkdirSync(join(sandbox.home, ".claude"), { recursive: true });
  writeFileSync(join(sandbox.home, ".claude", "settings.json"), `${JSON.stringify({ permissions: { defaultMode: "default", disableAutoMode: "disable" } })}\n`);
  const { NO_COLOR: _plain, ...env } = sandbox.env;
  return {
    argv: [agentBinary("claude-code")],
    env: {
      ...env,
      TERM: "xterm-256color",
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: API_KEY,
      ENABLE_TOOL_SEARCH: "false",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      THOUGHTGATE_DESKTOP_NOTIFY: "off",
    },
  };
}

/** The session records wrap wrote under this HOME, newest last. */
export function sessionRecords(sandbox: AgentSandbox): string[] {
  const sessions = join(sandbox.home, ".local", "state", "thoughtgate", "sessions");
  if (!existsSync(sessions)) return [];
  return [...new Bun.Glob("*/events.jsonl").scanSync({ cwd: sessions })].sort().map((path) => join(sessions, path));
}

/** Events of one type from every session record under this HOME. */
export function sessionEvents(sandbox: AgentSandbox, type: string): Array<Record<string, unknown>> {
  return sessionRecords(sandbox).flatMap((path) => readEvents(path).filter((event) => event.type === type));
}

/** Wait until Claude Code has listed `server`'s tools through the shim (so the model is offered them). */
export async function toolsListed(sandbox: AgentSandbox, count: number): Promise<void> {
  await waitFor(() => sessionEvents(sandbox, "list_result").filter((e) => e.method === "tools/list").length >= count, "Claude Code to list the MCP server's tools", 60_000);
}

/** The user's policy file in the sandbox (what "always allow" writes). */
export function userPolicy(sandbox: AgentSandbox): string {
  try {
    return readFileSync(join(sandbox.home, ".config", "thoughtgate", "thoughtgate.yaml"), "utf8");
  } catch {
    return "";
  }
}

/**
 * A person's pace between keys on Claude Code's form: it ignores an Enter that comes within 150 ms
 * of the focus arriving on Accept, or within 600 ms of typing (its bundled code, 2.1.330: guards
 * against a keypress meant for something else). The pause is the behaviour under test, not a wait.
 */
export function personsPace(): Promise<void> {
  return Bun.sleep(700);
}
