/**
 * The scripted hour (`bun run test/bench/run.ts --only hour`, and part of `bun run bench`): an
 * ordinary hour of work with the real server-filesystem, the real server-memory and server-github's
 * real definitions (served offline by test/fixtures/github-recorded-server-fixture.ts), through a
 * real `thoughtgate wrap --agent-type claude-code` and the embedded default policy, with a scripted
 * agent (hour-agent.ts) and a person who answers every prompt the same way. Counted: the prompts
 * of each session. Checked against the servers' own record (every line that reached a server,
 * recorded by test/fixtures/stdio-recorder-fixture.ts between the shim and the server): no call that
 * writes ran without a person's yes, and server-github's reads went through unasked.
 *
 * Sessions, in one run: as it was before the annotation catalog (server-github's definitions
 * changed by one space, so the catalog knows none: its reads are asked as tools that declare
 * nothing), then on one machine "once", "this session", "always" (the rules it writes go into the
 * user's policy), and a session after "always".
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { catalogHint } from "../../src/governance/definitions/annotation-catalog.ts";
import { BINARY, FIXTURES, ROOT, tempDir } from "../support/harness.ts";
import type { Answer, HourReport, ScriptedCall } from "./hour-agent.ts";
import { progress } from "./report.ts";

const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const MEMORY = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const BENIGN = JSON.parse(readFileSync(join(FIXTURES, "definitions/benign.json"), "utf8")) as { servers: Record<string, { tools: Array<{ name: string; annotations?: { readOnlyHint?: boolean } }> }> };

const FILES = 10;
const GITHUB_READS = ["search_repositories", "get_issue", "list_issues", "get_file_contents", "list_pull_requests", "get_pull_request", "list_commits", "search_code", "search_issues", "get_pull_request_files"];

/** The hour: ≈30 edits, 10 writes, 2 moves, 10 reads of files; 3 deletes and 2 reads of memory; 25 reads and 3 writes on GitHub. */
export function hourScript(project: string): ScriptedCall[] {
  const files: ScriptedCall[] = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < FILES; i++) {
      const path = join(project, "src", `m${i}.ts`);
      if (round === 0) files.push({ server: "filesystem", tool: "read_text_file", arguments: { path } });
      files.push({ server: "filesystem", tool: "edit_file", arguments: { path, edits: [{ oldText: `value${i} = ${round};`, newText: `value${i} = ${round + 1};` }] } });
    }
  }
  for (let i = 0; i < 10; i++) files.push({ server: "filesystem", tool: "write_file", arguments: { path: join(project, "notes", `n${i}.md`), content: `# note ${i}\n` } });
  files.push({ server: "filesystem", tool: "move_file", arguments: { source: join(project, "notes", "n0.md"), destination: join(project, "archive", "n0.md") } });
  files.push({ server: "filesystem", tool: "move_file", arguments: { source: join(project, "notes", "n1.md"), destination: join(project, "archive", "n1.md") } });
  const memory: ScriptedCall[] = [
    { server: "memory", tool: "read_graph", arguments: {} },
    { server: "memory", tool: "delete_entities", arguments: { entityNames: ["draft-1"] } },
    { server: "memory", tool: "search_nodes", arguments: { query: "project" } },
    { server: "memory", tool: "delete_observations", arguments: { deletions: [{ entityName: "project", observations: ["an old note"] }] } },
    { server: "memory", tool: "delete_entities", arguments: { entityNames: ["draft-2"] } },
  ];
  const github: ScriptedCall[] = [];
  for (let i = 0; i < 25; i++) {
    const tool = GITHUB_READS[i % GITHUB_READS.length] as string;
    github.push({ server: "github", tool, arguments: { owner: "ada", repo: "app", query: `q${i}`, issue_number: i + 1, pull_number: i + 1, path: "README.md" } });
  }
  github.splice(8, 0, { server: "github", tool: "create_issue", arguments: { owner: "ada", repo: "app", title: "Flaky test", body: "Seen twice today." } });
  github.splice(17, 0, { server: "github", tool: "add_issue_comment", arguments: { owner: "ada", repo: "app", issue_number: 42, body: "Fixed in the branch." } });
  github.push({ server: "github", tool: "create_pull_request", arguments: { owner: "ada", repo: "app", title: "Fix the flaky test", head: "fix", base: "main" } });
  // Interleaved as work is: a few file calls, a look at GitHub, now and then memory.
  const out: ScriptedCall[] = [];
  while (files.length + memory.length + github.length > 0) {
    out.push(...files.splice(0, 4), ...github.splice(0, 2), ...memory.splice(0, 1));
  }
  return out;
}

/** Whether a tool writes: what its server declares, else the catalog's hint, else (declares nothing) it may. */
function writes(server: string, tool: string): boolean {
  const definition = BENIGN.servers[server]?.tools.find((t) => t.name === tool);
  if (!definition) return true;
  const annotations = definition.annotations ?? catalogHint(definition)?.annotations;
  return annotations?.readOnlyHint !== true;
}

/** A fresh project (a git repository with files to edit) and a memory graph with things to delete. */
function freshWork(project: string, memoryFile: string): void {
  rmSync(project, { recursive: true, force: true });
  for (const dir of [".git", "src", "notes", "archive"]) mkdirSync(join(project, dir), { recursive: true });
  for (let i = 0; i < FILES; i++) writeFileSync(join(project, "src", `m${i}.ts`), `export const value${i} = 0;\n`);
  const entity = (name: string, observations: string[]) => JSON.stringify({ type: "entity", name, entityType: "note", observations });
  writeFileSync(memoryFile, `${[entity("draft-1", ["to go"]), entity("draft-2", ["to go"]), entity("project", ["an old note", "a current note"])].join("\n")}\n`);
}

type Machine = { home: string; project: string; memoryFile: string; env: Record<string, string> };

function machine(root: string): Machine {
  const home = join(root, "home");
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("THOUGHTGATE_") && key !== "CLAUDE_CONFIG_DIR") env[key] = value;
  Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_STATE_HOME: join(home, ".local", "state"), THOUGHTGATE_DESKTOP_NOTIFY: "off" });
  return { home, project: join(home, "src", "app"), memoryFile: join(home, "memory.jsonl"), env };
}

export type SessionResult = {
  label: string;
  answer: Answer;
  calls: number;
  prompts: number;
  /** Prompts per distinct tool, for the tools asked about. */
  perTool: Map<string, number>;
  distinctWriters: number;
  /** Calls that reached a server and write, without a person's yes in the audit. */
  unapprovedWrites: string[];
  githubReads: { calls: number; asked: number; byCatalog: number };
  refused: number;
  seconds: number;
};

type Recorded = { server: string; id: unknown; tool: string };

/** The tools/call lines that reached each server, from the recorder between shim and server. */
function recordedCalls(logs: Record<string, string>): Recorded[] {
  return Object.entries(logs).flatMap(([server, log]) =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter((line) => line.includes('"dir":"agent"'))
      .map((line) => JSON.parse(JSON.parse(line).line) as { id?: unknown; method?: string; params?: { name?: string } })
      .filter((message) => message.method === "tools/call")
      .map((message) => ({ server, id: message.id, tool: String(message.params?.name) })),
  );
}

type AuditEvent = { type: string; server_id: string; request_id?: unknown; call_id?: string; decision?: string; approved_by?: string; rule_id?: string; reason?: string };

/** A person said yes to this call: they approved it (or its tool for the session), or "always" wrote the rule that forwarded it. */
function personSaidYes(decision: AuditEvent | undefined): boolean {
  if (!decision || decision.decision !== "forward") return false;
  if (decision.approved_by && decision.approved_by !== "timeout") return true;
  return decision.rule_id?.startsWith("always-allow-") === true;
}

async function runSession(m: Machine, label: string, answer: Answer, githubArgs: string[], dir: string): Promise<SessionResult> {
  progress(`scripted hour: ${label}`);
  freshWork(m.project, m.memoryFile);
  const logs = { filesystem: join(dir, `${label}-filesystem.jsonl`), memory: join(dir, `${label}-memory.jsonl`), github: join(dir, `${label}-github.jsonl`) };
  for (const log of Object.values(logs)) rmSync(log, { force: true });
  const recorder = join(FIXTURES, "stdio-recorder-fixture.ts");
  const bun = process.execPath;
  writeFileSync(
    join(m.home, ".claude.json"),
    JSON.stringify({
      mcpServers: {
        filesystem: { command: bun, args: [recorder, logs.filesystem, "--", "node", FILESYSTEM, m.project] },
        memory: { command: bun, args: [recorder, logs.memory, "--", "node", MEMORY], env: { MEMORY_FILE_PATH: m.memoryFile } },
        github: { command: bun, args: [recorder, logs.github, "--", bun, join(FIXTURES, "github-recorded-server-fixture.ts"), ...githubArgs] },
      },
    }),
  );
  const script = hourScript(m.project);
  const scriptFile = join(dir, `${label}-script.json`);
  const reportFile = join(dir, `${label}-report.json`);
  const pageFile = join(dir, `${label}-page`);
  writeFileSync(scriptFile, JSON.stringify(script));
  rmSync(pageFile, { force: true });
  const started = performance.now();
  const agent = [bun, join(import.meta.dir, "hour-agent.ts"), join(m.home, ".claude.json"), scriptFile, reportFile, answer, pageFile];
  const wrap = Bun.spawn([BINARY, "wrap", "--agent-type", "claude-code", "--", ...agent], { cwd: m.project, env: m.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let stderr = "";
  let events: string | null = null;
  const reading = (async () => {
    for await (const chunk of wrap.stderr) {
      stderr += new TextDecoder().decode(chunk);
      const page = /approvals page \(keep it private\) (\S+)/.exec(stderr)?.[1];
      if (page) writeFileSync(pageFile, page);
      events ??= /session record (\S+)/.exec(stderr)?.[1] ?? null;
    }
  })();
  const [code] = await Promise.all([wrap.exited, new Response(wrap.stdout).text(), reading]);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0 || events === null) throw new Error(`scripted hour ${label}: wrap exited ${code}\n${stderr}`);
  const report = JSON.parse(readFileSync(reportFile, "utf8")) as HourReport;

  const audit = readFileSync(events, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as AuditEvent);
  const starts = new Map(audit.filter((e) => e.type === "tool_call_start").map((e) => [`${e.server_id} ${JSON.stringify(e.request_id)}`, e.call_id]));
  const decisions = new Map(audit.filter((e) => e.type === "tool_call_decision" && e.decision !== "pending").map((e) => [e.call_id, e]));
  const recorded = recordedCalls(logs);
  const unapprovedWrites = recorded
    .filter((call) => writes(call.server, call.tool))
    .filter((call) => !personSaidYes(decisions.get(starts.get(`${call.server} ${JSON.stringify(call.id)}`))))
    .map((call) => `${call.server}.${call.tool}`);
  const githubReadCalls = recorded.filter((call) => call.server === "github" && !writes("github", call.tool));
  const byCatalog = githubReadCalls.filter((call) => {
    const decision = decisions.get(starts.get(`github ${JSON.stringify(call.id)}`));
    return decision?.approved_by === undefined && decision?.reason?.includes("annotation catalog") === true;
  }).length;
  const perTool = new Map<string, number>();
  for (const prompt of report.prompts) perTool.set(`${prompt.server}.${prompt.tool}`, (perTool.get(`${prompt.server}.${prompt.tool}`) ?? 0) + 1);
  const writers = new Set(script.filter((call) => writes(call.server, call.tool)).map((call) => `${call.server}.${call.tool}`));
  return {
    label,
    answer,
    calls: script.length,
    prompts: report.prompts.length,
    perTool,
    distinctWriters: writers.size,
    unapprovedWrites,
    githubReads: { calls: githubReadCalls.length, asked: report.prompts.filter((p) => p.server === "github" && !writes("github", p.tool)).length, byCatalog },
    refused: report.calls.filter((call) => call.outcome !== "ok").length,
    seconds,
  };
}

export type HourFigures = { sessions: SessionResult[] };

export async function measureHour(): Promise<HourFigures> {
  using before = tempDir("thoughtgate-hour-");
  using after = tempDir("thoughtgate-hour-");
  const old = machine(before.path);
  const now = machine(after.path);
  const sessions: SessionResult[] = [];
  sessions.push(await runSession(old, "without the catalog, once", "once", ["--alter"], before.path));
  sessions.push(await runSession(now, "once", "once", [], after.path));
  sessions.push(await runSession(now, "this session", "session", [], after.path));
  sessions.push(await runSession(now, "always", "always", [], after.path));
  sessions.push(await runSession(now, "after always", "once", [], after.path));
  return { sessions };
}

/** What the Must show asks of the hour; a failed one makes `bun run bench` exit 1. */
export function hourChecks(figures: HourFigures): string[] {
  const failures: string[] = [];
  const find = (label: string) => figures.sessions.find((s) => s.label === label) as SessionResult;
  const session = find("this session");
  const overOne = [...session.perTool].filter(([, n]) => n > 1).map(([tool, n]) => `${tool} ×${n}`);
  if (overOne.length > 0) failures.push(`"this session": more than one prompt for ${overOne.join(", ")}`);
  if (find("after always").prompts !== 0) failures.push(`after "always": ${find("after always").prompts} prompts, not 0`);
  for (const s of figures.sessions) {
    if (s.unapprovedWrites.length > 0) failures.push(`${s.label}: writes reached a server without a person's yes: ${s.unapprovedWrites.join(", ")}`);
    if (s.refused > 0) failures.push(`${s.label}: ${s.refused} calls refused or failed`);
    if (s.label !== "without the catalog, once" && (s.githubReads.asked > 0 || s.githubReads.byCatalog !== s.githubReads.calls)) {
      failures.push(`${s.label}: server-github's reads: ${s.githubReads.asked} asked, ${s.githubReads.byCatalog} of ${s.githubReads.calls} forwarded by the catalog`);
    }
  }
  return failures;
}

export function hourSection(figures: HourFigures): string {
  const first = figures.sessions[0] as SessionResult;
  const rows = figures.sessions.map((s) => [
    s.label,
    String(s.prompts),
    String(s.perTool.size),
    `${s.githubReads.asked} asked, ${s.githubReads.byCatalog} of ${s.githubReads.calls} by the catalog`,
    String(s.unapprovedWrites.length),
    `${s.seconds.toFixed(1)} s`,
  ]);
  const failures = hourChecks(figures);
  return [
    "## The scripted hour",
    "",
    `- ${first.calls} calls per session through \`thoughtgate wrap --agent-type claude-code\` with the embedded default policy: 30 \`edit_file\`, 10 \`write_file\`, 2 \`move_file\` and 10 \`read_text_file\` on the real server-filesystem; 3 deletes and 2 reads on the real server-memory; 25 reads and 3 writes (\`create_issue\`, \`add_issue_comment\`, \`create_pull_request\`) on server-github's recorded definitions answered locally; a scripted agent (test/bench/hour-agent.ts, the real MCP SDK client with form elicitation) and a person who answers every prompt the same way (\"always\" on the approvals page until the form offers it)`,
    "- each session starts from the same files and memory graph; \"without the catalog\" serves server-github's definitions with one more space in each description, on another machine (its own home), as every tool that declares nothing was decided before the catalog; the other four share a home, so \"always\" writes its rules into that user's policy",
    `- the hour's tools that write: ${first.distinctWriters} (edit_file, write_file, move_file, delete_entities, delete_observations, create_issue, add_issue_comment, create_pull_request)`,
    "- writes without a yes: tools/call lines that reached a server (recorded between shim and server) for a tool that is not read-only, whose audited decision is neither a person's approval (once, for the session) nor a rule \"always\" wrote",
    "",
    table(["session (the person answers)", "prompts", "distinct tools asked", "server-github's reads", "writes without a yes", "wall time"], rows),
    "",
    failures.length === 0 ? "- checks: PASS (\"this session\": at most one prompt per tool; after \"always\": none; no write without a yes; server-github's reads never asked)" : `- checks: FAIL: ${failures.join("; ")}`,
  ].join("\n");
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
