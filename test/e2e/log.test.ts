/**
 * `thoughtgate log` through the compiled binary, over a record a user would have after a day: three
 * wrap sessions (a fake agent with the real SDK client, the real server-filesystem and
 * server-memory) and two standalone shims, with calls forwarded, denied by a rule and by a person,
 * approved on the page, with `thoughtgate approve` and through the agent's form, and failing at the
 * server. Everything runs in the test's own HOME, so the record holds exactly these calls.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import * as v from "valibot";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, FILESYSTEM_SERVER_JS, requireBinary, ROOT, tempDir, waitFor } from "../support/harness.ts";
import { answerForms } from "../support/approval-answers.ts";
import { decideAtTerminal, tasksAtTerminal } from "../support/terminal.ts";
import { LogCallSchema, type LogCall } from "../../src/record/log-call.ts";

setDefaultTimeout(120_000);
requireBinary();

const MEMORY_SERVER_JS = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
/** A credential in the arguments of calls: it must never be shown, nor kept anywhere in the state directory. */
const TOKEN = `ghp_${"R".repeat(36)}`;
const POLICY = `schema: 1
governance:
  defaults: { action: forward }
  rules:
    - { id: no-writes, match: write_file, action: deny }
    - { id: moves, match: move_file, action: approve }
    - { id: no-deletes, match: delete_entities, action: deny }
`;

const dir = tempDir("thoughtgate-log-");
const home = join(dir.path, "home");
const state = join(home, ".local", "state");
const projectA = join(dir.path, "alpha");
const projectB = join(dir.path, "beta");
const files = join(dir.path, "files");
const env: Record<string, string> = {};
for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_")) env[key] = value;
Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: state, XDG_DATA_HOME: join(home, ".local", "share") });

/** What each call was, as the test made it: the log must say the same. */
type Made = { server: string; tool: string; args: Record<string, unknown>; outcome: string; session: string | null; by?: string };
const made: Made[] = [];

/** `columns`: the terminal's width as $COLUMNS says it; unset: no width known (80). */
async function run(args: string[], options: { cwd?: string; columns?: string } = {}) {
  const { COLUMNS: _unknown, ...rest } = env;
  const proc = Bun.spawn([requireBinary(), ...args], { cwd: options.cwd ?? projectA, env: { ...rest, ...(options.columns ? { COLUMNS: options.columns } : {}) }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, exitCode };
}

function fsEntry(): string {
  return JSON.stringify({ mcpServers: { fs: { command: "node", args: [FILESYSTEM_SERVER_JS, files] } } });
}

/**
 * A wrap session in `project`: the fake agent makes `calls` one after another; `approve` answers
 * each approval task as it appears (page, CLI, or a person's no with a reason), in order.
 */
async function session(project: string, calls: Array<[string, Record<string, unknown>]>, answers: Array<"page" | "cli" | "deny">): Promise<{ id: string; summary: string }> {
  const config = join(project, "mcp.json");
  const report = join(project, `report-${Bun.randomUUIDv7()}.json`);
  writeFileSync(config, fsEntry());
  const agentArgs = calls.flatMap(([tool, args]) => ["--call", `${tool}:${JSON.stringify(args)}`]);
  const proc = Bun.spawn([requireBinary(), "wrap", "--agent-type", "custom", "--config-path", config, "--", ...fixture("wrap-agent-fixture.ts", config, report, ...agentArgs)], {
    cwd: project,
    env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const pageUrl = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+)\/approvals#key=([0-9a-f]{64})/.exec(stderr), "the approvals page link");
  const [, endpoint, pageKey] = pageUrl;
  for (const answer of answers) {
    const task = await waitFor(async () => {
      const listed = await tasksAtTerminal(["--json"], { env, cwd: project });
      const pending = (JSON.parse(listed.stdout || "[]") as Array<{ task_id: string; digest: string; status: string }>).filter((t) => t.status === "pending");
      return pending[0];
    }, "an approval task");
    if (answer === "page") {
      const response = await fetch(`${endpoint}/approvals/api/tasks/${task.task_id}`, {
        method: "POST",
        headers: { authorization: `Bearer ${pageKey}`, "content-type": "application/json" },
        body: JSON.stringify({ decision: "approve", digest: task.digest, reason: "looked at it on the page" }),
      });
      expect(response.status).toBe(200);
    } else {
      // A person at a terminal of their own confirms.
      const decided = await decideAtTerminal([answer === "cli" ? "approve" : "deny", task.task_id, "--reason", answer === "cli" ? "fine from the terminal" : `not that one ${TOKEN}`], { env });
      expect(decided.exitCode).toBe(0);
    }
  }
  expect(await proc.exited).toBe(0);
  await reading;
  const id = /thoughtgate log --session (\S+)/.exec(stderr)?.[1];
  if (!id) throw new Error(`no session id in wrap's summary:\n${stderr}`);
  return { id, summary: stderr };
}

/** A standalone shim in `cwd`, driven by the SDK client; approval forms answered "once". */
async function standalone(cwd: string, server: string, command: string[], calls: Array<[string, Record<string, unknown>]>): Promise<void> {
  const transport = new StdioClientTransport({ command: requireBinary(), args: ["shim", "--server-id", server, "--", ...command], env, cwd, stderr: "pipe" });
  const client = new Client({ name: "log-test-agent", version: "1" }, { capabilities: { elicitation: {} } });
  answerForms(client, "approve", []);
  await client.connect(transport);
  for (const [tool, args] of calls) await client.callTool({ name: tool, arguments: args }).catch(() => undefined);
  await client.close();
}

const logJson = async (...args: string[]) => {
  const result = await run(["log", "--json", ...args]);
  expect(result).toMatchObject({ exitCode: 0 });
  return result.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => v.parse(LogCallSchema, JSON.parse(line)));
};

/** The sessions' ids, and wrap's stderr of each. */
const sessions: string[] = [];
const summaries: string[] = [];
async function recordSession(...args: Parameters<typeof session>): Promise<void> {
  const { id, summary } = await session(...args);
  sessions.push(id);
  summaries.push(summary);
}

beforeAll(async () => {
  for (const path of [projectA, projectB, files, join(home, ".config", "thoughtgate")]) mkdirSync(path, { recursive: true });
  mkdirSync(join(projectA, ".git"));
  writeFileSync(join(home, ".config", "thoughtgate", "thoughtgate.yaml"), POLICY);
  writeFileSync(join(files, "a.txt"), "alpha\n");
  writeFileSync(join(files, "b.txt"), "beta\n");
  writeFileSync(join(files, "c.txt"), "gamma\n");

  // An old record (from before arguments, agent and project were recorded): still read.
  const old = new Date(Date.now() - 2 * 86_400_000);
  const day = old.toISOString().slice(0, 10);
  mkdirSync(join(state, "thoughtgate", "runs", day), { recursive: true });
  const ts = old.toISOString();
  const envelope = { v: 1, ts, run_id: "old-run", server_id: "fs", profile: "production" };
  writeFileSync(
    join(state, "thoughtgate", "runs", day, "fs-old-run.jsonl"),
    [
      { ...envelope, type: "run_start", seq: 1, started_at: ts, pid: 1, server_command: ["node"], policy: "embedded-default", version: "0.0.9" },
      { ...envelope, type: "tool_call_start", seq: 2, call_id: "old-call-1", request_id: 1, tool: "write_file", args_hash: "ab".repeat(32) },
      { ...envelope, type: "tool_call_decision", seq: 3, call_id: "old-call-1", tool: "write_file", decision: "deny", gate: "rules", rule_id: "no-writes", policy_id: null, reason: "rule no-writes" },
      { ...envelope, type: "tool_call_end", seq: 4, call_id: "old-call-1", tool: "write_file", args_hash: "ab".repeat(32), status: "denied", latency_ms: 0.2, bytes_out: 120 },
    ]
      .map((event) => JSON.stringify(event))
      .join("\n") + "\n",
  );

  const p = (name: string) => join(files, name);
  await recordSession(projectA, [["list_directory", { path: files }], ["write_file", { path: p("notes.txt"), content: `export GITHUB_TOKEN=${TOKEN}` }], ["move_file", { source: p("a.txt"), destination: p("a2.txt") }]], ["page"]);
  made.push(
    { server: "fs", tool: "list_directory", args: { path: files }, outcome: "forwarded", session: sessions[0] ?? null },
    { server: "fs", tool: "write_file", args: { path: p("notes.txt") }, outcome: "denied", session: sessions[0] ?? null, by: "rules" },
    { server: "fs", tool: "move_file", args: { source: p("a.txt") }, outcome: "approved", session: sessions[0] ?? null, by: "web" },
  );
  await recordSession(
    projectB,
    [["move_file", { source: p("b.txt"), destination: p("b2.txt") }], ["move_file", { source: p("c.txt"), destination: p("c2.txt") }], ["read_text_file", { path: p("missing.txt") }]],
    ["cli", "deny"],
  );
  made.push(
    { server: "fs", tool: "move_file", args: { source: p("b.txt") }, outcome: "approved", session: sessions[1] ?? null, by: "cli" },
    { server: "fs", tool: "move_file", args: { source: p("c.txt") }, outcome: "denied", session: sessions[1] ?? null, by: "cli" },
    { server: "fs", tool: "read_text_file", args: { path: p("missing.txt") }, outcome: "errored", session: sessions[1] ?? null },
  );
  await recordSession(projectA, [["write_file", { path: p("other.txt"), content: `password: hunter2 and ${TOKEN}` }], ["read_text_file", { path: p("a2.txt") }]], []);
  made.push(
    { server: "fs", tool: "write_file", args: { path: p("other.txt") }, outcome: "denied", session: sessions[2] ?? null, by: "rules" },
    { server: "fs", tool: "read_text_file", args: { path: p("a2.txt") }, outcome: "forwarded", session: sessions[2] ?? null },
  );

  await standalone(projectB, "fs", ["node", FILESYSTEM_SERVER_JS, files], [
    ["move_file", { source: p("a2.txt"), destination: p("a3.txt") }],
    ["write_file", { path: p("standalone.txt"), content: TOKEN }],
    ["get_file_info", { path: p("nowhere.txt") }],
  ]);
  made.push(
    { server: "fs", tool: "move_file", args: { source: p("a2.txt") }, outcome: "approved", session: null, by: "elicitation" },
    { server: "fs", tool: "write_file", args: { path: p("standalone.txt") }, outcome: "denied", session: null, by: "rules" },
    { server: "fs", tool: "get_file_info", args: { path: p("nowhere.txt") }, outcome: "errored", session: null },
  );
  await standalone(projectA, "mem", ["node", MEMORY_SERVER_JS], [
    ["create_entities", { entities: [{ name: "x", entityType: "note", observations: [`token ${TOKEN}`] }] }],
    ["delete_entities", { entityNames: ["x"] }],
  ]);
  made.push(
    { server: "mem", tool: "create_entities", args: {}, outcome: "forwarded", session: null },
    { server: "mem", tool: "delete_entities", args: { entityNames: ["x"] }, outcome: "denied", session: null, by: "rules" },
  );
});

afterAll(() => dir[Symbol.dispose]());

describe("thoughtgate log", () => {
  test("every call of the three sessions and two standalone runs is there, with where it ran and how it ended", async () => {
    const calls = await logJson("--since", "1h");
    expect(calls.length).toBe(made.length);
    const key = (c: { server: string; tool: string; session: string | null; outcome: string }) => `${c.server} ${c.tool} ${c.session ?? "-"} ${c.outcome}`;
    expect(calls.map(key).toSorted()).toEqual(made.map(key).toSorted());
    // Newest first.
    expect(calls.map((c) => c.time)).toEqual(calls.map((c) => c.time).toSorted().reverse());
    for (const call of calls) {
      const mine = made.find((m) => key(m) === key(call) && Object.entries(m.args).every(([k, value]) => JSON.stringify((call.arguments as Record<string, unknown>)[k]) === JSON.stringify(value)));
      expect(mine, `${key(call)} ${JSON.stringify(call.arguments)}`).toBeDefined();
      if (mine?.by) expect(call.decided_by?.channel ?? call.gate).toBe(mine.by);
      if (call.session) {
        expect(call.agent).toStartWith("bun");
        expect(call.agent_command?.some((word) => word.endsWith("wrap-agent-fixture.ts"))).toBe(true);
      }
    }
    const projects = new Map(calls.map((c) => [`${c.tool} ${c.session ?? "-"} ${c.outcome}`, c.project]));
    expect(calls.filter((c) => c.session === sessions[0]).every((c) => c.project === projectA)).toBe(true);
    expect(calls.filter((c) => c.session === sessions[1]).every((c) => c.project === projectB)).toBe(true);
    expect(calls.filter((c) => c.server === "mem").every((c) => c.project === projectA)).toBe(true);
    expect(projects.size).toBeGreaterThan(0);
    // A person's refusal names them as the one who decided.
    const refused = calls.find((c) => c.session === sessions[1] && c.outcome === "denied");
    expect(refused).toMatchObject({ gate: "approval", decided_by: { channel: "cli" }, asked: true });
  });

  test("server fs, since 1h, denied: exactly those calls, arguments redacted, the token never shown nor kept", async () => {
    const calls = await logJson("--server", "fs", "--since", "1h", "--decision", "denied");
    const expected = made.filter((m) => m.server === "fs" && m.outcome === "denied");
    expect(calls.map((c) => `${c.tool} ${c.session ?? "-"}`).toSorted()).toEqual(expected.map((m) => `${m.tool} ${m.session ?? "-"}`).toSorted());
    const writes = calls.filter((c) => c.tool === "write_file").map((c) => c.arguments as { content: string });
    expect(writes.map((a) => a.content).toSorted()).toEqual(["[REDACTED:github_token]", "export GITHUB_TOKEN=[REDACTED:secret_field]", "password: [REDACTED:secret_field] and [REDACTED:github_token]"].toSorted());

    const table = await run(["log", "--server", "fs", "--since", "1h", "--decision", "denied"], { columns: "250" });
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TIME\s+AGENT\s+PROJECT\s+SERVER\s+TOOL\s+ARGUMENTS\s+OUTCOME\s+BY\s+REASON\s+LATENCY$/);
    expect(lines.length).toBe(expected.length + 1);
    expect(lines.slice(1).every((line) => /\bfs\b.*\bdenied\b/.test(line))).toBe(true);
    // The old record's denied write is two days old: not since 1h, but since 3d.
    expect(table.stdout).not.toContain("old-call");
    const older = await logJson("--server", "fs", "--since", "3d", "--decision", "denied");
    expect(older.find((c) => c.call_id === "old-call-1")).toMatchObject({ arguments: null, agent: null, project: null, outcome: "denied", rule_id: "no-writes" });
    expect((await run(["log", "--since", "3d", "--tool", "write_*"], { columns: "250" })).stdout).toContain("(hash only)");

    for (const call of calls) {
      const shown = await run(["log", "--show", call.call_id]);
      expect(shown.exitCode).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^call +${call.call_id}$`, "m"));
      expect(shown.stdout).not.toContain(TOKEN);
    }
    for (const text of [table.stdout, JSON.stringify(calls), (await run(["log", "--since", "1h"])).stdout, ...summaries]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain("hunter2");
    }
    // Nowhere in the state directory: not the record, not the index.
    const everything = (path: string): string[] => (statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => everything(join(path, name))) : [path]);
    for (const path of everything(join(state, "thoughtgate"))) {
      expect(readFileSync(path).includes(TOKEN), path).toBe(false);
    }
  });

  test("each filter narrows: agent, project, session, tool glob, asked, approved, errored", async () => {
    const all = await logJson("--since", "1h");
    const ids = (calls: LogCall[]) => calls.map((c) => c.call_id).toSorted();
    expect(ids(await logJson("--session", (sessions[1] ?? "").slice(0, 12)))).toEqual(ids(all.filter((c) => c.session === sessions[1])));
    expect(ids(await logJson("--project", projectB))).toEqual(ids(all.filter((c) => c.project === projectB)));
    expect(ids(await logJson("--project", "alpha"))).toEqual(ids(all.filter((c) => c.project === projectA)));
    // The sessions' agent is the fake agent (run by bun); a standalone shim's, the process that started it (this test's bun).
    expect(ids(await logJson("--agent", "bun*"))).toEqual(ids(all.filter((c) => c.agent?.startsWith("bun"))));
    expect(all.filter((c) => c.session === null).every((c) => c.agent_command?.includes("test"))).toBe(true);
    expect(await logJson("--agent", "claude")).toEqual([]);
    expect(ids(await logJson("--tool", "move_*"))).toEqual(ids(all.filter((c) => c.tool.startsWith("move_"))));
    expect(ids(await logJson("--decision", "approved"))).toEqual(ids(all.filter((c) => c.outcome === "approved")));
    expect((await logJson("--decision", "approved")).map((c) => c.decided_by?.channel).toSorted()).toEqual(["cli", "elicitation", "web"]);
    expect(ids(await logJson("--decision", "asked"))).toEqual(ids(all.filter((c) => c.tool === "move_file")));
    expect(ids(await logJson("--decision", "errored"))).toEqual(ids(all.filter((c) => c.outcome === "errored")));
    expect(ids(await logJson("--decision", "forwarded,denied", "--since", "1h"))).toEqual(ids(all.filter((c) => c.decision === "forward" || c.decision === "deny")));
    const bad = await run(["log", "--decision", "maybe"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--decision: expected forwarded|denied|asked|approved|errored, got "maybe"');
    expect((await run(["log", "--since", "yesterday"])).stderr).toContain('--since: expected a duration like 2h or 7d (units ms, s, m, h, d, w), or a date like 2026-11-01 or 2026-11-01T14:30, got "yesterday"');
  });

  test("--json round-trips: each line parses to the call --show --json gives, and writes back to the same line", async () => {
    const result = await run(["log", "--json", "--since", "1h"]);
    for (const line of result.stdout.split("\n").filter(Boolean)) {
      const call = v.parse(LogCallSchema, JSON.parse(line));
      expect(JSON.stringify(call)).toBe(line);
      const shown = await run(["log", "--show", call.call_id, "--json"]);
      expect(shown.stdout).toBe(`${line}\n`);
    }
  });

  test("the table fits the terminal: no row wider than $COLUMNS (80 when unknown), the outcome never cut; each row's short id opens the call with --show", async () => {
    const all = await logJson("--since", "1h");
    for (const columns of [undefined, "40", "60", "100", "132"]) {
      const table = await run(["log", "--since", "1h", "--limit", "0"], columns ? { columns } : {});
      expect(table.exitCode).toBe(0);
      const rows = table.stdout.trimEnd().split("\n");
      const width = Number(columns ?? 80);
      expect(rows.filter((row) => row.length > width)).toEqual([]);
      expect(rows[0]).toMatch(width >= 80 ? /^ID\s+TIME\s+.*\bOUTCOME\b.*\bLATENCY$/ : /^ID\s+.*\bOUTCOME\b/);
      // Every call's outcome is there whole, in its own column.
      const outcomes = rows.slice(1).map((row) => row.split(/\s{2,}/).find((cell) => ["forwarded", "approved", "denied", "errored", "pending", "cancelled"].includes(cell)));
      expect(outcomes.toSorted()).toEqual(all.map((call) => call.outcome).toSorted());
    }
    const rows = (await run(["log", "--since", "1h", "--decision", "approved"])).stdout.trimEnd().split("\n").slice(1);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const short = row.split(/\s+/)[0] ?? "";
      expect(short).toMatch(/^[0-9a-f]{8}$/);
      const shown = await run(["log", "--show", short]);
      expect(shown.exitCode).toBe(0);
      const id = all.find((call) => call.call_id.endsWith(short))?.call_id;
      expect(shown.stdout).toMatch(new RegExp(`^call +${id}\nshort id +${short}$`, "m"));
    }
  });

  test("how a yes was given (once, this session, always; which channel; who) is in the record, --json, the table, --show and wrap's summary", async () => {
    const approved = (await logJson("--since", "1h", "--decision", "approved")).filter((call) => call.decided_by?.channel === "cli" || call.decided_by?.channel === "web");
    expect(approved.length).toBeGreaterThan(0);
    for (const call of approved) {
      expect(call.decided_by).toMatchObject({ scope: "once" });
      expect((await run(["log", "--show", call.call_id])).stdout).toMatch(new RegExp(`^decided by +${call.decided_by?.channel}( \\S+)? \\(once\\)$`, "m"));
    }
    expect((await run(["log", "--since", "1h", "--decision", "approved"], { columns: "250" })).stdout).toMatch(/ approved +(cli|web)( \S+)? \(once\) /);
    expect(summaries[1] ?? "").toMatch(/approved by a person:\n\s+fs\.move_file \{"source":"[^"]*b\.txt".*by cli( \S+)? \(once\)/);
  });

  test("wrap's summary lists the denied and the person-approved calls and ends with the log command", () => {
    const summary = summaries[1] ?? "";
    const tail = summary.slice(summary.indexOf("session summary"));
    // The person's own words are the reason shown (redacted: the token they pasted is not).
    // Who: the passwd name of the user the service runs as.
    expect(tail).toMatch(/denied:\n\s+fs\.move_file \{"source":"[^"]*c\.txt".*by cli \S+: not that one \[REDACTED/);
    expect(tail).toMatch(/approved by a person:\n\s+fs\.move_file \{"source":"[^"]*b\.txt".*by cli \S+ \(once\): fine from the terminal/);
    expect(tail.trimEnd().split("\n").at(-1)).toBe(`  every call: thoughtgate log --session ${sessions[1]}`);
  });

  test("a corrupted or deleted index is rebuilt and answers the same", async () => {
    const question = ["log", "--json", "--server", "fs", "--since", "1h", "--decision", "denied"];
    const before = await run(question);
    const index = join(state, "thoughtgate", "log-index.sqlite");
    expect(existsSync(index)).toBe(true);

    const bytes = readFileSync(index);
    // Garbage over everything after the header: every table's pages.
    bytes.fill(0x5a, 100);
    writeFileSync(index, bytes);
    const damaged = await run(question);
    expect(damaged.stdout).toBe(before.stdout);
    expect(damaged.stderr).toContain("is rebuilt from the record: it was damaged");

    writeFileSync(index, "not a database at all");
    const foreign = await run(question);
    expect(foreign.stdout).toBe(before.stdout);
    expect(foreign.stderr).toContain("is rebuilt from the record: it was damaged");

    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${index}${suffix}`, { force: true });
    const deleted = await run(question);
    expect(deleted).toMatchObject({ exitCode: 0, stdout: before.stdout });
    // And once rebuilt, nothing to say.
    expect((await run(question)).stderr).toBe("");
  });

  test("--follow shows a call within a second of its end", async () => {
    const follower = Bun.spawn([requireBinary(), "log", "--follow", "--json", "--server", "fs"], { cwd: projectA, env, stdout: "pipe", stderr: "pipe" });
    const seen: Array<{ at: number; call: LogCall }> = [];
    const reading = (async () => {
      let rest = "";
      for await (const chunk of follower.stdout) {
        rest += new TextDecoder().decode(chunk);
        const lines = rest.split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) if (line) seen.push({ at: Date.now(), call: v.parse(LogCallSchema, JSON.parse(line)) });
      }
    })();
    try {
      // The follower has read the index before the call starts: wait for its process to be up.
      await waitFor(() => existsSync(join(state, "thoughtgate", "log-index.sqlite-wal")) || null, "the follower to open the index");
      await standalone(projectA, "fs", ["node", FILESYSTEM_SERVER_JS, files], [["list_directory", { path: files }]]);
      const arrived = await waitFor(() => seen.find((s) => s.call.tool === "list_directory" && s.call.session === null && Date.parse(s.call.time) > Date.now() - 60_000), "the call on --follow");
      const ended = Date.parse(arrived.call.ended ?? "");
      expect(arrived.at - ended).toBeLessThanOrEqual(1_000);
      expect(seen.every((s) => s.call.server === "fs")).toBe(true);
    } finally {
      follower.kill("SIGTERM");
      expect(await follower.exited).toBe(0);
      await reading;
    }
  });

  test("--prune --older-than removes old records and their rows, keeps the rest", async () => {
    const pruned = await run(["log", "--prune", "--older-than", "1d"]);
    expect(pruned).toMatchObject({ exitCode: 0, stdout: "removed 1 record file (1 call) older than 1d\n" });
    expect((await logJson("--since", "30d", "--tool", "write_file")).map((c) => c.call_id)).not.toContain("old-call-1");
    expect((await logJson("--since", "30d")).length).toBeGreaterThanOrEqual(made.length);
    expect((await run(["log", "--prune"])).stderr).toContain("--prune needs --older-than");
  });
});
