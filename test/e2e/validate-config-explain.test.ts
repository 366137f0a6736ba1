/**
 * Policies that cannot silently do nothing, through the compiled binary: `validate-config` refuses
 * every Cedar mistake of the corpus at file:line:column (and `shim` will not start on one), reports
 * a project rule that would loosen the user's policy with where it belongs, and `--explain
 * --agent|--server` says what each tool of the real servers will get and why.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CEDAR_MISTAKES, placeOf } from "../governance/engine/cedar-mistakes.ts";
import { readEvents, requireBinary, tempDir } from "../support/harness.ts";
import { policyHome } from "../support/policy-home.ts";
import { runBinary } from "../support/serve.ts";
import { wrapSandbox } from "../support/wrap-sandbox.ts";

const ROOT = join(import.meta.dir, "../..");
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const GITHUB = join(ROOT, "node_modules/@modelcontextprotocol/server-github/dist/index.js");
const TIMEOUT_MS = 60_000;

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup.splice(0)) step();
});

describe("Cedar mistakes never reach a call", () => {
  test("each mistake of the corpus: validate-config says where, exit 1; a shim with it does not start", async () => {
    for (const mistake of CEDAR_MISTAKES) {
      using dir = tempDir();
      writeFileSync(join(dir.path, "policy.cedar"), mistake.policy);
      if (mistake.schema !== undefined) writeFileSync(join(dir.path, "arguments.cedarschema"), mistake.schema);
      const schemaLine = mistake.schema === undefined ? "" : ", schema: arguments.cedarschema";
      writeFileSync(join(dir.path, "thoughtgate.yaml"), `schema: 1\ngovernance:\n  rules: [{ id: cedar, match: "*", action: policy }]\ncedar: { policies: [policy.cedar]${schemaLine} }\n`);
      const checked = await runBinary(["validate-config", join(dir.path, "thoughtgate.yaml")]);
      const where =
        mistake.file === "schema"
          ? mistake.at === ""
            ? join(dir.path, "arguments.cedarschema")
            : placeOf(join(dir.path, "arguments.cedarschema"), mistake.schema as string, mistake.at)
          : placeOf(join(dir.path, "policy.cedar"), mistake.policy, mistake.at);
      expect({ mistake: mistake.name, exitCode: checked.exitCode, where: checked.stdout.includes(`${where}:`), says: mistake.message.test(checked.stdout) }).toEqual({
        mistake: mistake.name,
        exitCode: 1,
        where: true,
        says: true,
      });
    }
    // Run time never sees one: the shim refuses to start, before it starts its server.
    using dir = tempDir();
    const mistake = CEDAR_MISTAKES[0] as (typeof CEDAR_MISTAKES)[number];
    writeFileSync(join(dir.path, "policy.cedar"), mistake.policy);
    writeFileSync(join(dir.path, "arguments.cedarschema"), mistake.schema as string);
    writeFileSync(join(dir.path, "thoughtgate.yaml"), 'schema: 1\ngovernance:\n  rules: [{ id: cedar, match: "*", action: policy }]\ncedar: { policies: [policy.cedar], schema: arguments.cedarschema }\n');
    const shim = await runBinary(["shim", "--server-id", "fs", "--events", "none", "--thoughtgate-config", join(dir.path, "thoughtgate.yaml"), "--", "node", FILESYSTEM, dir.path]);
    expect(shim.exitCode).toBe(1);
    expect(shim.stderr).toContain(`${placeOf(join(dir.path, "policy.cedar"), mistake.policy, mistake.at)}: policy no-etc: attribute \`argument\``);
    expect(shim.stderr).not.toContain("Secure MCP Filesystem Server running");
  }, TIMEOUT_MS * 2);
});

describe("a project rule that would loosen the user's policy", () => {
  test("validate-config reports it with where it belongs, and exits 0", async () => {
    using policy = policyHome();
    policy.writeProject("schema: 1\ngovernance:\n  rules: [{ id: allow-writes, match: write_file, action: forward }]\n");
    const checked = await runBinary(["validate-config"], { cwd: policy.project, env: policy.env });
    expect(checked.exitCode).toBe(0);
    expect(checked.stdout).toBe(
      [
        `ok: ${policy.projectFile} (project policy)`,
        `project policy ${policy.projectFile}: rule allow-writes (tool write_file → forward) can never take effect where the embedded default policy asks (rule default-destructive: tool * with destructiveHint=true → approve (workflow default)): a project policy may only add restrictions.`,
        `  To let these calls through in this project, start your own policy ${policy.userFile} from the embedded default (\`thoughtgate validate-config --explain\` prints it as a thoughtgate.yaml) and put this rule, kept to the project, first:`,
        `    - { id: "allow-writes", match: "write_file", project: ${JSON.stringify(policy.project)}, action: forward }`,
        "",
      ].join("\n"),
    );
    // The user's own policy: the rule to write above the one that asks.
    policy.writeUser("schema: 1\ngovernance:\n  rules: [{ id: ask-writes, match: \"write_*\", action: approve }]\n");
    const withUser = await runBinary(["validate-config"], { cwd: policy.project, env: policy.env });
    expect(withUser.stdout).toContain(`  To let these calls through in this project, put this rule, kept to the project, in your policy ${policy.userFile} above rule ask-writes:`);
  }, TIMEOUT_MS);

  test("wrap's banner says it too, and what the embedded default does with a tool that declares nothing", async () => {
    await using box = wrapSandbox();
    writeFileSync(join(box.project, "thoughtgate.yaml"), "schema: 1\ngovernance:\n  rules: [{ id: allow-writes, match: write_file, action: forward }]\n");
    const run = await box.run(["wrap", "--agent-type", "claude-code", "--allow-ungoverned", "--", "true"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `thoughtgate: project policy ${join(box.project, "thoughtgate.yaml")}: rule allow-writes (tool write_file → forward) can never take effect where the embedded default policy asks (rule default-destructive: tool * with destructiveHint=true → approve (workflow default)): a project policy may only add restrictions.\n`,
    );
    expect(run.stderr).toContain(`thoughtgate:     - { id: "allow-writes", match: "write_file", project: ${JSON.stringify(box.project)}, action: forward }\n`);
    await using plain = wrapSandbox();
    const banner = await plain.run(["wrap", "--agent-type", "claude-code", "--allow-ungoverned", "--", "true"]);
    expect(banner.stderr).toContain(
      "thoughtgate: policy embedded default (the agent's own tools: its hook settings, MCP configs, ThoughtGate's policy and secret files denied, reads in the project and read-only shell commands forwarded, the rest asked; MCP: read-only tools forwarded; tools that may destroy, tools that write to the open world, and tools that declare nothing (unless ThoughtGate's annotation catalog knows their exact definition) need approval; additive tools on this machine forwarded)",
    );
  }, TIMEOUT_MS);
});

describe("validate-config --explain: what each tool will get and why", () => {
  test("--server: the real server-filesystem's tools under a policy with argument rules", async () => {
    using policy = policyHome();
    mkdirSync(join(policy.project, ".git"));
    policy.writeUser(`schema: 1
governance:
  rules:
    - { id: writes-in-project, match: "{write_file,edit_file}", arguments: { path: { within: "\${PROJECT}" } }, action: forward }
    - { id: default-read-only, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: default-destructive, match: "*", annotations: { destructiveHint: true }, action: approve }
`);
    const run = await runBinary(["validate-config", "--explain", "--server", `node ${FILESYSTEM} ${policy.project}`, "--server-id", "filesystem"], { cwd: policy.project, env: policy.env });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines).toContain(`what each tool will get (the session's project: ${policy.project}):`);
    expect(lines.find((line) => line.startsWith("server filesystem "))).toEndWith(": 14 tools");
    const tool = (name: string) => lines.find((line) => line.startsWith(`  ${name} `))?.replace(/ +/g, " ");
    expect(tool("write_file")).toBe(
      " write_file forwarded when path within ${PROJECT} (rule writes-in-project); otherwise asked (rule default-destructive) [readOnlyHint=false, idempotentHint=true, destructiveHint=true, openWorldHint=false, from the server]",
    );
    expect(tool("read_text_file")).toBe(" read_text_file forwarded (rule default-read-only) [readOnlyHint=true, openWorldHint=false, from the server]");
    expect(tool("create_directory")).toBe(" create_directory forwarded (the default) [readOnlyHint=false, idempotentHint=true, destructiveHint=false, openWorldHint=false, from the server]");
  }, TIMEOUT_MS);

  test("--server decides as a session does: a rule \"always allow\" wrote for this server's program counts, for another program it does not", async () => {
    using policy = policyHome();
    mkdirSync(join(policy.project, ".git"));
    const program = ["node", FILESYSTEM, policy.project];
    policy.writeUser(`schema: 1
governance:
  rules:
    - { id: "always-allow-fs-write_file", match: "write_file", method: "tools/call", source: "fs", server: { command: ${JSON.stringify(program)} }, action: "forward" }
    - { id: default-read-only, match: "*", annotations: { readOnlyHint: true }, action: forward }
    - { id: default-destructive, match: "*", annotations: { destructiveHint: true }, action: approve }
`);
    const explained = async (command: string) => {
      const run = await runBinary(["validate-config", "--explain", "--server", command, "--server-id", "fs"], { cwd: policy.project, env: policy.env });
      expect(run.exitCode).toBe(0);
      return run.stdout.split("\n").find((line) => line.startsWith("  write_file "))?.replace(/ +/g, " ");
    };
    expect(await explained(program.join(" "))).toStartWith(" write_file forwarded (rule always-allow-fs-write_file) [");
    expect(await explained(`node ${FILESYSTEM} ${policy.project} /tmp`)).toStartWith(" write_file asked (rule default-destructive) [");

    // A session with the same server runs it unasked, by the same rule.
    const events = join(policy.userFile, "..", "events.jsonl");
    await using shim = Bun.spawn([requireBinary(), "shim", "--server-id", "fs", "--events", events, "--", ...program], { cwd: policy.project, env: { ...process.env, ...policy.env }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    const send = (message: object) => shim.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/list" });
    send({ id: 3, method: "tools/call", params: { name: "write_file", arguments: { path: join(policy.project, "x.txt"), content: "x" } } });
    await shim.stdin.flush();
    const answers: Array<{ id?: number; result?: unknown; error?: unknown }> = [];
    const reader = shim.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    while (!answers.some((answer) => answer.id === 3)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) answers.push(JSON.parse(line));
    }
    await shim.stdin.end();
    await shim.exited;
    expect(answers.find((answer) => answer.id === 3)).toMatchObject({ result: { content: [{ text: `Successfully wrote to ${join(policy.project, "x.txt")}` }] } });
    const decision = readEvents(events).find((event) => event.type === "tool_call_decision" && event.tool === "write_file");
    expect(decision).toMatchObject({ decision: "forward", rule_id: "always-allow-fs-write_file" });
  }, TIMEOUT_MS);

  test("--agent: every server Claude Code's configuration names, server-github's hints from the catalog", async () => {
    using home = tempDir();
    const project = join(home.path, "app");
    mkdirSync(project);
    writeFileSync(
      join(home.path, ".claude.json"),
      JSON.stringify({ mcpServers: { github: { command: "node", args: [GITHUB] }, broken: { command: join(home.path, "no-such-server") } } }),
    );
    const run = await runBinary(["validate-config", "--explain", "--agent", "claude-code"], { cwd: project, env: { HOME: home.path, XDG_CONFIG_HOME: join(home.path, ".config") } });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split("\n").map((line) => line.replace(/ +/g, " "));
    expect(lines).toContain(" search_repositories forwarded (rule default-read-only) [readOnlyHint=true, openWorldHint=true, from ThoughtGate's annotation catalog (@modelcontextprotocol/server-github 2025.4.8)]");
    expect(lines).toContain(" create_issue asked (rule default-open-world) [readOnlyHint=false, destructiveHint=false, openWorldHint=true, from ThoughtGate's annotation catalog (@modelcontextprotocol/server-github 2025.4.8)]");
    expect(lines.find((line) => line.startsWith("server broken: could not be listed: "))).toBeDefined();
  }, TIMEOUT_MS);

  test("usage: --agent and --server go with --explain, one at a time", async () => {
    requireBinary();
    expect(await runBinary(["validate-config", "--agent", "claude-code"])).toMatchObject({ exitCode: 2 });
    expect(await runBinary(["validate-config", "--explain", "--agent", "claude-code", "--server", "x"])).toMatchObject({ exitCode: 2 });
    const unknown = await runBinary(["validate-config", "--explain", "--agent", "nope"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("--agent: expected one of");
  });
});
