/**
 * `enroll` and `unenroll` of the agents' own-tools hooks, through the compiled binary: Codex's
 * PreToolUse hook in ~/.codex/hooks.json with its trust in config.toml, Gemini CLI's BeforeTool hook
 * in ~/.gemini/settings.json, Claude Code's PreToolUse hook in ~/.claude/settings.json. Each file
 * comes back byte for byte, with what the user changed meanwhile kept; a file that did not exist
 * is created and is gone again after. `doctor` says, agent by agent, whether the hook is installed,
 * and names a hook that is missing, changed or (Codex) untrusted with its fix.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../support/harness.ts";
import { runBinary } from "../support/serve.ts";

function sandbox() {
  const home = tempDir();
  // No codex on PATH: enroll says the hook was not checked with Codex itself (the agents' tests check it).
  const env = { PATH: "/usr/bin:/bin", HOME: home.path, XDG_CONFIG_HOME: join(home.path, ".config"), XDG_STATE_HOME: join(home.path, ".local", "state"), CODEX_HOME: undefined, GEMINI_CLI_HOME: undefined };
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(home.path, path)), { recursive: true });
    writeFileSync(join(home.path, path), text);
  };
  const read = (path: string) => readFileSync(join(home.path, path), "utf8");
  const exists = (path: string) => existsSync(join(home.path, path));
  const run = (...args: string[]) => runBinary(args, { env, cwd: home.path });
  return { home, env, write, read, exists, run, shim: join(home.path, ".local", "state", "thoughtgate", "bin", "thoughtgate"), [Symbol.dispose]: () => home[Symbol.dispose]() };
}

const CODEX_CONFIG = `model = "fake-model"   # the user's own comment

[mcp_servers.notes]
command = "node"
args = ["notes.js"]
`;

/** A hook of the user's own, already trusted: it must keep its place (index 0) and so its trust. */
const CODEX_HOOKS = `{
    "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ] }
}
`;

test("enroll codex writes its hook last in hooks.json, trusted in config.toml under the key Codex gives it; unenroll puts both back, the user's edits kept", async () => {
  using box = sandbox();
  box.write(".codex/config.toml", CODEX_CONFIG);
  box.write(".codex/hooks.json", CODEX_HOOKS);
  const enrolled = await box.run("enroll", "codex");
  expect(enrolled.exitCode, enrolled.stderr).toBe(0);
  expect(enrolled.stdout).toBe(
    "Codex: enrolled ~/.codex/config.toml: notes\nCodex: its own tools (its shell, apply_patch, …) governed in every run: PreToolUse hook in ~/.codex/hooks.json and trusted in config.toml\nCodex: not checked with Codex itself (no codex on PATH); `thoughtgate doctor` checks the files\n",
  );
  const hooks = JSON.parse(box.read(".codex/hooks.json")) as { hooks: { PreToolUse: unknown[] } };
  expect(hooks.hooks.PreToolUse).toEqual([
    { hooks: [{ type: "command", command: "/usr/bin/true" }] },
    { hooks: [{ type: "command", command: `${box.shim} hook codex`, timeout: 600 }] },
  ]);
  const key = `${join(box.home.path, ".codex", "hooks.json")}:pre_tool_use:1:0`;
  expect(box.read(".codex/config.toml")).toMatch(new RegExp(`\\n\\n\\[hooks\\.state\\.${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\]\\ntrusted_hash = "sha256:[0-9a-f]{64}"\\n$`));

  // Untouched meanwhile: both files come back byte for byte.
  expect((await box.run("unenroll", "codex")).exitCode).toBe(0);
  expect(box.read(".codex/config.toml")).toBe(CODEX_CONFIG);
  expect(box.read(".codex/hooks.json")).toBe(CODEX_HOOKS);

  // Edited meanwhile (a setting changed in config.toml, a key added to hooks.json): the edits stay.
  expect((await box.run("enroll", "codex")).exitCode).toBe(0);
  box.write(".codex/config.toml", box.read(".codex/config.toml").replace('model = "fake-model"', 'model = "other-model"'));
  box.write(".codex/hooks.json", box.read(".codex/hooks.json").replace("{\n", '{\n  "note": "mine",\n'));
  const back = await box.run("unenroll", "codex");
  expect(back.exitCode, back.stderr).toBe(0);
  expect(back.stdout).toContain("codex: restored");
  expect(box.read(".codex/config.toml")).toBe(CODEX_CONFIG.replace('model = "fake-model"', 'model = "other-model"'));
  expect(JSON.parse(box.read(".codex/hooks.json"))).toEqual({ note: "mine", ...(JSON.parse(CODEX_HOOKS) as object) });
});

test("enroll codex with no hooks.json and no MCP server: both files made for the hook, and gone again after unenroll", async () => {
  using box = sandbox();
  const enrolled = await box.run("enroll", "codex");
  expect(enrolled.exitCode, enrolled.stderr).toBe(0);
  expect(enrolled.stdout).toContain("Codex: no MCP server in its own config files; its own tools are governed through its hook");
  expect(box.read(".codex/config.toml")).toStartWith(`[hooks.state.${JSON.stringify(`${join(box.home.path, ".codex", "hooks.json")}:pre_tool_use:0:0`)}]\ntrusted_hash = "sha256:`);
  expect((await box.run("unenroll", "codex")).exitCode).toBe(0);
  expect([box.exists(".codex/hooks.json"), box.exists(".codex/config.toml")]).toEqual([false, false]);
});

const GEMINI_SETTINGS = `{
    // the user's comment
    "security": { "auth": { "selectedType": "gemini-api-key" } },
    "hooks": { "BeforeTool": [ { "matcher": "write_file", "hooks": [ { "type": "command", "command": "true" } ] } ] }
}
`;

test("enroll gemini puts its BeforeTool hook first in settings.json; unenroll puts the bytes back, a setting the user added meanwhile kept; no settings.json: made, then gone", async () => {
  using box = sandbox();
  box.write(".gemini/settings.json", GEMINI_SETTINGS);
  const enrolled = await box.run("enroll", "gemini");
  expect(enrolled.exitCode, enrolled.stderr).toBe(0);
  expect(enrolled.stdout).toContain("Gemini CLI: its own tools (run_shell_command, write_file, replace, …) governed in every run: BeforeTool hook in ~/.gemini/settings.json\n");
  const settings = box.read(".gemini/settings.json");
  expect(settings).toContain("// the user's comment");
  expect(settings.indexOf(`${box.shim} hook gemini`)).toBeLessThan(settings.indexOf('"write_file"'));
  expect((await box.run("unenroll", "gemini")).exitCode).toBe(0);
  expect(box.read(".gemini/settings.json")).toBe(GEMINI_SETTINGS);

  expect((await box.run("enroll", "gemini")).exitCode).toBe(0);
  box.write(".gemini/settings.json", box.read(".gemini/settings.json").replace('"security"', '"ui": { "theme": "Dracula" },\n    "security"'));
  expect((await box.run("unenroll", "gemini")).exitCode).toBe(0);
  expect(box.read(".gemini/settings.json")).toBe(GEMINI_SETTINGS.replace('"security"', '"ui": { "theme": "Dracula" },\n    "security"'));

  using fresh = sandbox();
  expect((await fresh.run("enroll", "gemini")).exitCode).toBe(0);
  expect(fresh.read(".gemini/settings.json")).toContain(`${fresh.shim} hook gemini`);
  expect((await fresh.run("unenroll", "gemini")).exitCode).toBe(0);
  expect(fresh.exists(".gemini/settings.json")).toBe(false);
});

test("enroll claude with no ~/.claude/settings.json makes it for the hook; unenroll removes it", async () => {
  using box = sandbox();
  const enrolled = await box.run("enroll", "claude");
  expect(enrolled.exitCode, enrolled.stderr).toBe(0);
  expect(enrolled.stdout).toContain("Claude Code: its own tools (Bash, Read, Edit, Write, WebFetch, …) governed in every run: PreToolUse hook in ~/.claude/settings.json\n");
  expect(box.read(".claude/settings.json")).toContain(`${box.shim} hook claude-code`);
  expect((await box.run("unenroll", "claude")).exitCode).toBe(0);
  expect(box.exists(".claude/settings.json")).toBe(false);
});

type Check = { id: string; status: string; summary: string; details?: string[] };

async function hooksCheck(box: ReturnType<typeof sandbox>): Promise<Check> {
  const doctor = await box.run("doctor", "--json");
  const check = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks.find((one) => one.id === "agent-hooks");
  if (check === undefined) throw new Error(`no agent-hooks check: ${doctor.stdout}${doctor.stderr}`);
  return check;
}

test("doctor, agent by agent: the hook installed or not; missing, changed and untrusted each one line with the fix", async () => {
  using box = sandbox();
  const none = await hooksCheck(box);
  expect(none.status).toBe("pass");
  expect(none.details?.slice(0, 3)).toEqual([
    "Claude Code: hook not installed: its own tools governed under `thoughtgate wrap` only (`thoughtgate enroll claude-code` for every run)",
    "Codex: hook not installed: its own tools governed under `thoughtgate wrap` only (`thoughtgate enroll codex` for every run)",
    "Gemini CLI: hook not installed: its own tools governed under `thoughtgate wrap` only (`thoughtgate enroll gemini` for every run)",
  ]);
  for (const agent of ["claude-code", "codex", "gemini"]) expect((await box.run("enroll", agent)).exitCode).toBe(0);
  const enrolled = await hooksCheck(box);
  expect(enrolled.status).toBe("pass");
  expect(enrolled.details?.slice(0, 3)).toEqual([
    "Claude Code: PreToolUse hook enrolled in ~/.claude/settings.json: its own tools governed in every run",
    "Codex: PreToolUse hook enrolled in ~/.codex/hooks.json (trusted): its own tools governed in every run",
    "Gemini CLI: BeforeTool hook enrolled in ~/.gemini/settings.json: its own tools governed in every run",
  ]);

  // By hand: Claude's timeout shortened and its matcher narrowed, Codex's trust removed, Gemini's hook taken out.
  box.write(".claude/settings.json", box.read(".claude/settings.json").replace('"timeout": 600', '"timeout": 5').replace('"matcher": "*"', '"matcher": "Read"'));
  box.write(".codex/config.toml", box.read(".codex/config.toml").replace(/trusted_hash = "[^"]*"/, 'trusted_hash = "sha256:0"'));
  box.write(".gemini/settings.json", "{}\n");
  const broken = await hooksCheck(box);
  expect(broken.status).toBe("warn");
  expect(broken.summary).toBe("Claude Code, Codex, Gemini CLI: ThoughtGate's hook changed, untrusted, missing");
  const key = `${join(box.home.path, ".codex", "hooks.json")}:pre_tool_use:0:0`;
  expect(broken.details?.slice(0, 3)).toEqual([
    "Claude Code: ThoughtGate's PreToolUse hook in ~/.claude/settings.json is changed (timeout 5 instead of 600, matcher \"Read\" instead of \"*\"): plain runs are not governed; fix: `thoughtgate enroll claude-code` (and remove the changed entry)",
    `Codex: ThoughtGate's PreToolUse hook in ~/.codex/hooks.json is not trusted (no [hooks.state."${key}"] trusted_hash for it in config.toml): Codex skips it without a word; fix: \`thoughtgate enroll codex\``,
    "Gemini CLI: enrolled, but ThoughtGate's BeforeTool hook is missing from ~/.gemini/settings.json: plain runs are not governed; fix: `thoughtgate enroll gemini`",
  ]);

  // Another binary named in Claude's hook is a change too.
  box.write(".claude/settings.json", box.read(".claude/settings.json").replace(`${box.shim} hook`, "/opt/old/thoughtgate hook").replace('"timeout": 5', '"timeout": 600').replace('"matcher": "Read"', '"matcher": "*"'));
  expect((await hooksCheck(box)).details?.[0]).toBe(
    `Claude Code: ThoughtGate's PreToolUse hook in ~/.claude/settings.json is changed (runs /opt/old/thoughtgate hook claude-code instead of ${box.shim} hook claude-code): plain runs are not governed; fix: \`thoughtgate enroll claude-code\` (and remove the changed entry)`,
  );
});

test("enroll --all takes every agent that has run here, MCP servers or not: its own tools get their hook; unenroll --all takes them out again", async () => {
  using box = sandbox();
  // Claude Code and Gemini CLI have run here (their directories), with no MCP server anywhere; no other agent has.
  mkdirSync(join(box.home.path, ".claude"));
  mkdirSync(join(box.home.path, ".gemini"));
  const enrolled = await box.run("enroll", "--all");
  expect(enrolled.exitCode, enrolled.stderr).toBe(0);
  expect(enrolled.stdout).toBe(
    [
      "Claude Code: no MCP server in its own config files; its own tools are governed through its hook",
      "Claude Code: its own tools (Bash, Read, Edit, Write, WebFetch, …) governed in every run: PreToolUse hook in ~/.claude/settings.json",
      "Gemini CLI: no MCP server in its own config files; its own tools are governed through its hook",
      "Gemini CLI: its own tools (run_shell_command, write_file, replace, …) governed in every run: BeforeTool hook in ~/.gemini/settings.json",
      "",
    ].join("\n"),
  );
  expect(box.read(".claude/settings.json")).toContain("hook claude-code");
  expect(box.read(".gemini/settings.json")).toContain("hook gemini");
  expect(box.exists(".codex")).toBe(false);
  const unenrolled = await box.run("unenroll", "--all");
  expect(unenrolled.exitCode, unenrolled.stderr).toBe(0);
  expect([box.exists(".claude/settings.json"), box.exists(".gemini/settings.json")]).toEqual([false, false]);

  // With no agent's directory and no MCP server, there is nothing to enroll, and it says why.
  using empty = sandbox();
  const none = await empty.run("enroll", "--all");
  expect(none.exitCode).toBe(0);
  expect(none.stdout).toBe("no agent to enroll: none has an MCP config of its own, or the settings directory its hook would go in\n");
});

test("doctor in a project whose Claude settings could answer Claude Code's questions: says where ThoughtGate asks instead", async () => {
  using box = sandbox();
  box.write("repo/.git/HEAD", "ref: refs/heads/main\n");
  box.write("repo/.claude/settings.json", JSON.stringify({ hooks: { PermissionRequest: [{ hooks: [{ type: "command", command: "true" }] }] } }));
  box.write("repo/.claude/settings.local.json", '{"hooks": {');
  const doctor = await runBinary(["doctor", "--json"], { env: box.env, cwd: join(box.home.path, "repo") });
  const check = (JSON.parse(doctor.stdout) as { checks: Check[] }).checks.find((one) => one.id === "agent-hooks");
  expect(check?.details?.filter((line) => line.includes("hook (or cannot be read)"))).toEqual([
    "  ~/repo/.claude/settings.json has a PermissionRequest hook (or cannot be read): here ThoughtGate asks about Claude Code's own tools on the approvals page, the desktop and with thoughtgate approve, not in its prompt",
    "  ~/repo/.claude/settings.local.json has a PermissionRequest hook (or cannot be read): here ThoughtGate asks about Claude Code's own tools on the approvals page, the desktop and with thoughtgate approve, not in its prompt",
    "  ~/repo/.claude/settings.local.json has an Elicitation or ElicitationResult hook (or cannot be read): here ThoughtGate puts Claude Code no approval form; MCP tools are asked on the approvals page, the desktop and with thoughtgate approve",
  ]);
});
