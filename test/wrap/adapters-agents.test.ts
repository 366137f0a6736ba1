/**
 * The agents added with TOML and YAML configs and the CLIs' own file locations: where each one's
 * files are found (and what moves them), and what is put back when the agent itself rewrote its
 * file during the session. The "agent saved" texts in test/fixtures/agent-saved/ are what the real
 * CLIs wrote (codex-cli 0.169.0 `codex mcp add`, Qwen Code 0.15.10 `qwen mcp add`, Cline CLI
 * 3.0.65 `cline mcp add --yes`) over the rewritten corpus files; goose's is written by hand in the
 * layout its serde_yaml writer produces (goose was not run).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "jsonc-parser";
import { detectAgent, discover, renderCoverage, rewrite, type AgentContext, type AgentType, type ConfigFile, type ServerEntry, type ShimCommand } from "../../src/wrap/adapters/index.ts";
import { formatOf } from "../../src/wrap/formats/index.ts";
import { agentConfigFixture, summary } from "../support/agent-configs.ts";
import { tempDir } from "../support/harness.ts";

const SAVED = join(import.meta.dir, "..", "fixtures", "agent-saved");

/** The shim the real-agent runs used. */
const shimFor = (entry: ServerEntry): ShimCommand => ({
  command: "/opt/tg/thoughtgate",
  args: ["shim", "--server-id", entry.name, "--", entry.command ?? "", ...entry.args],
  env: { THOUGHTGATE_RUN_ID: "run-1" },
});

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const fileAt = (files: ConfigFile[], path: string): ConfigFile => {
  const found = files.find((file) => file.path === path);
  if (!found) throw new Error(`${path} was not discovered`);
  return found;
};

const paths = (files: ConfigFile[], home: string) => files.map((file) => `${file.scope} ${file.path.replace(home, "~")}${file.exists ? "" : " (missing)"}`);

/** A bare home and project directory, for discovery tests that lay out their own files. */
function emptyHome(): Disposable & { home: string; project: string; ctx: (env?: Record<string, string>) => AgentContext } {
  const dir = tempDir("thoughtgate-agents-");
  const home = join(dir.path, "home");
  const project = join(home, "src", "app");
  mkdirSync(project, { recursive: true });
  return { home, project, ctx: (env = {}) => ({ home, cwd: project, env: { HOME: home, ...env }, platform: "linux" }), [Symbol.dispose]: () => dir[Symbol.dispose]() };
}

describe("what the agent wrote during the session stays; only the keys wrap owns go back", () => {
  /** Rewrite the corpus file at `relative`, let "the agent" save `saved` over it, and put back the owned keys. */
  function session(agent: AgentType, relative: string, saved: string, substitute: Record<string, string> = {}) {
    const fixture = agentConfigFixture(agent);
    const path = join(fixture.home, relative);
    const file = fileAt(discover(agent, fixture.ctx), path);
    const { text, owned } = rewrite(file.text, file.entries, shimFor);
    let current = readFileSync(join(SAVED, saved), "utf8");
    for (const [placeholder, value] of Object.entries({ "@@PROJECT@@": fixture.project, "@@HOME@@": fixture.home, ...substitute })) current = current.replaceAll(placeholder, value);
    const restored = formatOf(agent, path).restoreOwnedKeys(file.text, text, current, owned);
    return { fixture, backup: file.text, rewritten: text, current, restored, [Symbol.dispose]: () => fixture[Symbol.dispose]() };
  }

  test("Codex: `codex mcp add` rewrote the whole [mcp_servers] table in its own layout", () => {
    using run = session("codex", ".codex/config.toml", "codex-config.toml");
    const backup = Bun.TOML.parse(run.backup) as { mcp_servers: object; projects: object };
    // Everything as before, plus what codex added: a server, and the project it was told to trust.
    expect(Bun.TOML.parse(run.restored)).toEqual({
      ...backup,
      mcp_servers: { ...backup.mcp_servers, "added-by-agent": { command: "added-cmd", args: ["x"] } },
      projects: { ...backup.projects, [run.fixture.project]: { trust_level: "trusted" } },
    });
    expect(run.restored).not.toContain("/opt/tg/thoughtgate");
    expect(run.restored).not.toContain("THOUGHTGATE");
    // codex keeps comments outside the tables it rewrites; so does the restore.
    expect(run.restored).toContain("# Codex CLI settings");
    expect(run.restored).toContain("memory = { command = \"npx\", args = [\"-y\", \"@modelcontextprotocol/server-memory\"] } # shared with the project");
    // The [x.env] tables codex made of wrap's inline env go with the blank line before them.
    expect(run.restored).not.toContain("\n\n\n");
  });

  test("goose: the user switched a server on and added one; goose wrote the file back in its own layout", () => {
    using run = session("goose", ".config/goose/config.yaml", "goose-config.yaml");
    const backup = Bun.YAML.parse(run.backup) as { extensions: Record<string, Record<string, unknown>> };
    expect(Bun.YAML.parse(run.restored)).toEqual({
      ...backup,
      extensions: {
        ...backup.extensions,
        sqlite: { ...backup.extensions.sqlite, enabled: true },
        memory: { enabled: true, type: "stdio", name: "memory", cmd: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], envs: {}, env_keys: [], timeout: 300 },
      },
    });
    expect(run.restored).not.toContain("/opt/tg/thoughtgate");
    expect(run.restored).not.toContain("THOUGHTGATE");
  });

  test("Qwen Code: `qwen mcp add` wrote back every server with $HOME expanded, and its settings version", () => {
    using run = session("qwen", ".qwen/settings.json", "qwen-user-settings.json");
    const backup = parse(run.backup) as { mcpServers: object };
    // The args wrap owned come back as written ("$HOME/notes"), not as Qwen expanded them.
    expect(parse(run.restored)).toEqual({ ...backup, mcpServers: { ...backup.mcpServers, "added-by-agent": { command: "added-cmd", args: ["x"] } }, $version: 4 });
    expect(run.restored).not.toContain("/opt/tg/thoughtgate");
  });

  test("Qwen Code: starting up, it added its settings version to the project file", () => {
    using run = session("qwen", "src/projet-été/.qwen/settings.json", "qwen-project-settings.json");
    expect(parse(run.restored)).toEqual({ ...(parse(run.backup) as object), $version: 4 });
    expect(run.restored).not.toContain("/opt/tg/thoughtgate");
  });

  test("Cline CLI: `cline mcp add` wrote the file back, servers in its nested transport form", () => {
    using run = session("cline", ".cline/data/settings/cline_mcp_settings.json", "cline_mcp_settings.json");
    const backup = parse(run.backup) as { mcpServers: object };
    expect(parse(run.restored)).toEqual({ ...backup, mcpServers: { ...backup.mcpServers, "added-by-agent": { transport: { type: "stdio", command: "added-cmd", args: ["x"] } } } });
    expect(run.restored).not.toContain("/opt/tg/thoughtgate");
  });
});

describe("Codex", () => {
  test("$CODEX_HOME moves the user file; project files from the working directory up to the repository root, nearest first", () => {
    using dirs = emptyHome();
    write(join(dirs.home, "codex-home", "config.toml"), '[mcp_servers.a]\ncommand = "user-a"\n');
    write(join(dirs.home, ".codex", "config.toml"), '[mcp_servers.ignored]\ncommand = "not-read"\n');
    write(join(dirs.home, "src", ".git", "HEAD"), "ref: refs/heads/main\n");
    write(join(dirs.home, "src", ".codex", "config.toml"), '[mcp_servers]\na = { command = "repo-a" }\nb.command = "repo-b"\n');
    write(join(dirs.project, ".codex", "config.toml"), '[mcp_servers.b]\ncommand = "app-b"\n');
    // Above the repository root: not a project file of this project.
    write(join(dirs.home, ".codex-outside", "x"), "");
    const files = discover("codex", dirs.ctx({ CODEX_HOME: join(dirs.home, "codex-home") }));
    expect(paths(files, dirs.home)).toEqual(["project ~/src/app/.codex/config.toml", "project ~/src/.codex/config.toml", "user ~/codex-home/config.toml"]);
    expect(summary(files)).toEqual(["project b: governed", "project a: governed", "project b: governed (shadowed by project)", "user a: governed (shadowed by project)"]);
  });

  test("outside a repository only the working directory's project file; at home the user file is not read twice", () => {
    using dirs = emptyHome();
    write(join(dirs.home, "src", ".codex", "config.toml"), '[mcp_servers.parent]\ncommand = "p"\n');
    expect(paths(discover("codex", dirs.ctx()), dirs.home)).toEqual(["project ~/src/app/.codex/config.toml (missing)", "user ~/.codex/config.toml (missing)"]);
    expect(paths(discover("codex", { ...dirs.ctx(), cwd: dirs.home }), dirs.home)).toEqual(["user ~/.codex/config.toml (missing)"]);
  });

  test("a file that is not TOML, or defines a key twice, is a problem and nothing in it is governed", () => {
    using dirs = emptyHome();
    const path = join(dirs.home, ".codex", "config.toml");
    write(path, '[mcp_servers.a]\ncommand = "x"\ncommand = "y"\n');
    expect(fileAt(discover("codex", dirs.ctx()), path).problems).toEqual(["does not parse as TOML (line 3, column 1: Defining a key multiple times is invalid)"]);
    write(path, '[mcp_servers.a]\ncommand = "x"\nargs = [\n');
    expect(fileAt(discover("codex", dirs.ctx()), path).problems[0]).toStartWith("does not parse as TOML (line 4");
    write(path, 'mcp_servers = "none"\n');
    expect(fileAt(discover("codex", dirs.ctx()), path).problems).toEqual(['"mcp_servers" is not a table of servers']);
  });
});

describe("Copilot CLI", () => {
  test("$COPILOT_HOME moves the user file and its settings; XDG_CONFIG_HOME does not, but an old XDG file is read too", () => {
    using dirs = emptyHome();
    write(join(dirs.home, "ch", "mcp-config.json"), JSON.stringify({ mcpServers: { a: { type: "local", command: "a" }, off: { type: "local", command: "o" } } }));
    write(join(dirs.home, "ch", "settings.json"), '{ "disabledMcpServers": ["off"] }');
    write(join(dirs.home, "xdg", ".copilot", "mcp-config.json"), JSON.stringify({ mcpServers: { old: { command: "old" } } }));
    const files = discover("copilot", dirs.ctx({ COPILOT_HOME: join(dirs.home, "ch"), XDG_CONFIG_HOME: join(dirs.home, "xdg") }));
    expect(paths(files, dirs.home)).toEqual([
      "project ~/src/app/.mcp.json (missing)",
      "project ~/src/app/.github/mcp.json (missing)",
      "user ~/ch/mcp-config.json",
      "user ~/xdg/.copilot/mcp-config.json",
    ]);
    expect(summary(files)).toEqual(["user a: governed", "user off: governed (disabled by disabledMcpServers)", "user old: governed"]);
  });

  test("workspace files win over the user's; `type: local` is stdio, http is governed through shim --url, sse is left", () => {
    using fixture = agentConfigFixture("copilot");
    const files = discover("copilot", fixture.ctx);
    expect(summary(files)).toEqual([
      "project postgres: governed",
      "project context7: governed",
      "project sentry: remote",
      "project azure: governed",
      "user context7: governed (shadowed by project)",
      "user github: governed",
      "user playwright: governed (disabled by disabledMcpServers)",
      "user linear: governed",
    ]);
  });
});

describe("opencode", () => {
  test("global files under XDG_CONFIG_HOME, $OPENCODE_CONFIG, project files up to / outside a repository, .opencode dirs, $OPENCODE_CONFIG_DIR", () => {
    using dirs = emptyHome();
    const server = (command: string) => JSON.stringify({ mcp: { [command]: { type: "local", command: [command] } } });
    write(join(dirs.home, "xdg", "opencode", "config.json"), server("global-config"));
    write(join(dirs.home, "custom.json"), server("custom"));
    write(join(dirs.home, "src", "opencode.jsonc"), server("parent"));
    write(join(dirs.project, ".opencode", "opencode.json"), server("dot-dir"));
    write(join(dirs.home, ".opencode", "opencode.json"), server("home-dot-dir"));
    write(join(dirs.home, "ocdir", "opencode.json"), server("config-dir"));
    const files = discover("opencode", dirs.ctx({ XDG_CONFIG_HOME: join(dirs.home, "xdg"), OPENCODE_CONFIG: "../../custom.json", OPENCODE_CONFIG_DIR: join(dirs.home, "ocdir"), OPENCODE_CONFIG_CONTENT: "{}" }));
    // In order of preference: the file opencode merges last first.
    expect(paths(files, dirs.home)).toEqual([
      "user ~/ocdir/opencode.json",
      "user ~/.opencode/opencode.json",
      "project ~/src/app/.opencode/opencode.json",
      "project ~/src/app/opencode.json (missing)",
      "project ~/src/opencode.jsonc",
      "user ~/custom.json",
      "user ~/xdg/opencode/opencode.jsonc (missing)",
      "user ~/xdg/opencode/config.json",
    ]);
    expect(files.at(-1)?.warnings).toEqual(["OPENCODE_CONFIG_CONTENT is set: MCP servers defined in it are not seen or governed by wrap"]);
  });

  test("in a repository, project files stop at its root; the command list and {env:VAR} make the effective command", () => {
    using fixture = agentConfigFixture("opencode", { GITHUB_TOKEN: "ghp_1" });
    write(join(fixture.home, "src", ".git", "HEAD"), "");
    write(join(fixture.home, "opencode.json"), "{}");
    const files = discover("opencode", fixture.ctx);
    expect(paths(files, fixture.home)).toEqual(["project ~/src/projet-été/opencode.json", "user ~/.config/opencode/opencode.jsonc"]);
    const github = files.flatMap((file) => file.entries).find((entry) => entry.name === "github");
    expect(github?.layout).toEqual({ at: [], command: "command", env: "environment" });
    expect(github?.effective?.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_1" });
    const filesystem = files.flatMap((file) => file.entries).find((entry) => entry.name === "filesystem");
    expect(filesystem?.effective?.args.at(-1)).toBe(`${fixture.home}/notes`);
  });
});

describe("Gemini CLI and Qwen Code", () => {
  test("project file only in the working directory, not at home; servers turned off by name, case-insensitively; extension servers listed", () => {
    using fixture = agentConfigFixture("gemini", { GITHUB_TOKEN: "ghp_1" });
    write(join(fixture.home, ".gemini", "mcp-server-enablement.json"), JSON.stringify({ pythontools: { enabled: false } }));
    const files = discover("gemini", fixture.ctx);
    expect(summary(files)).toEqual([
      "project github: governed",
      "project docs: governed",
      "user github: governed (shadowed by project)",
      "user pythonTools: governed (disabled by `gemini mcp disable`)",
      "user httpServer: governed",
      "user sseServer: remote",
      "user legacy: governed (disabled by mcp.excluded)",
      "user cloud-run: extension",
    ]);
    const python = files.flatMap((file) => file.entries).find((entry) => entry.name === "pythonTools");
    expect(python?.effective?.env).toEqual({ DATABASE_URL: "sqlite:///dev.db" });
    expect(paths(discover("gemini", { ...fixture.ctx, cwd: fixture.home }), fixture.home).slice(0, 1)).toEqual(["user ~/.gemini/settings.json"]);
  });

  test("mcp.allowed turns off every server not listed", () => {
    using dirs = emptyHome();
    write(join(dirs.home, ".gemini", "settings.json"), JSON.stringify({ mcpServers: { a: { command: "a" }, b: { command: "b" } }, mcp: { allowed: ["A"] } }));
    expect(summary(discover("gemini", dirs.ctx()))).toEqual(["user a: governed", "user b: governed (disabled by mcp.allowed (not listed))"]);
  });

  test("GEMINI_CLI_HOME and QWEN_HOME move the user files", () => {
    using dirs = emptyHome();
    expect(paths(discover("gemini", dirs.ctx({ GEMINI_CLI_HOME: join(dirs.home, "g") })), dirs.home)).toEqual(["project ~/src/app/.gemini/settings.json (missing)", "user ~/g/.gemini/settings.json (missing)"]);
    expect(paths(discover("qwen", dirs.ctx({ QWEN_HOME: "~/q" })), dirs.home)).toEqual(["project ~/src/app/.qwen/settings.json (missing)", "user ~/q/settings.json (missing)"]);
    expect(paths(discover("qwen", dirs.ctx({ QWEN_HOME: "../qq" })), dirs.home)).toEqual(["project ~/src/app/.qwen/settings.json (missing)", "user ~/src/qq/settings.json (missing)"]);
  });
});

describe("goose", () => {
  test("GOOSE_PATH_ROOT and XDG_CONFIG_HOME move config.yaml; $GOOSE_ADDITIONAL_CONFIG_FILES are read, the user file winning", () => {
    using dirs = emptyHome();
    expect(paths(discover("goose", dirs.ctx({ GOOSE_PATH_ROOT: join(dirs.home, "gr") })), dirs.home)).toEqual(["user ~/gr/config/config.yaml (missing)"]);
    expect(paths(discover("goose", dirs.ctx({ XDG_CONFIG_HOME: join(dirs.home, "x") })), dirs.home)).toEqual(["user ~/x/goose/config.yaml (missing)"]);
    // A relative XDG_CONFIG_HOME is not one (XDG Base Directory spec): goose uses ~/.config.
    expect(paths(discover("goose", dirs.ctx({ XDG_CONFIG_HOME: "x" })), dirs.home)).toEqual(["user ~/.config/goose/config.yaml (missing)"]);
    write(join(dirs.home, ".config", "goose", "config.yaml"), "extensions:\n  a:\n    type: stdio\n    cmd: user-a\n    enabled: true\n");
    write(join(dirs.home, "team.yaml"), "extensions:\n  a:\n    type: stdio\n    cmd: team-a\n    enabled: true\n  b:\n    type: stdio\n    cmd: team-b\n    enabled: true\n");
    const files = discover("goose", dirs.ctx({ GOOSE_ADDITIONAL_CONFIG_FILES: `${join(dirs.home, "team.yaml")}:${join(dirs.home, "missing.yaml")}` }));
    expect(summary(files)).toEqual(["user a: governed", "user a: governed (shadowed by user)", "user b: governed"]);
  });

  test("anchors, aliases or merge keys under extensions, more than one document, or YAML that does not parse: the file is left alone", () => {
    using dirs = emptyHome();
    const path = join(dirs.home, ".config", "goose", "config.yaml");
    const problems = (text: string) => {
      write(path, text);
      const [file] = discover("goose", dirs.ctx());
      return { problems: file?.problems, governed: file?.entries.filter((entry) => entry.governed).length ?? 0 };
    };
    expect(problems("extensions:\n  a: &base\n    type: stdio\n    cmd: x\n  b: *base\n")).toEqual({
      problems: ["uses YAML anchors, aliases or merge keys under extensions: an edit there would change what the aliases say too, so wrap leaves the file alone"],
      governed: 0,
    });
    expect(problems("extensions:\n  a:\n    <<: {type: stdio}\n    cmd: x\n").problems).toHaveLength(1);
    expect(problems("extensions: {}\n---\nextensions: {}\n")).toEqual({ problems: ["holds more than one YAML document"], governed: 0 });
    expect(problems("extensions:\n  a: [\n").problems?.[0]).toStartWith("does not parse as YAML (line");
    expect(problems("extensions:\n  a:\n    type: stdio\n    cmd: x\n  a:\n    type: stdio\n    cmd: y\n").problems?.[0]).toStartWith("does not parse as YAML");
    // Anchors elsewhere in the file are fine.
    expect(problems("defaults: &d {x: 1}\nother: *d\nextensions:\n  a: {type: stdio, cmd: x}\n")).toEqual({ problems: [], governed: 1 });
    expect(problems("# nothing yet\n")).toEqual({ problems: [], governed: 0 });
  });
});

describe("Cline", () => {
  test("the CLI's file moves with CLINE_DIR, CLINE_DATA_DIR and CLINE_MCP_SETTINGS_PATH; the editors' global storage is read", () => {
    using dirs = emptyHome();
    write(join(dirs.home, ".config", "Cursor", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), '{ "mcpServers": {} }');
    expect(paths(discover("cline", dirs.ctx({ CLINE_DIR: join(dirs.home, "cd") })), dirs.home)).toEqual([
      "user ~/cd/data/settings/cline_mcp_settings.json (missing)",
      "user ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json (missing)",
      "user ~/.config/Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    ]);
    expect(paths(discover("cline", dirs.ctx({ CLINE_DATA_DIR: join(dirs.home, "dd") })), dirs.home)[0]).toBe("user ~/dd/settings/cline_mcp_settings.json (missing)");
    expect(paths(discover("cline", dirs.ctx({ CLINE_MCP_SETTINGS_PATH: join(dirs.home, "m.json") })), dirs.home)[0]).toBe("user ~/m.json (missing)");
    expect(discover("cline", { ...dirs.ctx(), platform: "darwin" })[1]?.path).toBe(
      join(dirs.home, "Library", "Application Support", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
    );
  });

  test("the CLI's nested transport form and the extension's flat form; disabled: true beside either", () => {
    using fixture = agentConfigFixture("cline");
    const entries = discover("cline", fixture.ctx).flatMap((file) => file.entries);
    expect(entries.map((entry) => [entry.name, entry.governed ? "governed" : entry.status, entry.layout.at, entry.disabled])).toEqual([
      ["fs", "governed", ["transport"], undefined],
      ["sqlite", "governed", ["transport"], "`disabled: true`"],
      ["rem", "remote", [], undefined],
      ["github.com/modelcontextprotocol/servers/tree/main/src/github", "governed", [], undefined],
      ["weather", "governed", [], "`disabled: true`"],
      ["remote", "remote", [], undefined],
    ]);
  });
});

describe("Amp", () => {
  test("$AMP_SETTINGS_FILE replaces the user file; XDG_CONFIG_HOME moves it; workspace files up to the repository root", () => {
    using dirs = emptyHome();
    write(join(dirs.home, "src", ".git", "HEAD"), "");
    write(join(dirs.home, "src", ".amp", "settings.jsonc"), '{ "amp.mcpServers": { "repo": { "command": "r" } } }');
    write(join(dirs.home, "x", "amp", "settings.jsonc"), "{}");
    expect(paths(discover("amp", dirs.ctx({ XDG_CONFIG_HOME: join(dirs.home, "x") })), dirs.home)).toEqual([
      "project ~/src/app/.amp/settings.json (missing)",
      "project ~/src/.amp/settings.jsonc",
      "user ~/x/amp/settings.json (missing)",
      "user ~/x/amp/settings.jsonc",
    ]);
    expect(paths(discover("amp", dirs.ctx({ AMP_SETTINGS_FILE: join(dirs.home, "amp.json") })), dirs.home).at(-1)).toBe("user ~/amp.json (missing)");
  });

  test("servers are in the one key `amp.mcpServers`", () => {
    using fixture = agentConfigFixture("amp");
    const files = discover("amp", fixture.ctx);
    expect(summary(files)).toEqual(["project project-specific: governed", "user playwright: governed", "user postgres: governed", "user sourcegraph: governed"]);
    expect(files[1]?.entries[0]?.jsonPath).toEqual(["amp.mcpServers", "playwright"]);
  });
});

test("Kiro and Junie: the workspace file wins over the user's", () => {
  using kiro = agentConfigFixture("kiro", { AWS_PROFILE: "dev" });
  expect(summary(discover("kiro", kiro.ctx))).toEqual([
    "project aws-docs: governed",
    "project git: governed",
    "user aws-docs: governed (shadowed by project)",
    "user web-search: governed (disabled by `disabled: true`)",
    "user api-server: governed",
  ]);
  using junie = agentConfigFixture("junie");
  expect(summary(discover("junie", junie.ctx))).toEqual(["project gradle: governed", "user filesystem: governed", "user remote-docs: governed"]);
});

test("the coverage table says a disabled server is governed should it be turned on", () => {
  using fixture = agentConfigFixture("goose");
  const lines = renderCoverage(discover("goose", fixture.ctx), fixture.ctx).split("\n");
  expect(lines).toContain("sqlite              user   ~/.config/goose/config.yaml  yes (disabled by `enabled: false`: governed if enabled mid-session)");
  expect(lines).toContain("developer           user   ~/.config/goose/config.yaml  no: a goose builtin extension: goose runs it itself, so there is no command to put a shim in front of");
});

describe("which agent a command is", () => {
  test.each([
    ["codex", "codex"],
    ["/usr/local/bin/copilot", "copilot"],
    ["opencode", "opencode"],
    ["gemini", "gemini"],
    ["qwen", "qwen"],
    ["kiro-cli", "kiro"],
    ["kiro", "kiro"],
    ["goose", "goose"],
    ["cline", "cline"],
    ["amp", "amp"],
    ["junie", "junie"],
    ["agent", null],
  ])("%s → %s", (program, agent) => {
    expect(detectAgent([program, "--help"])).toBe(agent as AgentType | null);
  });

  test("`agent` is Cursor's CLI only when it leads into a cursor-agent installation", () => {
    using dir = tempDir();
    const versions = join(dir.path, ".local", "share", "cursor-agent", "versions", "2026.11.01");
    write(join(versions, "cursor-agent"), "#!/bin/sh\n");
    mkdirSync(join(dir.path, "bin"));
    symlinkSync(join(versions, "cursor-agent"), join(dir.path, "bin", "agent"));
    write(join(dir.path, "other", "agent"), "#!/bin/sh\n");
    expect(detectAgent([join(dir.path, "bin", "agent"), "fix the tests"])).toBe("cursor");
    expect(detectAgent([join(dir.path, "other", "agent")])).toBe(null);
  });
});
