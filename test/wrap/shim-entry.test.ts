/**
 * Which entries already run through this thoughtgate (src/wrap/shim-entry.ts): only this binary (or
 * the shim path), by device and inode, running `shim --server-id <the id wrap gives it> -- …` (or the
 * remote form). Anything that merely looks like it is governed by wrapping it again.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discover, rewrite, type AgentContext } from "../../src/wrap/adapters/index.ts";
import { markOwnShims, serverIds, shimCommandFor } from "../../src/wrap/shim-entry.ts";
import { fileIdentity } from "../../src/wrap/shim-path.ts";
import { statSync } from "node:fs";
import { tempDir } from "../support/harness.ts";

function setup() {
  const dir = tempDir();
  const bin = join(dir.path, "bin");
  mkdirSync(bin);
  // "This thoughtgate": any executable file stands in for it (only its identity matters).
  const ours = join(bin, "thoughtgate");
  writeFileSync(ours, "#!/bin/sh\n");
  chmodSync(ours, 0o755);
  const home = join(dir.path, "home");
  mkdirSync(join(home, ".codeium", "windsurf"), { recursive: true });
  const ctx: AgentContext = { home, cwd: home, env: { PATH: bin }, platform: "linux" };
  const config = join(home, ".codeium", "windsurf", "mcp_config.json");
  return { dir, bin, ours, ctx, config, identities: new Set([fileIdentity(statSync(ours))]) };
}

/** The status wrap gives the one entry `a` written with `entry`. */
function statusOf(s: ReturnType<typeof setup>, entry: Record<string, unknown>): string {
  writeFileSync(s.config, JSON.stringify({ mcpServers: { a: entry } }));
  const files = discover("windsurf", s.ctx);
  markOwnShims(files, s.identities, serverIds(files), s.ctx);
  return files[0]?.entries[0]?.status ?? "none";
}

describe("an entry runs through thoughtgate only in the form wrap writes, from this binary", () => {
  test("what wrap writes is recognised: the next wrap rewrites nothing", () => {
    const s = setup();
    using _ = s.dir;
    writeFileSync(s.config, JSON.stringify({ mcpServers: { a: { command: "npx", args: ["-y", "srv"] } } }, null, 2));
    const files = discover("windsurf", s.ctx);
    const ids = serverIds(files);
    const once = rewrite(files[0]?.text ?? "", files[0]?.entries ?? [], (entry) => shimCommandFor(s.ours, ids.get(entry) ?? "", entry));
    writeFileSync(s.config, once.text);
    const again = discover("windsurf", s.ctx);
    markOwnShims(again, s.identities, serverIds(again), s.ctx);
    expect(again[0]?.entries.map((e) => [e.name, e.status, e.governed])).toEqual([["a", "wrapped", false]]);
    expect(rewrite(once.text, again[0]?.entries ?? [], () => ({ command: "x", args: [], env: {} })).text).toBe(once.text);
  });

  test("the same file by another path: a hard link, a symlink, its name on PATH", () => {
    const s = setup();
    using _ = s.dir;
    const hard = join(s.dir.path, "hard");
    linkSync(s.ours, hard);
    const soft = join(s.dir.path, "soft");
    symlinkSync(s.ours, soft);
    for (const command of [hard, soft, "thoughtgate"]) expect(statusOf(s, { command, args: ["shim", "--server-id", "a", "--", "npx", "srv"] })).toBe("wrapped");
    expect(statusOf(s, { command: s.ours, args: ["shim", "--server-id", "a", "--url", "https://example.com/mcp", "--header-env", "THOUGHTGATE_HEADER_1"], env: { THOUGHTGATE_HEADER_1: "Authorization: x" } })).toBe("wrapped");
  });

  test.each([
    ["another file named thoughtgate (a copy is another file)", (s: ReturnType<typeof setup>) => {
      const copy = join(s.dir.path, "copy", "thoughtgate");
      mkdirSync(join(s.dir.path, "copy"));
      copyFileSync(s.ours, copy);
      return { command: copy, args: ["shim", "--server-id", "a", "--", "node", "evil.js"] };
    }],
    ["argv that merely contains `thoughtgate shim`", () => ({ command: "sh", args: ["-c", "exec node evil.js", "thoughtgate", "shim"] })],
    ["the governance variables wrap once put in env", () => ({ command: "node", args: ["evil.js"], env: { THOUGHTGATE_GOVERNANCE_ENDPOINT: "http://127.0.0.1:1", THOUGHTGATE_GOVERNANCE_SECRET: "s" } })],
    ["this binary with a flag wrap does not write (a profile, a policy, an endpoint)", (s: ReturnType<typeof setup>) => ({ command: s.ours, args: ["shim", "--server-id", "a", "--profile", "development", "--", "node", "evil.js"] })],
    ["this binary under another server id (another server's rules)", (s: ReturnType<typeof setup>) => ({ command: s.ours, args: ["shim", "--server-id", "github", "--", "node", "evil.js"] })],
    ["this binary with nothing after --", (s: ReturnType<typeof setup>) => ({ command: s.ours, args: ["shim", "--server-id", "a", "--"] })],
    ["this binary running another command", (s: ReturnType<typeof setup>) => ({ command: s.ours, args: ["inspect", "--", "node", "evil.js"] })],
  ])("%s: governed (rewritten)", (_, entry) => {
    const s = setup();
    using __ = s.dir;
    expect(statusOf(s, entry(s))).toBe("governed");
  });
});

describe("server ids", () => {
  test("a name in two scopes: the scope read first keeps it, the other gets @scope", () => {
    const s = setup();
    using _ = s.dir;
    writeFileSync(s.config, JSON.stringify({ mcpServers: { a: { command: "x" }, b: { command: "y" } } }));
    const files = discover("windsurf", s.ctx);
    const twice = [...files, ...files.map((file) => ({ ...file, scope: "project" as const, entries: file.entries.map((e) => ({ ...e, scope: "project" as const })) }))];
    expect([...serverIds(twice).values()]).toEqual(["a", "b", "a@project", "b@project"]);
  });
});
