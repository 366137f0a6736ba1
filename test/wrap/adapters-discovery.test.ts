import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { applyEdits, modify } from "jsonc-parser";
import { join } from "node:path";
import { discover, effectiveEntries, renderCoverage, type ConfigFile, type ServerEntry } from "../../src/wrap/adapters/index.ts";
import { agentConfigFixture, summary } from "../support/agent-configs.ts";

const entry = (files: ConfigFile[], scope: string, name: string): ServerEntry => {
  const found = files.flatMap((file) => file.entries).find((e) => e.scope === scope && e.name === name);
  if (!found) throw new Error(`no ${scope} entry ${name}`);
  return found;
};

describe("Claude Code", () => {
  test("user, local and project scopes; local > project > user; disabledMcpjsonServers governed, flag noted; remote over Streamable HTTP governed, over SSE left", () => {
    using fixture = agentConfigFixture("claude-code");
    const files = discover("claude-code", fixture.ctx);
    expect(files.map((file) => [file.path, file.exists])).toEqual([
      [join(fixture.home, ".claude.json"), true],
      [join(fixture.project, ".mcp.json"), true],
    ]);
    expect(summary(files)).toEqual([
      "user filesystem: governed",
      "user github: governed",
      "user sentry: governed",
      "user memory: governed (shadowed by local)",
      "local memory: governed",
      "local 日本語-notes: governed",
      "project postgres: governed",
      // disabled in ~/.claude.json's project entry, and in .claude/settings.local.json: still
      // rewritten, so approving them mid-session starts them through the shim
      "project legacy-db: governed (disabled by disabledMcpjsonServers)",
      "project scratch: governed (disabled by disabledMcpjsonServers)",
      "project linear: remote",
      "project memory: governed (shadowed by local)",
    ]);
    expect(effectiveEntries(files).map((e) => `${e.scope} ${e.name}`)).toEqual([
      "user filesystem",
      "user github",
      "user sentry",
      "local memory",
      "local 日本語-notes",
      "project postgres",
      "project linear",
    ]);
    expect(entry(files, "local", "memory").jsonPath).toEqual(["projects", fixture.project, "mcpServers", "memory"]);
  });

  test("a server turned off with /mcp (the project's disabledMcpServers) is governed, whatever its scope", () => {
    using fixture = agentConfigFixture("claude-code");
    const path = join(fixture.home, ".claude.json");
    const text = readFileSync(path, "utf8");
    writeFileSync(path, applyEdits(text, modify(text, ["projects", fixture.project, "disabledMcpServers"], ["github", "postgres"], {})));
    const lines = summary(discover("claude-code", fixture.ctx));
    expect(lines).toContain("user github: governed (disabled by disabledMcpServers)");
    expect(lines).toContain("project postgres: governed (disabled by disabledMcpServers)");
  });

  test("${VAR} and ${VAR:-default} are expanded for the effective command, and the file keeps them as written", () => {
    using fixture = agentConfigFixture("claude-code", { GITHUB_TOKEN: "ghp_123", DATABASE_URL: "postgresql://db/app" });
    const files = discover("claude-code", fixture.ctx);
    const memory = entry(files, "local", "memory");
    expect(memory.args).toEqual(["${HOME}/mcp/memory/dist/index.js"]);
    expect(memory.effective).toEqual({
      command: "node",
      args: [`${fixture.home}/mcp/memory/dist/index.js`],
      env: { MEMORY_FILE_PATH: "/tmp/mémoire.json" },
    });
    expect(entry(files, "user", "github").effective?.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_123" });
    expect(entry(files, "project", "postgres").effective?.args.at(-1)).toBe("postgresql://db/app");
  });

  test("an unset variable without a default stays as written, with a warning", () => {
    using fixture = agentConfigFixture("claude-code");
    const github = entry(discover("claude-code", fixture.ctx), "user", "github");
    expect(github.effective?.env.GITHUB_PERSONAL_ACCESS_TOKEN).toBe("${GITHUB_TOKEN}");
    expect(github.warnings).toEqual(["${GITHUB_TOKEN} is not set and has no default: Claude Code will start the server with it unexpanded"]);
    expect(github.governed).toBe(true);
  });

  test("$CLAUDE_CONFIG_DIR moves the user file; a .mcp.json in a parent directory is read too", () => {
    using fixture = agentConfigFixture("claude-code");
    const configDir = join(fixture.home, ".claude-work");
    mkdirSync(configDir);
    writeFileSync(join(configDir, ".claude.json"), JSON.stringify({ mcpServers: { work: { command: "work-mcp" } } }));
    writeFileSync(join(fixture.home, "src", ".mcp.json"), JSON.stringify({ mcpServers: { parent: { command: "parent-mcp" } } }));
    const files = discover("claude-code", { ...fixture.ctx, env: { ...fixture.ctx.env, CLAUDE_CONFIG_DIR: configDir } });
    expect(files.map((file) => file.path)).toEqual([join(configDir, ".claude.json"), join(fixture.project, ".mcp.json"), join(fixture.home, "src", ".mcp.json")]);
    expect(summary(files)).toContain("user work: governed");
    expect(summary(files)).toContain("project parent: governed");
  });

  test("no config at all: the files are listed as missing, with no entries", () => {
    using fixture = agentConfigFixture("claude-desktop");
    const files = discover("claude-code", fixture.ctx);
    expect(files.map((file) => ({ exists: file.exists, entries: file.entries.length, problems: file.problems }))).toEqual([
      { exists: false, entries: 0, problems: [] },
      { exists: false, entries: 0, problems: [] },
    ]);
  });
});

test("Claude Desktop: Application Support on macOS, ~/.config/Claude on Linux", () => {
  using fixture = agentConfigFixture("claude-desktop");
  const [linux] = discover("claude-desktop", fixture.ctx);
  expect(linux?.path).toBe(join(fixture.home, ".config", "Claude", "claude_desktop_config.json"));
  expect(summary(linux ? [linux] : [])).toEqual(["user filesystem: governed", "user brave-search: governed", "user sqlite: governed"]);
  const [mac] = discover("claude-desktop", { ...fixture.ctx, platform: "darwin" });
  expect(mac?.path).toBe(join(fixture.home, "Library", "Application Support", "Claude", "claude_desktop_config.json"));
});

test("Cursor: a project server overrides the global one of the same name; ${env:…}, ${userHome}, ${workspaceFolder}", () => {
  using fixture = agentConfigFixture("cursor", { DATABASE_URL: "postgresql://db/app" });
  const files = discover("cursor", fixture.ctx);
  expect(summary(files)).toEqual([
    "project shared-db: governed",
    "project docs: governed",
    "user context7: governed",
    "user playwright: governed",
    "user shared-db: governed (shadowed by project)",
  ]);
  expect(entry(files, "project", "shared-db").effective?.args).toEqual(["-y", "mcp-postgres", "postgresql://db/app"]);
  expect(entry(files, "project", "docs").effective).toEqual({
    command: `${fixture.home}/.local/bin/docs-mcp`,
    args: ["--root", `${fixture.project}/docs`],
    env: { LANG: "fr_FR.UTF-8" },
  });
});

describe("VS Code", () => {
  test("`servers` in the workspace and user files; stdio with or without type; ${input:…} left with a warning", () => {
    using fixture = agentConfigFixture("vscode");
    const files = discover("vscode", fixture.ctx);
    expect(files.map((file) => file.path)).toEqual([join(fixture.project, ".vscode", "mcp.json"), join(fixture.home, ".config", "Code", "User", "mcp.json")]);
    expect(summary(files)).toEqual([
      "project perplexity: governed",
      "project fetch: governed",
      "project github: governed",
      "project my-tools: governed",
      "user time: governed",
    ]);
    const perplexity = entry(files, "project", "perplexity");
    expect(perplexity.effective?.env).toEqual({ PERPLEXITY_API_KEY: "${input:perplexity-key}" });
    expect(perplexity.warnings).toEqual(["${input:perplexity-key} is resolved by VS Code when the server starts: left as written"]);
  });

  test("Insiders and macOS keep the user file elsewhere", () => {
    using fixture = agentConfigFixture("vscode");
    expect(discover("vscode", fixture.ctx, { insiders: true })[1]?.path).toBe(join(fixture.home, ".config", "Code - Insiders", "User", "mcp.json"));
    expect(discover("vscode", { ...fixture.ctx, platform: "darwin" })[1]?.path).toBe(join(fixture.home, "Library", "Application Support", "Code", "User", "mcp.json"));
  });
});

test("Windsurf: disabled: true is governed with its flag, serverUrl (remote) governed through shim --url, ${env:VAR} expanded", () => {
  using fixture = agentConfigFixture("windsurf", { GITHUB_TOKEN: "ghp_123", STRIPE_SECRET_KEY: "sk_test" });
  const files = discover("windsurf", fixture.ctx);
  expect(summary(files)).toEqual(["user github: governed", "user figma: governed", "user puppeteer: governed (disabled by `disabled: true`)", "user stripe: governed"]);
  expect(entry(files, "user", "github").effective?.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_123" });
});

test("Zed: JSONC settings, flat and nested custom servers, extension servers ungoverned, enabled: false governed with its flag", () => {
  using fixture = agentConfigFixture("zed");
  const files = discover("zed", fixture.ctx);
  expect(files.map((file) => [file.path, file.exists])).toEqual([
    [join(fixture.project, ".zed", "settings.json"), false],
    [join(fixture.home, ".config", "zed", "settings.json"), true],
  ]);
  expect(files.flatMap((file) => file.entries).map((e) => [e.name, e.governed ? "governed" : e.status, e.form, e.disabled])).toEqual([
    ["filesystem", "governed", "flat", undefined],
    ["git", "governed", "nested", undefined],
    ["mcp-server-github", "extension", undefined, undefined],
    ["old-experiment", "governed", "flat", "`enabled: false`"],
    ["you-com", "remote", undefined, undefined],
    ["sans-args", "governed", "flat", undefined],
  ]);
  expect(entry(files, "user", "git")).toMatchObject({ command: "uvx", args: ["mcp-server-git"], env: { GIT_AUTHOR_NAME: "Zoë Ångström" } });
});

test("Zed follows XDG_CONFIG_HOME on Linux and stays in ~/.config on macOS", () => {
  const ctx = { home: "/home/u", cwd: "/home/u/p", env: { XDG_CONFIG_HOME: "/home/u/.cfg" }, platform: "linux" as const };
  expect(discover("zed", ctx)[1]?.path).toBe("/home/u/.cfg/zed/settings.json");
  expect(discover("zed", { ...ctx, platform: "darwin" })[1]?.path).toBe("/home/u/.config/zed/settings.json");
});

test("custom reads --config-path and nothing else; without it, a usage error", () => {
  using fixture = agentConfigFixture("custom");
  const files = discover("custom", fixture.ctx, { configPath: "../../.config/my-agent/mcp.json" });
  expect(files.map((file) => file.path)).toEqual([join(fixture.home, ".config", "my-agent", "mcp.json")]);
  expect(summary(files)).toEqual(["custom everything: governed", "custom weather: governed"]);
  expect(() => discover("custom", fixture.ctx)).toThrow("--config-path");
});

test("--config-path reads one file in the agent's own format", () => {
  using fixture = agentConfigFixture("zed");
  const path = join(fixture.home, ".config", "zed", "settings.json");
  const files = discover("zed", fixture.ctx, { configPath: path });
  expect(files.map((file) => [file.path, file.scope])).toEqual([[path, "custom"]]);
  expect(files[0]?.entries.filter((e) => e.governed).map((e) => e.name)).toEqual(["filesystem", "git", "old-experiment", "sans-args"]);
});

test("the coverage table: one line per server with scope, file, and why it is not governed", () => {
  using fixture = agentConfigFixture("windsurf");
  expect(renderCoverage(discover("windsurf", fixture.ctx), fixture.ctx)).toBe(
    [
      "SERVER     SCOPE  FILE                                 GOVERNED",
      "github     user   ~/.codeium/windsurf/mcp_config.json  yes",
      "figma      user   ~/.codeium/windsurf/mcp_config.json  yes",
      "puppeteer  user   ~/.codeium/windsurf/mcp_config.json  yes (disabled by `disabled: true`: governed if enabled mid-session)",
      "stripe     user   ~/.codeium/windsurf/mcp_config.json  yes",
      "warning: github: ${env:GITHUB_TOKEN} is not set: it expands to an empty string",
      "warning: stripe: ${env:STRIPE_SECRET_KEY} is not set: it expands to an empty string",
      "",
    ].join("\n"),
  );
});

test("the coverage table lines up servers named in wide characters and shows shadowed entries", () => {
  using fixture = agentConfigFixture("claude-code", { GITHUB_TOKEN: "x" });
  const lines = renderCoverage(discover("claude-code", fixture.ctx), fixture.ctx).split("\n");
  expect(lines).toContain("日本語-notes  local    ~/.claude.json  yes");
  expect(lines).toContain("memory        user     ~/.claude.json  yes (the local entry in ~/.claude.json takes precedence)");
  expect(lines).toContain("memory        project  ./.mcp.json     yes (the local entry in ~/.claude.json takes precedence)");
});
