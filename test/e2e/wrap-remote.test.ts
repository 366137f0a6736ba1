/**
 * `thoughtgate wrap` governs remote MCP servers: a Streamable HTTP entry (with headers that carry a
 * token from the environment) in a Claude Code, Cursor or VS Code config becomes a stdio entry
 * running `thoughtgate shim --url`; the agent's calls to it go through the gates and the audit,
 * the headers reach the server as the agent would have sent them, and the config comes back byte
 * for byte. The real `claude mcp list` reports the server connected through the shim.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { agentBinary, agentSandbox } from "../support/agents.ts";
import { fixture, readEvents, requireBinary } from "../support/harness.ts";
import { startHttpFixture, type HttpFixture } from "../support/http-fixture.ts";
import { wrapSandbox } from "../support/wrap-sandbox.ts";

setDefaultTimeout(90_000);
requireBinary();

let server: HttpFixture;
beforeAll(async () => {
  server = await startHttpFixture(fixture("hostile-http-server-fixture.ts"));
});
afterAll(async () => server.stop());

type Logged = { kind: string; method?: string; name?: string; headers?: Record<string, string> };
const serverLog = async () => (await (await fetch(new URL("/log", server.url))).json()) as Logged[];

/** The three config shapes, each with the agent's own way of naming a variable in a header. */
const SHAPES = [
  {
    agent: "claude-code",
    file: ".mcp.json",
    map: "mcpServers",
    text: (url: string) => `{
  "mcpServers": {
    "remote-notes": {
      "type": "http",
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${REMOTE_TOKEN}", "X-Team": "platform" }
    }
  }
}
`,
  },
  {
    agent: "cursor",
    file: join(".cursor", "mcp.json"),
    map: "mcpServers",
    text: (url: string) => `{
  // the team's remote server
  "mcpServers": {
    "remote-notes": { "url": "${url}", "headers": { "Authorization": "Bearer \${env:REMOTE_TOKEN}", "X-Team": "platform" } }
  }
}
`,
  },
  {
    agent: "vscode",
    file: join(".vscode", "mcp.json"),
    map: "servers",
    text: (url: string) => `{\r\n\t"servers": {\r\n\t\t"remote-notes": {\r\n\t\t\t"type": "http",\r\n\t\t\t"url": "${url}",\r\n\t\t\t"headers": {\r\n\t\t\t\t"Authorization": "Bearer \${env:REMOTE_TOKEN}",\r\n\t\t\t\t"X-Team": "platform"\r\n\t\t\t}\r\n\t\t}\r\n\t},\r\n\t"inputs": []\r\n}\r\n`,
  },
] as const;

const POLICY = "schema: 1\ngovernance:\n  rules: [{ id: no-crash, match: crash, action: deny }]\n";

describe("wrap rewrites a remote entry into shim --url and restores it", () => {
  for (const shape of SHAPES) {
    test(`${shape.agent}: the calls are governed and audited, the headers reach the server, the file comes back byte for byte`, async () => {
      await using sandbox = wrapSandbox();
      const config = join(sandbox.project, shape.file);
      mkdirSync(dirname(config), { recursive: true });
      const original = shape.text(server.url);
      writeFileSync(config, original);
      const policy = join(sandbox.home, "policy.yaml");
      writeFileSync(policy, POLICY);
      const report = join(sandbox.home, "report.json");
      sandbox.env.REMOTE_TOKEN = "tok-123";
      const agent = fixture("wrap-agent-fixture.ts", config, report, "--map", shape.map, "--server", "remote-notes", "--call", "echo_headers", "--call", "crash");
      const run = await sandbox.run(["wrap", "--agent-type", shape.agent, "--thoughtgate-config", policy, "--", ...agent]);
      expect({ code: run.code, stderr: run.code === 0 ? "" : run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(run.stderr).toMatch(/remote-notes\s+project\s+\S+\s+yes/);

      const seen = JSON.parse(readFileSync(report, "utf8")) as { command: string; args: string[]; results: Record<string, any> };
      // The session's pin of the binary (a hard link: the same file; src/wrap/shim-path.ts).
      expect(statSync(seen.command).ino).toBe(statSync(requireBinary()).ino);
      expect(seen.args).toEqual(expect.arrayContaining(["shim", "--server-id", "remote-notes", "--url", server.url, "--header-env", "THOUGHTGATE_HEADER_1"]));
      // The token stays off the command line, where every user of the machine could read it.
      expect(seen.args.join(" ")).not.toContain("REMOTE_TOKEN");
      // The headers reached the server (its log); the token it echoed back is a credential in a
      // result, redacted on its way to the agent.
      const received = (await serverLog()).filter((entry) => entry.kind === "request" && entry.name === "echo_headers").at(-1)?.headers;
      expect({ authorization: received?.authorization, team: received?.["x-team"] }).toEqual({ authorization: "Bearer tok-123", team: "platform" });
      const echoed = JSON.parse(seen.results.echo_headers.ok[0].text) as Record<string, string>;
      expect({ authorization: echoed.authorization, team: echoed["x-team"] }).toEqual({ authorization: "[REDACTED:secret_field]", team: "platform" });
      expect(seen.results.crash).toMatchObject({ code: -32014, data: { rule_id: "no-crash" } });
      expect((await serverLog()).filter((entry) => entry.method === "tools/call").map((entry) => entry.name)).not.toContain("crash");

      expect(readFileSync(config, "utf8")).toBe(original);
      const sessions = join(sandbox.state, "thoughtgate", "sessions");
      const events = readdirSync(sessions).flatMap((id) => readEvents(join(sessions, id, "events.jsonl")));
      expect(events.find((event) => event.type === "run_start")).toMatchObject({ server_id: "remote-notes", server_url: server.url });
      expect(events.filter((event) => event.type === "tool_call_decision").map((event) => [event.tool, event.decision])).toEqual([
        ["echo_headers", "forward"],
        ["crash", "deny"],
      ]);
    });
  }
});

test("the real `claude mcp list` under wrap reports the remote server connected through the shim", async () => {
  await using sandbox = agentSandbox();
  const userConfig = join(sandbox.home, ".claude.json");
  const original = `{\n  "mcpServers": {\n    "remote-notes": { "type": "http", "url": "${server.url}", "headers": { "Authorization": "Bearer \${REMOTE_TOKEN}" } }\n  }\n}\n`;
  writeFileSync(userConfig, original);
  const proc = Bun.spawn([requireBinary(), "wrap", "--", agentBinary("claude-code"), "mcp", "list"], {
    cwd: sandbox.project,
    env: { ...sandbox.env, REMOTE_TOKEN: "tok-claude" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toMatch(new RegExp(`^remote-notes: \\S+/thoughtgate shim .*--url ${server.url.replaceAll("/", "\\/")} --header-env THOUGHTGATE_HEADER_1 - ✔ Connected$`, "m"));
  const requests = (await serverLog()).filter((entry) => entry.kind === "request" && entry.headers?.authorization === "Bearer tok-claude");
  expect(requests.map((entry) => entry.method)).toContain("initialize");
  // Claude Code writes its own state into ~/.claude.json; the server entry is back as it was.
  const restored = JSON.parse(readFileSync(userConfig, "utf8")) as { mcpServers: unknown };
  expect(restored.mcpServers).toEqual(JSON.parse(original).mcpServers);
  expect(readFileSync(userConfig, "utf8")).toContain(`"remote-notes": { "type": "http", "url": "${server.url}", "headers": { "Authorization": "Bearer \${REMOTE_TOKEN}" } }`);
  // Claude Code's own calls home are the trap's to refuse; the MCP traffic went straight to loopback.
  expect(sandbox.trap.attempts.filter((attempt) => attempt.includes(new URL(server.url).host))).toEqual([]);
});
