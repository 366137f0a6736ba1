/**
 * `thoughtgate unenroll` after the user changed a server enroll had rewritten, through the compiled
 * binary, in each format an enrollable agent keeps its servers in: Claude Code (~/.claude.json,
 * JSON), Codex (~/.codex/config.toml, TOML) and opencode (~/.config/opencode/opencode.json). The
 * user re-adds `gh` as another command after enrolling; unenroll must keep it as they made it (a
 * key that no longer holds what enroll wrote is theirs), say so, and still put back the server
 * they left alone.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { requireBinary, tempDir } from "../support/harness.ts";

const dir = tempDir("thoughtgate-unenroll-");
afterAll(() => dir[Symbol.dispose]());

type Case = {
  agent: "claude-code" | "codex" | "opencode";
  file: string;
  original: string;
  /** The config as the user leaves it: `gh` re-added as new-server.mjs --fixed, everything else as enroll left it. */
  readd: (enrolled: string) => string;
  /** What unenroll must leave: `gh` as the user made it, `fs` as it was before enroll. */
  expected: string;
};

const JSON_ORIGINAL = `{
  "mcpServers": {
    "gh": { "command": "node", "args": ["old-server.mjs"], "env": { "A": "1" } },
    "fs": { "command": "node", "args": ["fs-server.mjs"] }
  }
}
`;
const OPENCODE_ORIGINAL = `{
  "mcp": {
    "gh": { "type": "local", "command": ["node", "old-server.mjs"] },
    "fs": { "type": "local", "command": ["node", "fs-server.mjs"] }
  }
}
`;
const TOML_ORIGINAL = `[mcp_servers.gh]
command = "node"
args = ["old-server.mjs"]

[mcp_servers.fs]
command = "node"
args = ["fs-server.mjs"]
`;

const CASES: Case[] = [
  {
    agent: "claude-code",
    file: ".claude.json",
    original: JSON_ORIGINAL,
    readd: (text) => text.replace(/"gh": \{[^\n]*\},\n/, `"gh": { "command": "node", "args": ["new-server.mjs", "--fixed"], "env": { "B": "2" } },\n`),
    expected: JSON_ORIGINAL.replace(`"gh": { "command": "node", "args": ["old-server.mjs"], "env": { "A": "1" } }`, `"gh": { "command": "node", "args": ["new-server.mjs", "--fixed"], "env": { "B": "2" } }`),
  },
  {
    agent: "codex",
    file: ".codex/config.toml",
    original: TOML_ORIGINAL,
    readd: (text) => text.replace(/\[mcp_servers\.gh\]\ncommand = [^\n]*\nargs = [^\n]*\n/, `[mcp_servers.gh]\ncommand = "node"\nargs = ["new-server.mjs", "--fixed"]\n`),
    expected: TOML_ORIGINAL.replace(`args = ["old-server.mjs"]`, `args = ["new-server.mjs", "--fixed"]`),
  },
  {
    agent: "opencode",
    file: ".config/opencode/opencode.json",
    original: OPENCODE_ORIGINAL,
    readd: (text) => text.replace(/"gh": \{[^\n]*\},\n/, `"gh": { "type": "local", "command": ["node", "new-server.mjs", "--fixed"] },\n`),
    expected: OPENCODE_ORIGINAL.replace(`"command": ["node", "old-server.mjs"]`, `"command": ["node", "new-server.mjs", "--fixed"]`),
  },
];

function thoughtgate(home: string, ...args: string[]) {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".local", "state") };
  const run = Bun.spawnSync([requireBinary(), ...args], { cwd: home, env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

describe("unenroll keeps a server the user changed since enroll", () => {
  for (const c of CASES) {
    test(`${c.agent}: gh re-added as another command stays so, and is reported; fs is put back`, () => {
      const home = join(dir.path, c.agent);
      const config = join(home, c.file);
      mkdirSync(dirname(config), { recursive: true });
      writeFileSync(config, c.original);
      const enrolled = thoughtgate(home, "enroll", c.agent);
      expect(enrolled.code, enrolled.stderr).toBe(0);
      const rewritten = readFileSync(config, "utf8");
      expect(rewritten).toContain("old-server.mjs");
      expect(rewritten).toContain("--server-id");

      const changed = c.readd(rewritten);
      expect(changed).toContain("new-server.mjs");
      writeFileSync(config, changed);

      const back = thoughtgate(home, "unenroll", c.agent);
      expect(readFileSync(config, "utf8")).toBe(c.expected);
      // Claude Code's and Codex's own-tools hook went into a file enroll made for it (enrolled-hooks.ts): it goes again.
      const hookFile = { "claude-code": join(home, ".claude", "settings.json"), codex: join(home, ".codex", "hooks.json") }[c.agent as string];
      const removed = hookFile === undefined ? [] : [`${c.agent}: removed ${hookFile} (enroll made it for the hook)`];
      // opencode's enrollment wrote its plugin, which unenroll removes.
      if (c.agent === "opencode") removed.push(`opencode: removed ${join(home, ".config", "opencode", "plugins", "thoughtgate.js")} (ThoughtGate's plugin)`);
      expect({ code: back.code, stdout: back.stdout.split("\n").sort(), stderr: back.stderr }).toEqual({
        code: 0,
        stdout: [`${c.agent}: restored ${config} (kept the agent's own changes; kept gh's ${c.agent === "opencode" ? "command" : "command, args"} as you changed them since ThoughtGate rewrote them (not put back to the pre-rewrite values))`, ...removed, ""].sort(),
        stderr: "",
      });
      if (hookFile !== undefined) expect(existsSync(hookFile)).toBe(false);
    });
  }
});
