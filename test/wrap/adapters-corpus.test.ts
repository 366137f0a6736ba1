import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { applyEdits, modify, parse, visit, type JSONPath, type ParseError } from "jsonc-parser";
import { parseTOML } from "toml-eslint-parser";
import { Lexer } from "yaml";
import { discover, rewrite, type AgentType, type ServerEntry, type ShimCommand } from "../../src/wrap/adapters/index.ts";
import { formatOf, type ConfigFormatName } from "../../src/wrap/formats/index.ts";
import { remoteShimArgs } from "../../src/wrap/remote-entry.ts";
import { agentConfigFixture, CORPUS_AGENTS } from "../support/agent-configs.ts";

const BINARY = "/opt/thoughtgate/bin/thoughtgate";
const GOVERNANCE_ENV = { THOUGHTGATE_GOVERNANCE_ENDPOINT: "http://127.0.0.1:41234", THOUGHTGATE_GOVERNANCE_SECRET: "s3cr3t" };
/** What the wrap session writes: `-- command args` for a stdio server, `--url` (and headers in env) for a remote one. */
const shimFor = (entry: ServerEntry): ShimCommand => {
  const common = ["shim", "--server-id", entry.name, "--governance-endpoint", "http://127.0.0.1:41234"];
  if (entry.remote) {
    const remote = remoteShimArgs(entry.remote);
    return { command: BINARY, args: [...common, ...remote.args], env: { ...GOVERNANCE_ENV, ...remote.env } };
  }
  return { command: BINARY, args: [...common, "--", entry.command ?? "", ...entry.args], env: GOVERNANCE_ENV };
};

/**
 * Per format: a reader of the rewritten text (Bun's own TOML and YAML parsers, not the ones wrap
 * edits with), its comments, and an edit the agent makes to the file during the session.
 */
const FORMATS: Record<ConfigFormatName, { read(text: string): unknown; comments(text: string): string[]; agentEdit(text: string): string }> = {
  jsonc: {
    read(text) {
      const errors: ParseError[] = [];
      const value: unknown = parse(text, errors, { allowTrailingComma: true });
      expect(errors).toEqual([]);
      return value;
    },
    comments(text) {
      const found: string[] = [];
      visit(text, { onComment: (offset, length) => found.push(text.slice(offset, offset + length)) }, { allowTrailingComma: true });
      return found;
    },
    // The agent saved a setting of its own (a new top-level key).
    agentEdit: (text) => applyEdits(text, modify(text, ["agentWasHere"], true, {})),
  },
  toml: {
    read: (text) => Bun.TOML.parse(text),
    comments: (text) => parseTOML(text, { tomlVersion: "1.1.0" }).comments.map((comment) => comment.value),
    // Codex trusting a new project: a table appended at the end.
    agentEdit: (text) => `${text}${text.endsWith("\n") ? "" : "\n"}\n[projects."/tmp/elsewhere"]\ntrust_level = "trusted"\n`,
  },
  yaml: {
    read: (text) => Bun.YAML.parse(text),
    comments: (text) => [...new Lexer().lex(text)].filter((token) => token.startsWith("#")),
    // goose saving a setting at the top.
    agentEdit: (text) => `GOOSE_TEMPERATURE: 0.2\n${text}`,
  },
};

const ctxEnv = { GITHUB_TOKEN: "ghp_from_env", DATABASE_URL: "postgresql://db.internal/app" };

describe.each(CORPUS_AGENTS)("corpus: %s", (agent) => {
  const options = (home: string) => (agent === "custom" ? { configPath: join(home, ".config", "my-agent", "mcp.json") } : {});
  const format = FORMATS[formatOf(agent).name];

  test("every file rewrites to a config whose servers (disabled ones too) run the shim, and restores byte for byte", () => {
    using fixture = agentConfigFixture(agent, ctxEnv);
    const all = discover(agent as AgentType, fixture.ctx, options(fixture.home)).filter((file) => file.exists);
    const files = all.filter((file) => file.entries.some((entry) => entry.governed));
    expect(files.length).toBeGreaterThan(0);
    for (const file of all) expect(file.problems).toEqual([]);
    for (const file of files) {
      const { text, owned } = rewrite(file.text, file.entries, shimFor);
      const original = format.read(file.text);
      const config = format.read(text);
      expect(format.comments(text)).toEqual(format.comments(file.text));
      if (file.text.includes("\r\n")) expect(text.replaceAll("\r\n", "")).not.toContain("\n");

      for (const entry of file.entries.filter((entry) => entry.governed)) {
        if (entry.remote) {
          // The whole entry becomes a stdio shim entry reaching the same URL with the same headers;
          // its other keys stay.
          const shim = shimFor(entry);
          const { type: _type, headers: _headers, [entry.remote.urlKey]: _url, ...rest } = valueAt(original, entry.jsonPath) as Record<string, unknown>;
          expect(valueAt(config, entry.jsonPath)).toEqual({ ...(entry.remote.typed ? { type: "stdio" } : {}), command: BINARY, args: shim.args, env: shim.env, ...rest });
          const url = shim.args.includes("--url") ? shim.args[shim.args.indexOf("--url") + 1] : shim.env.THOUGHTGATE_URL;
          expect(url).toBe(entry.remote.url);
          expect(Object.entries(shim.env).filter(([key]) => key.startsWith("THOUGHTGATE_HEADER_")).map(([, value]) => value)).toEqual(
            Object.entries(entry.remote.headers).map(([name, value]) => `${name}: ${value}`),
          );
          continue;
        }
        const at = [...entry.jsonPath, ...entry.layout.at];
        const written = valueAt(config, at) as Record<string, unknown>;
        const { command, args, env } = entry.layout;
        const shim = shimFor(entry);
        if (args === undefined) expect(written[command]).toEqual([BINARY, ...shim.args]);
        else {
          expect(written[command]).toBe(BINARY);
          expect(written[args]).toEqual(shim.args);
        }
        expect(shim.args.slice(shim.args.indexOf("--") + 1)).toEqual([entry.command ?? "", ...entry.args]);
        expect(written[env]).toEqual({ ...entry.env, ...shim.env });
        // Everything else in the entry stays, an off switch (`disabled`, `enabled`) included.
        const rest = (value: unknown) => Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([key]) => ![command, args, env].includes(key)));
        expect(rest(written)).toEqual(rest(valueAt(original, at)));
      }
      for (const entry of file.entries.filter((entry) => !entry.governed)) {
        expect(valueAt(config, entry.jsonPath)).toEqual(valueAt(original, entry.jsonPath));
      }

      const { restoreOwnedKeys } = formatOf(agent, file.path);
      expect(restoreOwnedKeys(file.text, text, text, owned)).toBe(file.text);
      // The agent saved the file during the session: that change stays, and everything wrap wrote
      // goes back to the original bytes (so nothing outside the owned keys was touched either).
      expect(restoreOwnedKeys(file.text, text, format.agentEdit(text), owned)).toBe(format.agentEdit(file.text));
    }
    // A file with nothing to govern (a Gemini CLI extension's manifest) is not rewritten at all.
    for (const file of all.filter((file) => !files.includes(file))) expect(rewrite(file.text, file.entries, shimFor)).toEqual({ text: file.text, owned: [] });
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
    const restored = formatOf("zed").restoreOwnedKeys(file.text, text, toggleOff(text), owned);
    expect(restored).toBe(toggleOff(file.text));
  });

  test("Windsurf: a tool disabled in the Cascade panel stays disabled", () => {
    using fixture = agentConfigFixture("windsurf");
    const [file] = discover("windsurf", fixture.ctx);
    if (!file) throw new Error("fixture missing");
    const { text, owned } = rewrite(file.text, file.entries, shimFor);
    const disableTool = (t: string) => applyEdits(t, modify(t, ["mcpServers", "github", "disabledTools"], ["create_issue"], {}));
    expect(formatOf("windsurf").restoreOwnedKeys(file.text, text, disableTool(text), owned)).toBe(disableTool(file.text));
  });

  test("Windsurf: a disabled server switched on mid-session was already running the shim, and stays on after restore", () => {
    using fixture = agentConfigFixture("windsurf");
    const [file] = discover("windsurf", fixture.ctx);
    if (!file) throw new Error("fixture missing");
    const { text, owned } = rewrite(file.text, file.entries, shimFor);
    const puppeteer = (t: string) => (parse(t) as { mcpServers: Record<string, { command: string; disabled?: boolean }> }).mcpServers.puppeteer;
    expect(puppeteer(text)).toMatchObject({ command: BINARY, disabled: true });
    const switchOn = (t: string) => applyEdits(t, modify(t, ["mcpServers", "puppeteer", "disabled"], false, {}));
    expect(puppeteer(switchOn(text))).toMatchObject({ command: BINARY, disabled: false });
    expect(formatOf("windsurf").restoreOwnedKeys(file.text, text, switchOn(text), owned)).toBe(switchOn(file.text));
  });
});
