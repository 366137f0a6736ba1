/**
 * What the record keeps of a call's arguments, through the compiled binary: redacted arguments
 * beside the hash by default, invisible characters written as escapes; the hash only when the
 * user's policy says `audit: { arguments: hash }` (a standalone shim's own engine, and a wrap
 * session's shims, told by the service); a project's policy cannot take them out.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EVERYTHING_SERVER, fixture, requireBinary, tempDir } from "../support/harness.ts";

setDefaultTimeout(60_000);
requireBinary();

const TOKEN = `ghp_${"Q".repeat(36)}`;
const dir = tempDir("thoughtgate-audit-args-");
afterAll(() => dir[Symbol.dispose]());

function sandbox(name: string, userPolicy: string | null, projectPolicy: string | null) {
  const home = join(dir.path, name);
  const project = join(home, "project");
  mkdirSync(project, { recursive: true });
  if (userPolicy !== null) {
    mkdirSync(join(home, ".config", "thoughtgate"), { recursive: true });
    writeFileSync(join(home, ".config", "thoughtgate", "thoughtgate.yaml"), userPolicy);
  }
  if (projectPolicy !== null) writeFileSync(join(project, "thoughtgate.yaml"), projectPolicy);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".state") });
  return { home, project, env, state: join(home, ".state", "thoughtgate") };
}

/** Every event line of every record file under `state`. */
function recordLines(state: string): string[] {
  const walk = (path: string): string[] => {
    try {
      return readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(path, entry.name)) : entry.name.endsWith(".jsonl") ? [join(path, entry.name)] : []));
    } catch {
      return [];
    }
  };
  return walk(state).flatMap((file) => readFileSync(file, "utf8").split("\n").filter(Boolean));
}

const starts = (state: string) => recordLines(state).map((line) => JSON.parse(line) as Record<string, unknown>).filter((event) => event.type === "tool_call_start");

async function echoThroughShim(box: ReturnType<typeof sandbox>): Promise<void> {
  const transport = new StdioClientTransport({ command: requireBinary(), args: ["shim", "--server-id", "everything", "--", ...EVERYTHING_SERVER], env: box.env, cwd: box.project, stderr: "pipe" });
  const client = new Client({ name: "audit-test", version: "1" }, { capabilities: {} });
  await client.connect(transport);
  await client.callTool({ name: "echo", arguments: { message: `deploy with ${TOKEN} to a\u202eb` } });
  await client.close();
}

/** `thoughtgate log --json` in the sandbox: one parsed call per line. */
async function logged(box: ReturnType<typeof sandbox>): Promise<Array<Record<string, unknown>>> {
  const proc = Bun.spawn([requireBinary(), "log", "--json"], { env: box.env, cwd: box.project, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code, stderr).toBe(0);
  return stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("credentials however their key is written", () => {
  test("glued, camel-case and capitalised keys, a map written inside a string, and a token in a sentence: redacted in the record file and in log; ordinary keys kept", async () => {
    const box = sandbox("keys", null, null);
    const secret = (n: number) => `Zq${n}vX8!kP2m`;
    const args = {
      newpassword: secret(1),
      DBPassword: secret(2),
      PassWord: secret(3),
      accesstoken: secret(4),
      clientsecret: secret(5),
      privatekey: secret(6),
      yaml: `db: {user: app, password: ${secret(7)}}`,
      python: `conn = {'user': 'app', 'password': '${secret(8)}'}`,
      param: `connect(host, password='${secret(9)}')`,
      note: `token is ${TOKEN}`,
      token_count: 12,
      keyboard: "us",
      secretary: "Ada",
      passwordPolicy: "min-12",
    };
    const transport = new StdioClientTransport({ command: requireBinary(), args: ["shim", "--server-id", "everything", "--", ...EVERYTHING_SERVER], env: box.env, cwd: box.project, stderr: "pipe" });
    const client = new Client({ name: "audit-test", version: "1" }, { capabilities: {} });
    await client.connect(transport);
    await client.callTool({ name: "echo", arguments: { message: "hi", ...args } }).catch(() => undefined);
    await client.close();
    const field = "[REDACTED:secret_field]";
    const expected = {
      message: "hi",
      newpassword: field,
      DBPassword: field,
      PassWord: field,
      accesstoken: field,
      clientsecret: field,
      privatekey: field,
      yaml: `db: {user: app, password: ${field}}`,
      python: `conn = {'user': 'app', 'password': '${field}'}`,
      param: `connect(host, password='${field}')`,
      note: "token is [REDACTED:github_token]",
      token_count: 12,
      keyboard: "us",
      secretary: "Ada",
      passwordPolicy: "min-12",
    };
    expect(starts(box.state)[0]?.arguments).toEqual(expected);
    const file = recordLines(box.state).join("\n");
    for (let n = 1; n <= 9; n++) expect(file).not.toContain(secret(n));
    expect(file).not.toContain(TOKEN);
    const [call] = await logged(box);
    expect(call?.arguments).toEqual(expected);
  });
});

describe("the arguments in the record", () => {
  test("by default: redacted beside the hash, invisible characters as escapes in the file", async () => {
    const box = sandbox("default", null, null);
    await echoThroughShim(box);
    const [start] = starts(box.state);
    expect(start).toMatchObject({ tool: "echo", arguments: { message: "deploy with [REDACTED:github_token] to a\u202eb" } });
    expect(start?.args_hash).toMatch(/^[0-9a-f]{64}$/);
    const raw = recordLines(box.state).find((line) => line.includes('"tool_call_start"')) ?? "";
    expect(raw).toContain("a\\u202eb");
    expect(raw).not.toContain("\u202e");
    expect(raw).not.toContain(TOKEN);
  });

  test("audit.arguments: hash in the user's policy keeps the hash only", async () => {
    const box = sandbox("hash", "schema: 1\naudit: { arguments: hash }\n", null);
    await echoThroughShim(box);
    const [start] = starts(box.state);
    expect(start).toBeDefined();
    expect(start).not.toHaveProperty("arguments");
    expect(start?.args_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("a project's policy saying hash does not take them out of the user's record", async () => {
    const box = sandbox("project", null, "schema: 1\naudit: { arguments: hash }\n");
    await echoThroughShim(box);
    expect(starts(box.state)[0]).toMatchObject({ arguments: { message: "deploy with [REDACTED:github_token] to a\u202eb" } });
  });

  test("a wrap session's shims follow the user's setting, told by the service; run_start names the agent and the project", async () => {
    for (const [name, policy, recorded] of [["wrap-hash", "schema: 1\naudit: { arguments: hash }\n", false], ["wrap-default", "schema: 1\n", true]] as const) {
      const box = sandbox(name, policy, null);
      mkdirSync(join(box.project, ".git"));
      const config = join(box.project, "mcp.json");
      writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: EVERYTHING_SERVER[0], args: EVERYTHING_SERVER.slice(1) } } }));
      const proc = Bun.spawn(
        [requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("wrap-agent-fixture.ts", config, join(box.project, "report.json"), "--call", `echo:${JSON.stringify({ message: `hi ${TOKEN}` })}`)],
        { cwd: box.project, env: box.env, stdin: "ignore", stdout: "ignore", stderr: "pipe" },
      );
      const stderr = await new Response(proc.stderr).text();
      expect(await proc.exited, stderr).toBe(0);
      const [start] = starts(box.state);
      if (recorded) expect(start).toMatchObject({ arguments: { message: "hi [REDACTED:github_token]" } });
      else expect(start).not.toHaveProperty("arguments");
      const runStart = recordLines(box.state).map((line) => JSON.parse(line) as Record<string, unknown>).find((event) => event.type === "run_start");
      expect(runStart?.project).toBe(box.project);
      expect((runStart?.agent_command as string[]).some((word) => word.endsWith("wrap-agent-fixture.ts"))).toBe(true);
      expect(JSON.stringify(runStart)).not.toContain(TOKEN);
    }
  });
});
