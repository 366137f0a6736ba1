import { describe, expect, test } from "bun:test";
import { applyEdits, modify } from "jsonc-parser";
import { restoreOwnedKeys } from "../../src/wrap/merge-owned-keys.ts";

const backup = `{
  // my servers
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "gh-mcp"] }, // keep me
    "remote": { "url": "https://example.com/mcp" },
  },
  "theme": "dark",
}
`;
const wrapped = (text: string) =>
  applyEdits(text, modify(text, ["mcpServers", "github"], { command: "/usr/local/bin/thoughtgate", args: ["shim", "--", "npx", "-y", "gh-mcp"] }, {}));

describe("restoreOwnedKeys", () => {
  test("an untouched file comes back byte for byte", () => {
    const rewritten = wrapped(backup);
    expect(restoreOwnedKeys(backup, rewritten, rewritten, [["mcpServers", "github"]])).toBe(backup);
  });

  test("the agent's own changes survive; the owned entry gets its original text back", () => {
    const rewritten = wrapped(backup);
    const changed = applyEdits(rewritten, modify(rewritten, ["theme"], "light", {}));
    const withNew = applyEdits(changed, modify(changed, ["mcpServers", "added-by-agent"], { command: "x" }, {}));
    const restored = restoreOwnedKeys(backup, rewritten, withNew, [["mcpServers", "github"]]);
    expect(restored).toContain('"theme": "light"');
    expect(restored).toContain('"added-by-agent"');
    expect(restored).toContain('"github": { "command": "npx", "args": ["-y", "gh-mcp"] }');
    expect(restored).toContain("// my servers");
    expect(restored).not.toContain("thoughtgate");
  });

  test("an owned entry the agent deleted stays deleted; one wrap added is removed", () => {
    const rewritten = applyEdits(wrapped(backup), modify(wrapped(backup), ["mcpServers", "extra"], { command: "tg" }, {}));
    const deleted = applyEdits(rewritten, modify(rewritten, ["mcpServers", "github"], undefined, {}));
    const changed = applyEdits(deleted, modify(deleted, ["theme"], "light", {}));
    const restored = restoreOwnedKeys(backup, rewritten, changed, [["mcpServers", "github"], ["mcpServers", "extra"]]);
    expect(restored).not.toContain('"github"');
    expect(restored).not.toContain('"extra"');
    expect(restored).toContain('"remote"');
  });
});

test("a key wrap added to a one-line entry is removed without reflowing the entry", () => {
  const rewritten = backup.replace('"args": ["-y", "gh-mcp"] }', '"args": ["shim", "--", "npx", "-y", "gh-mcp"], "env": { "K": "v" } }');
  const changed = applyEdits(rewritten, modify(rewritten, ["theme"], "light", {}));
  const owned = [["mcpServers", "github", "args"], ["mcpServers", "github", "env"]];
  expect(restoreOwnedKeys(backup, rewritten, changed, owned)).toBe(applyEdits(backup, modify(backup, ["theme"], "light", {})));
});

test("nested owned paths and a current text that does not parse still restore the owned entries", () => {
  const rewritten = wrapped(backup);
  const owned = [["mcpServers", "github"], ["mcpServers", "github", "args"]];
  const changed = applyEdits(rewritten, modify(rewritten, ["theme"], "light", {}));
  expect(restoreOwnedKeys(backup, rewritten, changed, owned)).toBe(applyEdits(backup, modify(backup, ["theme"], "light", {})));
  // An agent that left a stray comma at the end: the error-tolerant parse still finds the entry.
  const broken = changed.replace(/}\n$/, "},\n");
  expect(restoreOwnedKeys(backup, rewritten, broken, [["mcpServers", "github"]])).toContain('"github": { "command": "npx", "args": ["-y", "gh-mcp"] }');
});
