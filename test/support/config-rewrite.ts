/**
 * A small hand-written JSONC agent config and a stand-in for an adapter's rewrite (jsonc-parser
 * `modify`), for the config-guard tests: they need a rewrite, not a particular agent's.
 */
import { afterEach, beforeEach } from "bun:test";
import { applyEdits, modify, type JSONPath } from "jsonc-parser";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./harness.ts";

export const SAMPLE_JSONC = `{
  // Servers I use every day
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"], // pinned by hand
      "env": { "GITHUB_TOKEN": "\${GITHUB_TOKEN}" },
    },
    "remote": { "url": "https://example.com/mcp" },
    "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/ünïcode"] },
  },
  "theme": "dark",
}
`;

/** Route every stdio server in `mcpServers` through a shim; returns the owned paths as an adapter would. */
export function rewriteSample(text: string, servers = ["github", "files"]): { text: string; owned: JSONPath[] } {
  let out = text;
  const owned: JSONPath[] = [];
  for (const id of servers) {
    const path = ["mcpServers", id];
    out = applyEdits(out, modify(out, path, { command: "/opt/thoughtgate/bin/thoughtgate", args: ["shim", "--server-id", id, "--", "npx"] }, { formattingOptions: { insertSpaces: true, tabSize: 2 } }));
    owned.push(path);
  }
  return { text: out, owned };
}

/** What "the agent" does during a session: its own edit, outside the entries wrap owns. */
export function agentEdit(text: string): string {
  const themed = applyEdits(text, modify(text, ["theme"], "light", {}));
  return applyEdits(themed, modify(themed, ["mcpServers", "added-by-agent"], { command: "my-server" }, { formattingOptions: { insertSpaces: true, tabSize: 2 } }));
}

/**
 * For each test: a temp dir with a fresh copy of SAMPLE_JSONC and its own wrap journal
 * (XDG_STATE_HOME in the dir, so fixtures spawned with process.env and the binary share it).
 */
export function useSampleConfig(): { readonly dir: string; readonly config: string } {
  let dir: ReturnType<typeof tempDir> | undefined;
  let config = "";
  const before = process.env.XDG_STATE_HOME;
  beforeEach(() => {
    dir = tempDir();
    process.env.XDG_STATE_HOME = join(dir.path, "state");
    config = join(dir.path, "settings.json");
    writeFileSync(config, SAMPLE_JSONC);
  });
  // The test run's own state directory again: later files' binaries must not inherit a removed one.
  afterEach(() => {
    dir?.[Symbol.dispose]();
    if (before === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = before;
  });
  return {
    get dir() {
      return dir?.path ?? "";
    },
    get config() {
      return config;
    },
  };
}
