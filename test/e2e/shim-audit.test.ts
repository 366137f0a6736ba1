/**
 * The shim's audit (docs/events.md) through the compiled binary: on by default in the state
 * directory, off only when asked (`--events none`), never losing a call under sustained pipelined
 * load, and saying what the agent actually got: how many list items the server sent and the agent
 * saw, and the size of every answer line, denials included.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, readEvents, requireBinary, ROOT, tempDir, waitFor } from "../support/harness.ts";

setDefaultTimeout(60_000);
requireBinary();

const BENCH_SERVER = [process.execPath, join(ROOT, "test", "bench", "bench-server.ts")];

type ShimRun = { code: number; lines: string[]; stderr: string };

/**
 * Run the shim, write `requests` to it in one go (pipelined), wait until `answers` lines came back,
 * then close its stdin (agent EOF) and wait for it to exit. `lines` are the raw lines it wrote.
 */
async function runShim(args: string[], requests: unknown[], answers: number, env: Record<string, string | undefined> = process.env, cwd?: string): Promise<ShimRun> {
  await using proc = Bun.spawn([requireBinary(), "shim", ...args], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env, ...(cwd ? { cwd } : {}) });
  const stderr = new Response(proc.stderr).text();
  const lines: string[] = [];
  const reading = (async () => {
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      const parts = (buffered + decoder.decode(chunk, { stream: true })).split("\n");
      buffered = parts.pop() ?? "";
      lines.push(...parts);
    }
  })();
  proc.stdin.write(requests.map((request) => `${JSON.stringify(request)}\n`).join(""));
  await proc.stdin.flush();
  await waitFor(() => lines.length >= answers || proc.exitCode !== null, `${answers} answers from the shim`, 50_000);
  await proc.stdin.end();
  const code = await proc.exited;
  await reading;
  return { code, lines, stderr: await stderr };
}

const initialize = { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "audit", version: "1" } } };
const toolCall = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

/** A state directory of the test's own, so the default audit file can be found and nothing else writes there. */
function stateEnv(dir: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { ...process.env, XDG_STATE_HOME: join(dir, "state"), ...extra };
}

describe("where the audit goes", () => {
  test("without --events, a standalone shim writes its run to the state directory, one file per run", async () => {
    using dir = tempDir();
    const env = stateEnv(dir.path, { THOUGHTGATE_RUN_ID: "run-audit-default" });
    const run = await runShim(["--server-id", "notes/local", "--", ...BENCH_SERVER], [initialize, toolCall(1, "echo", { a: 1 })], 2, env);
    expect(run.code).toBe(0);
    const runs = join(dir.path, "state", "thoughtgate", "runs");
    const days = readdirSync(runs);
    expect(days).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)]);
    // The server id made file-safe, then the run id.
    expect(readdirSync(join(runs, days[0] as string))).toEqual(["notes_local-run-audit-default.jsonl"]);
    const events = readEvents(join(runs, days[0] as string, "notes_local-run-audit-default.jsonl"));
    // The call came before any list: the shim read the tools itself and pinned them (both of the bench server's).
    expect(events.map((e) => e.type).filter((type) => type !== "definition_pinned")).toEqual(["run_start", "server_state", "tool_call_start", "tool_call_decision", "tool_call_end", "server_state", "run_end"]);
    expect(events.filter((e) => e.type === "definition_pinned").map((e) => e.name)).toEqual(["echo", "blob"]);
    expect(events[0]).toMatchObject({ run_id: "run-audit-default", server_id: "notes/local" });
  });

  test("a run id with slashes ($THOUGHTGATE_RUN_ID comes from the agent's config) cannot put the file outside the day's directory", async () => {
    using dir = tempDir();
    const env = stateEnv(dir.path, { THOUGHTGATE_RUN_ID: "../../../escaped" });
    const run = await runShim(["--server-id", "srv", "--", ...BENCH_SERVER], [initialize, toolCall(1, "echo")], 2, env);
    expect(run.code).toBe(0);
    const runs = join(dir.path, "state", "thoughtgate", "runs");
    const [day] = readdirSync(runs);
    expect(readdirSync(runs)).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)]);
    expect(readdirSync(join(runs, day as string))).toEqual(["srv-.._.._.._escaped.jsonl"]);
    // Besides the run, only the server's pins (docs/governance.md, "Pinned definitions").
    expect(readdirSync(join(dir.path, "state", "thoughtgate")).sort()).toEqual(["pins", "runs"]);
  });

  test("--events none writes nothing at all (not even a file named none)", async () => {
    using dir = tempDir();
    const run = await runShim(["--events", "none", "--", ...BENCH_SERVER], [initialize, toolCall(1, "echo")], 2, stateEnv(dir.path), dir.path);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.lines[1] as string)).toMatchObject({ id: 1, result: { structuredContent: {} } });
    // No audit anywhere: the state directory holds only the server's pins.
    expect(readdirSync(dir.path)).toEqual(["state"]);
    expect(readdirSync(join(dir.path, "state", "thoughtgate"))).toEqual(["pins"]);
  });
});

describe("no call is missing from the audit", () => {
  test("20,000 pipelined calls: a tool_call_end for every call answered, seq without a gap", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const calls = 20_000;
    const requests = [initialize, ...Array.from({ length: calls }, (_, i) => toolCall(i + 1, "echo", { i, pad: "x".repeat(64) }))];
    const run = await runShim(["--server-id", "load", "--events", events, "--", ...BENCH_SERVER], requests, calls + 1);
    expect(run.code).toBe(0);
    const answered = run.lines.map((line) => JSON.parse(line) as { id: unknown; result?: unknown }).filter((m) => typeof m.id === "number" && m.result !== undefined);
    expect(answered.length).toBe(calls);

    const all = readEvents(events);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    const count = (type: string) => all.filter((e) => e.type === type).length;
    expect({ starts: count("tool_call_start"), decisions: count("tool_call_decision"), ends: count("tool_call_end") }).toEqual({ starts: calls, decisions: calls, ends: calls });
    // Every call answered is in the audit by its request id.
    const started = new Set(all.filter((e) => e.type === "tool_call_start").map((e) => e.request_id));
    expect(answered.every((m) => started.has(m.id))).toBe(true);
    expect(all.at(-1)).toMatchObject({ type: "run_end", summary: { calls_total: calls, calls_forwarded: calls, events_dropped: 0 } });
  });
});

describe("what the agent got", () => {
  test("a list_result event: how many tools the server listed, how many the agent was shown", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const policy = join(dir.path, "thoughtgate.yaml");
    writeFileSync(policy, "schema: 1\nsources:\n  - { id: scripted, expose: { mode: allowlist, tools: [echo, env] } }\n");
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const run = await runShim(["--server-id", "scripted", "--thoughtgate-config", policy, "--events", events, "--", ...fixture("scripted-server-fixture.ts")], [initialize, list], 2);
    expect(run.code).toBe(0);
    const shown = (JSON.parse(run.lines[1] as string) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
    expect(shown).toEqual(["echo", "env"]);
    expect(readEvents(events).filter((e) => e.type === "list_result")).toEqual([
      expect.objectContaining({ request_id: 1, method: "tools/list", upstream_count: 6, returned_count: 2 }),
    ]);
  });

  test("tool_call_end.bytes_out is the size in bytes of the line the agent got, for a forwarded call and a denied one", async () => {
    using dir = tempDir();
    const events = join(dir.path, "events.jsonl");
    const policy = join(dir.path, "thoughtgate.yaml");
    writeFileSync(policy, "schema: 1\ngovernance:\n  rules: [{ id: no-env, match: env, action: deny }]\n");
    // Multi-byte characters in both answers (the denial names the server), so counting characters would not match the bytes.
    const requests = [initialize, toolCall(1, "echo", { text: "héllo ✓ 🌍" }), toolCall(2, "env")];
    const run = await runShim(["--server-id", "notes-✓", "--thoughtgate-config", policy, "--events", events, "--", ...fixture("scripted-server-fixture.ts")], requests, 3);
    expect(run.code).toBe(0);
    const lineFor = (id: number) => run.lines.find((line) => (JSON.parse(line) as { id: unknown }).id === id) as string;
    expect(JSON.parse(lineFor(2))).toMatchObject({ error: { code: -32014 } });
    // The denial may be written before the server answers the echo: compare in tool order.
    const ends = readEvents(events).filter((e) => e.type === "tool_call_end").sort((a, b) => String(a.tool).localeCompare(String(b.tool)));
    expect(ends.map((e) => [e.tool, e.status, e.bytes_out])).toEqual([
      ["echo", "ok", Buffer.byteLength(lineFor(1))],
      ["env", "denied", Buffer.byteLength(lineFor(2))],
    ]);
  });
});
