/**
 * What a person who types it wrong is told, through the compiled binary: each mistyped command,
 * flag, policy key and value with the suggestion it gets (src/core/suggest.ts; for the policy, the
 * suggestions come from the schema itself).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../support/harness.ts";
import { runBinary } from "../support/serve.ts";

describe("a mistyped command line: exit 2, the line that was meant, and the help of the command that was run", () => {
  test.each([
    // [argv, the error line, the hint line]
    [["approv", "abc123"], "unknown command \"approv\": did you mean `thoughtgate approve`?", "run `thoughtgate --help` for usage"],
    [["wrp", "--", "claude"], "unknown command \"wrp\": did you mean `thoughtgate wrap`?", "run `thoughtgate --help` for usage"],
    [["claude", "-p", "hi"], "unknown command \"claude\": to govern that agent, did you mean `thoughtgate wrap -- claude -p hi`?", "run `thoughtgate --help` for usage"],
    [["wrap", "claude", "-p", "hi"], "wrap runs the agent's command after --: did you mean `thoughtgate wrap -- claude -p hi`?", "run `thoughtgate wrap --help` for usage"],
    [["wrap", "claude"], "wrap runs the agent's command after --: did you mean `thoughtgate wrap -- claude`?", "run `thoughtgate wrap --help` for usage"],
    [
      ["wrap", "--profile", "development", "claude", "-p", "fix the bug"],
      "wrap runs the agent's command after --: did you mean `thoughtgate wrap --profile development -- claude -p 'fix the bug'`?",
      "run `thoughtgate wrap --help` for usage",
    ],
    [["wrap", "--no-restore", "claude"], "wrap runs the agent's command after --: did you mean `thoughtgate wrap --no-restore -- claude`?", "run `thoughtgate wrap --help` for usage"],
    [["shim", "npx", "-y", "server"], "shim runs the MCP server's command after --: did you mean `thoughtgate shim -- npx -y server`?", "run `thoughtgate shim --help` for usage"],
    [["inspect", "node", "server.js"], "inspect runs the MCP server's command after --: did you mean `thoughtgate inspect -- node server.js`?", "run `thoughtgate inspect --help` for usage"],
    [["wrap", "--dryrun", "--", "claude"], 'unknown flag --dryrun (did you mean "--dry-run"?)', "run `thoughtgate wrap --help` for usage"],
    [["doctor", "--jsn"], 'unknown flag --jsn (did you mean "--json"?)', "run `thoughtgate doctor --help` for usage"],
    [["validate-config", "--explian"], 'unknown flag --explian (did you mean "--explain"?)', "run `thoughtgate validate-config --help` for usage"],
    [["shim", "--profile", "prod", "--", "cat"], '--profile: expected one of production|development, got "prod" (did you mean "production"?)', "run `thoughtgate shim --help` for usage"],
    [["auth", "lgin"], "unknown command \"auth lgin\": did you mean `thoughtgate auth login`?", "run `thoughtgate auth --help` for usage"],
    [["enroll", "claud-code"], 'enroll: expected one of claude-desktop|claude-code|cursor|vscode|windsurf|zed|codex|copilot|opencode|gemini|qwen|kiro|goose|cline|amp|junie, got "claud-code" (did you mean "claude-code"?)', "run `thoughtgate enroll --help` for usage"],
    [["pins", "lst"], 'pins: expected one of list|show|accept|reset, got "lst" (did you mean "list"?)', "run `thoughtgate pins --help` for usage"],
  ] as const)("%p", async (argv, error, hint) => {
    const result = await runBinary([...argv]);
    expect(result).toEqual({ exitCode: 2, stdout: "", stderr: `[error] ${error}\n[info] ${hint}\n` });
  });

  test("the agent's command after a missing -- starts at the first word that is no flag of ours and no flag's value", async () => {
    const result = await runBinary(["wrap", "--agent-type", "claude-code", "--dry-run", "claude", "--model", "x"]);
    expect(result.stderr.split("\n")[0]).toBe("[error] wrap runs the agent's command after --: did you mean `thoughtgate wrap --agent-type claude-code --dry-run -- claude --model x`?");
  });

  test("enroll takes the agent's command as wrap -- claude does: `enroll claude` enrolls Claude Code, `unenroll claude` puts it back", async () => {
    using home = tempDir();
    const env = { HOME: home.path, XDG_CONFIG_HOME: join(home.path, ".config"), XDG_STATE_HOME: join(home.path, ".local", "state") };
    const original = '{ "mcpServers": { "notes": { "command": "node", "args": ["notes.js"] } } }\n';
    writeFileSync(join(home.path, ".claude.json"), original);
    mkdirSync(join(home.path, ".claude"));
    writeFileSync(join(home.path, ".claude", "settings.json"), "{}\n");
    const enrolled = await runBinary(["enroll", "claude"], { env, cwd: home.path });
    expect(enrolled).toMatchObject({
      exitCode: 0,
      stdout: "Claude Code: enrolled ~/.claude.json: notes\nClaude Code: its own tools (Bash, Read, Edit, Write, WebFetch, …) governed in every run: PreToolUse hook in ~/.claude/settings.json\n",
    });
    const back = await runBinary(["unenroll", "claude"], { env, cwd: home.path });
    expect(back).toMatchObject({ exitCode: 0 });
    expect(readFileSync(join(home.path, ".claude.json"), "utf8")).toBe(original);
    expect(readFileSync(join(home.path, ".claude", "settings.json"), "utf8")).toBe("{}\n");
  });

  test("an unknown word that is close to nothing lists the commands", async () => {
    const result = await runBinary(["frobnicate"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.split("\n")[0]).toBe("[error] unknown command \"frobnicate\"; the commands: wrap, demo, shim, inspect, doctor, serve, tasks, approvals, approve, deny, validate-config, unwrap, enroll, unenroll, arbiter, hook, auth, pins, log, policy");
  });
});

describe("a mistyped policy: validate-config names each problem with the key or value that was meant, at its file:line:column", () => {
  test.each([
    // [the policy after `schema: 1`, the problem line, where it is: the key when it is unknown, else the value or the mapping that lacks it]
    ["governance:\n  rules:\n    - mach: delete_*\n      action: deny\n", 'governance.rules[0].mach: unknown key "mach" (did you mean "match"?); allowed keys: id, match, method, source, server, annotations, arguments, project, action, policy_id, approval', "4:7"],
    ["governance:\n  defualts:\n    action: deny\n", 'governance.defualts: unknown key "defualts" (did you mean "defaults"?); allowed keys: defaults, rules', "3:3"],
    [
      "governance:\n  rules:\n    - match: '*'\n      annotations: { readOnly: true }\n      action: forward\n",
      'governance.rules[0].annotations.readOnly: unknown key "readOnly" (did you mean "readOnlyHint"?); allowed keys: readOnlyHint, destructiveHint, idempotentHint, openWorldHint',
      "5:22",
    ],
    ["governance:\n  rules:\n    - match: read_*\n      action: allow\n", 'governance.rules[0].action: expected one of forward|deny|approve|policy, got "allow" (did you mean "forward"?)', "5:15"],
    ["governance:\n  defaults: { action: block }\n", 'governance.defaults.action: expected one of forward|deny|approve|policy, got "block" (did you mean "deny"?)', "3:23"],
    ["governance:\n  rules:\n    - action: deny\n", 'governance.rules[0].match: a rule needs match: the tool names it applies to, a glob like "delete_*" ("*" for every tool)', "4:7"],
    ["governance:\n  rules:\n    - match: delete_*\n", "governance.rules[0].action: a rule needs action: what to do with a matching call: forward, deny, approve, policy", "4:7"],
    ["governence: {}\n", 'governence: unknown key "governence" (did you mean "governance"?); allowed keys: schema, sources, governance, approval, pins, cedar, secrets, telemetry, audit, cli, policy', "2:1"],
    ["sources:\n  - id: fs\n    expose: { mode: whitelist, tools: [read_*] }\n", 'sources[0].expose.mode: expected one of all|allowlist|blocklist, got "whitelist" (did you mean "allowlist"?)', "4:21"],
    ["approval:\n  page-only:\n    destination: { type: page }\n", 'approval.page-only.destination.type: expected destination.type one of any|elicitation|web|cli|slack, got "page" (did you mean "web"?)', "4:26"],
    [
      "approval:\n  oncall: {}\ngovernance:\n  rules:\n    - match: '*'\n      action: approve\n      approval: oncal\n",
      'governance.rules[0].approval: no approval workflow named "oncal" (did you mean "oncall"?); defined: oncall',
      "8:17",
    ],
  ] as const)("%p", async (body, problem, place) => {
    using dir = tempDir();
    const file = join(dir.path, "thoughtgate.yaml");
    writeFileSync(file, `schema: 1\n${body}`);
    const result = await runBinary(["validate-config", file]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(`${file}: 1 problem\n${file}:${place}: ${problem}\n`);
  });
});

test("a policy's own words in a problem (a cloned repository's project policy) are shown escaped, in validate-config and doctor", async () => {
  using home = tempDir();
  using project = tempDir();
  writeFileSync(join(project.path, "thoughtgate.yaml"), 'schema: 1\ngovernance:\n  rules:\n    - { match: x, action: deny, "ev\\u202eil\\u001b[31m": 1 }\n');
  const env = { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "config"), XDG_STATE_HOME: join(home.path, "state") };
  const checked = await runBinary(["validate-config"], { env, cwd: project.path });
  const doctor = await runBinary(["doctor"], { env, cwd: project.path });
  for (const output of [checked.stdout, doctor.stdout]) {
    expect(output).toContain('unknown key "ev\\u202eil\\u001b[31m"');
    expect(output).not.toMatch(/[\u202e\u001b]/);
  }
  expect([checked.exitCode, doctor.exitCode]).toEqual([1, 1]);
});

describe("a policy with several mistakes: all of them at once, each at its place", () => {
  test("every problem in one run, a misspelt `arguments:` reported as the misspelling it is", async () => {
    using dir = tempDir();
    const file = join(dir.path, "thoughtgate.yaml");
    writeFileSync(
      file,
      'schema: 1\ngovernance:\n  defualts: { action: approve }\n  rules:\n    - id: writes\n      match: "{write_file,edit_file}"\n      argumets:\n        path: { within: "${PROJECT}" }\n      action: forward\n    - { id: x, match: "*", action: allow }\n',
    );
    const result = await runBinary(["validate-config", file]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(
      `${file}: 3 problems\n` +
        `${file}:3:3: governance.defualts: unknown key "defualts" (did you mean "defaults"?); allowed keys: defaults, rules\n` +
        `${file}:7:7: governance.rules[0].argumets: unknown key "argumets" (did you mean "arguments"?); allowed keys: id, match, method, source, server, annotations, arguments, project, action, policy_id, approval\n` +
        `${file}:10:36: governance.rules[1].action: expected one of forward|deny|approve|policy, got "allow" (did you mean "forward"?)\n`,
    );
  });

  test("YAML that does not parse: each syntax error with its line and column", async () => {
    using dir = tempDir();
    const file = join(dir.path, "thoughtgate.yaml");
    writeFileSync(file, "schema: 1\na: [\nb: }\n");
    const result = await runBinary(["validate-config", file]);
    expect(result.exitCode).toBe(1);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`${file}: 2 problems`);
    expect([lines[1]?.startsWith(`${file}:3:1: (file): not valid YAML: `), lines[2]?.startsWith(`${file}:3:4: (file): not valid YAML: `)]).toEqual([true, true]);
  });

  test("a rule's source that names no server of the agents' configurations is a warning with the id meant; the README's policy gets none", async () => {
    using home = tempDir();
    using project = tempDir();
    const env = { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "config"), XDG_STATE_HOME: join(home.path, "state") };
    // Claude Code's project configuration names one server, fs.
    writeFileSync(join(project.path, ".mcp.json"), JSON.stringify({ mcpServers: { fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] } } }));
    const file = join(project.path, "policy.yaml");
    writeFileSync(file, 'schema: 1\ngovernance:\n  rules:\n    - id: writes\n      source: filesystem\n      match: write_file\n      action: forward\n');
    const wrong = await runBinary(["validate-config", file], { env, cwd: project.path });
    expect(wrong).toMatchObject({ exitCode: 0 });
    expect(wrong.stdout).toBe(`ok: ${file}\nwarning: ${file}:5:15: governance.rules[0].source: "filesystem" names no MCP server in the agent configurations found here (fs) (did you mean "fs"? its command names filesystem); the rule never applies\n`);

    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("\n## A policy in five minutes\n"));
    const policy = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(policy).toContain("source:");
    writeFileSync(file, policy);
    const fromReadme = await runBinary(["validate-config", file], { env, cwd: project.path });
    expect(fromReadme).toMatchObject({ exitCode: 0, stdout: `ok: ${file}\n` });
  });
});
