import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RecordIndex, INDEX_FILE } from "../../src/record/record-index.ts";
import { fixture, tempDir } from "../support/harness.ts";
import { writeRecord } from "../bench/log-records.ts";

const dirs: Array<{ path: string; [Symbol.dispose](): void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir[Symbol.dispose]();
});

function home() {
  const dir = tempDir("thoughtgate-index-");
  dirs.push(dir);
  const env = { HOME: dir.path, XDG_STATE_HOME: dir.path };
  const session = join(dir.path, "thoughtgate", "sessions", "0190e4b2-7a1c-7000-8000-000000000001");
  mkdirSync(session, { recursive: true });
  return { env, events: join(session, "events.jsonl"), index: join(dir.path, "thoughtgate", INDEX_FILE), state: dir.path };
}

const envelope = (seq: number, ts = new Date().toISOString()) => ({ v: 1, ts, run_id: "r1", server_id: "fs", profile: "production", seq });
const line = (event: object) => `${JSON.stringify(event)}\n`;
const start = (id: string, seq: number, tool = "read_file") => line({ ...envelope(seq), type: "tool_call_start", call_id: id, request_id: seq, tool, args_hash: "h", arguments: { path: `/p/${id}` } });
const decision = (id: string, seq: number, verdict: "forward" | "deny") => line({ ...envelope(seq), type: "tool_call_decision", call_id: id, tool: "read_file", decision: verdict, gate: "rules", rule_id: "r", policy_id: null, reason: "rule r" });
const end = (id: string, seq: number, status = "ok") => line({ ...envelope(seq), type: "tool_call_end", call_id: id, tool: "read_file", args_hash: "h", status, latency_ms: 1, bytes_out: 10 });

describe("the log index", () => {
  test("a record appended later is indexed on the next update; a line still being written waits for its end", () => {
    const h = home();
    writeFileSync(h.events, start("c1", 1) + decision("c1", 2, "forward"));
    const index = RecordIndex.open(h.env);
    index.update();
    expect(index.query({}, 10).calls.map((c) => [c.call_id, c.outcome, c.status])).toEqual([["c1", "forwarded", null]]);
    // The end of c1, and half of c2's start.
    const next = start("c2", 4);
    appendFileSync(h.events, end("c1", 3) + next.slice(0, 20));
    index.update();
    expect(index.query({}, 10).calls.map((c) => [c.call_id, c.outcome, c.status])).toEqual([["c1", "forwarded", "ok"]]);
    appendFileSync(h.events, next.slice(20) + decision("c2", 5, "deny") + end("c2", 6, "denied"));
    index.update();
    expect(index.query({}, 10).calls.map((c) => [c.call_id, c.outcome])).toEqual([["c2", "denied"], ["c1", "forwarded"]]);
    index.close();
  });

  test("a file rewritten from its start is indexed again; a file removed loses its calls", () => {
    const h = home();
    writeFileSync(h.events, start("a1", 1) + end("a1", 2));
    const index = RecordIndex.open(h.env);
    index.update();
    writeFileSync(h.events, start("b1", 1) + end("b1", 2) + start("b2", 3) + end("b2", 4));
    index.update();
    expect(index.query({}, 10).calls.map((c) => c.call_id).toSorted()).toEqual(["b1", "b2"]);
    rmSync(h.events);
    index.update();
    expect(index.query({}, 10)).toEqual({ calls: [], total: 0 });
    index.close();
  });

  test("a row changed behind its back is caught when an answer reads it, and the index is rebuilt from the record", () => {
    const h = home();
    writeFileSync(h.events, start("c1", 1, "write_file") + decision("c1", 2, "deny") + end("c1", 3, "denied") + start("c2", 4) + decision("c2", 5, "forward") + end("c2", 6));
    const index = RecordIndex.open(h.env);
    index.update();
    const before = index.query({ decisions: ["denied"] }, 10).calls;
    index.close();
    // A damaged page that still parses: the denied call's row now says it was forwarded.
    const db = new Database(h.index);
    db.run("UPDATE calls SET decision = 'forward', outcome = 'forwarded' WHERE call_id = 'c1'");
    db.close();
    const again = RecordIndex.open(h.env);
    again.update();
    // The row that selects it is wrong, but every call shown is read from the record: c1 shows as it was.
    expect(() => again.query({ decisions: ["forwarded"] }, 10)).not.toThrow();
    expect(again.rebuilt).toContain("c1 is not in");
    expect(again.query({ decisions: ["denied"] }, 10).calls).toEqual(before);
    expect(again.query({ decisions: ["forwarded"] }, 10).calls.map((c) => c.call_id)).toEqual(["c2"]);
    again.close();
  });

  test("an index whose rows do not add up is rebuilt when it opens", () => {
    const h = home();
    writeFileSync(h.events, start("c1", 1) + end("c1", 2) + start("c2", 3) + end("c2", 4));
    const index = RecordIndex.open(h.env);
    index.update();
    index.close();
    const db = new Database(h.index);
    db.run("DELETE FROM calls WHERE call_id = 'c2'");
    db.close();
    const again = RecordIndex.open(h.env);
    expect(again.rebuilt).toBe("it holds 1 calls where its files add up to 2");
    again.update();
    expect(again.query({}, 10).calls.map((c) => c.call_id).toSorted()).toEqual(["c1", "c2"]);
    again.close();
  });

  test("several log processes updating at once index every call exactly once", async () => {
    const h = home();
    const written = writeRecord(h.state, { sessions: 12, callsPerSession: 1_500, days: 3 });
    const procs = [1, 2, 3].map(() => Bun.spawn(fixture("log-index-fixture.ts"), { env: { ...process.env, ...h.env }, stdout: "pipe", stderr: "pipe" }));
    const results = await Promise.all(procs.map(async (proc) => ({ code: await proc.exited, out: await new Response(proc.stdout).text(), err: await new Response(proc.stderr).text() })));
    for (const result of results) expect(result).toMatchObject({ code: 0, err: "" });
    // Together they indexed each call once: new calls counted by whoever indexed them.
    const index = RecordIndex.open(h.env);
    expect(index.rebuilt).toBeNull();
    expect(index.query({}, 1).total).toBe(written.calls);
    const db = new Database(h.index, { readonly: true });
    expect(db.query("SELECT count(*) AS n, count(DISTINCT call_id) AS d FROM calls").get()).toEqual({ n: written.calls, d: written.calls });
    db.close();
    index.close();
  });
});
