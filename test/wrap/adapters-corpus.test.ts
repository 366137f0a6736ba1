import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { applyEdits, findNodeAtLocation, modify, parse, parseTree, visit, type JSONPath, type ParseError } from "jsonc-parser";
import { discover, rewrite, type AgentType, type ServerEntry, type ShimCommand } from "../../src/wrap/adapters/index.ts";
import { restoreOwnedKeys } from "../../src/wrap/merge-owned-keys.ts";
import { agentConfigFixture, CORPUS_AGENTS } from "../support/agent-configs.ts";

const BINARY = "/opt/thoughtgate/bin/thoughtgate";
const shimFor = (entry: ServerEntry): ShimCommand => ({
  command: BINARY,
  args: ["shim", "--server-id", entry.name, "--governance-endpoint", "http://127.0.0.1:41234", "--", entry.command ?? "", ...entry.args],
  env: { THOUGHTGATE_GOVERNANCE_ENDPOINT: "http://127.0.0.1:41234", THOUGHTGATE_GOVERNANCE_SECRET: "s3cr3t" },
});

function comments(text: string): string[] {
  const found: string[] = [];
  visit(text, { onComment: (offset, length) => found.push(text.slice(offset, offset + length)) }, { allowTrailingComma: true });
  return found;
}

function sourceOf(text: string, path: JSONPath): string | undefined {
  const node = findNodeAtLocation(parseTree(text) ?? { type: "null", offset: 0, length: 0 }, path);
  return node && text.slice(node.offset, node.offset + node.length);
}

/** Where an entry keeps command/args/env: the entry, or Zed's nested `command` object. */
const commandObject = (entry: ServerEntry): JSONPath => (entry.form === "nested" ? [...entry.jsonPath, "command"] : entry.jsonPath);

const ctxEnv = { GITHUB_TOKEN: "ghp_from_env", DATABASE_URL: "postgresql://db.internal/app" };

describe.each(CORPUS_AGENTS)("corpus: %s", (agent) => {
  const options = (home: string) => (agent === "custom" ? { configPath: join(home, ".config", "my-agent", "mcp.json") } : {});

  test("every file rewrites to a parseable config whose governed servers run the shim, and restores byte for byte", () => {
    using fixture = agentConfigFixture(agent, ctxEnv);
    const files = discover(agent as AgentType, fixture.ctx, options(fixture.home)).filter((file) => file.exists);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      expect(file.problems).toEqual([]);
      const governed = file.entries.filter((entry) => entry.governed);
      expect(governed.length).toBeGreaterThan(0);
      const { text, owned } = rewrite(file.text, file.entries, shimFor);

      const errors: ParseError[] = [];
      const config: unknown = parse(text, errors, { allowTrailingComma: true });
      expect(errors).toEqual([]);
      expect(comments(text)).toEqual(comments(file.text));
      if (file.text.includes("\r\n")) expect(text.replaceAll("\r\n", "")).not.toContain("\n");

      for (const entry of governed) {
        const written = valueAt(config, commandObject(entry)) as { command?: string; path?: string; args: string[]; env: Record<string, string> };
        expect(written.command ?? written.path).toBe(BINARY);
        expect(written.args).toEqual(shimFor(entry).args);
        expect(written.args.slice(written.args.indexOf("--") + 1)).toEqual([entry.command ?? "", ...entry.args]);
        expect(written.env).toEqual({ ...entry.env, ...shimFor(entry).env });
      }
      for (const entry of file.entries.filter((entry) => !entry.governed)) {
        expect(sourceOf(text, entry.jsonPath)).toBe(sourceOf(file.text, entry.jsonPath));
      }

      expect(restoreOwnedKeys(file.text, text, text, owned)).toBe(file.text);
      // The agent saved the file during the session (a new top-level key): that change stays,
      // and everything wrap wrote goes back to the original bytes.
      const agentEdit = (t: string) => applyEdits(t, modify(t, ["agentWasHere"], true, {}));
      expect(restoreOwnedKeys(file.text, text, agentEdit(text), owned)).toBe(agentEdit(file.text));
    }
  });
});

function valueAt(value: unknown, path: JSONPath): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

describe("restore keeps what the agent changed inside a governed entry", () => {
  test("Zed: a server switched off during the session stays off; its command comes back", () => {
    using fixture = agentConfigFixture("zed");
    const file = discover("zed", fixture.ctx).find((f) => f.exists);
    if (!file) throw new Error("fixture missing");
    const { text, owned } = rewrite(file.text, file.entries, shimFor);
    const toggleOff = (t: string) => applyEdits(t, modify(t, ["context_servers", "filesystem", "enabled"], false, {}));
    const restored = restoreOwnedKeys(file.text, text, toggleOff(text), owned);
    expect(restored).toBe(toggleOff(file.text));
  });

  test("Windsurf: a tool disabled in the Cascade panel stays disabled", () => {
    using fixture = agentConfigFixture("windsurf");
    const [file] = discover("windsurf", fixture.ctx);
    if (!file) throw new Error("fixture missing");
    const { text, owned } = rewrite(file.text, file.entries, shimFor);
    const disableTool = (t: string) => applyEdits(t, modify(t, ["mcpServers", "github", "disabledTools"], ["create_issue"], {}));
    expect(restoreOwnedKeys(file.text, text, disableTool(text), owned)).toBe(disableTool(file.text));
  });
});
