import { Database } from "bun:sqlite";
import { CallAssembler, type AssemblySource } from "./call-assembler.ts";
import { whereOf, type LogFilter } from "./log-filter.ts";
import { approvedByPerson, type LogCall } from "./log-call.ts";
import { recordFiles } from "./record-files.ts";
import type { RecordIndex } from "./record-index.ts";
import { closeSync, openRecord, readWholeLines } from "./record-lines.ts";

/** How often the record is looked at for new lines: a call shows well within a second of its end. */
const FOLLOW_POLL_MS = 200;

/**
 * One record file read as it grows: each `poll` reads the whole lines it gained and returns the
 * calls that ended since (each once). Calls that began before `from` are found through `source`.
 */
class FileTail {
  private readonly assembler: CallAssembler;
  private readonly shown = new Set<string>();

  constructor(
    private readonly path: string,
    private offset: number,
    source: AssemblySource,
  ) {
    this.assembler = new CallAssembler(source);
  }

  poll(): LogCall[] {
    const fd = openRecord(this.path);
    if (fd === null) return [];
    const ended: LogCall[] = [];
    try {
      for (;;) {
        const chunk = readWholeLines(fd, this.offset);
        if (chunk.bytes === 0) break;
        this.offset += chunk.bytes;
        for (const line of chunk.text.split("\n")) {
          if (line === "") continue;
          try {
            const event = JSON.parse(line) as Record<string, unknown>;
            if (event !== null && typeof event === "object") this.assembler.add(event);
          } catch {
            // A line cut short: skipped, as the index does.
          }
        }
        if (!chunk.more) break;
      }
    } finally {
      closeSync(fd);
    }
    for (const call of this.assembler.changed.values()) {
      if (call.ended === null || this.shown.has(call.call_id)) continue;
      this.shown.add(call.call_id);
      ended.push(call);
    }
    // What was shown will not change again: it need not be kept.
    for (const call of ended) this.assembler.changed.delete(call.call_id);
    return ended;
  }
}

/**
 * Every call of one record file as it ends, from its start, until `stop()` (which reads what is
 * left first): what the audit export sends on (audit-export.ts).
 */
export function tailCalls(path: string, session: string | null, onCall: (call: LogCall) => void, intervalMs = FOLLOW_POLL_MS): { stop(): void } {
  const tail = new FileTail(path, 0, { session, fileKey: path, loadCall: () => null, loadRun: () => null });
  const poll = () => {
    for (const call of tail.poll()) onCall(call);
  };
  const timer = setInterval(poll, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      poll();
    },
  };
}

/**
 * `thoughtgate log --follow`: every call matching `filter` that ends from now on, as it ends, in
 * every session and standalone run (new ones too). It reads what the record files gain past where
 * the index had them, on its own (another `log` updating the index meanwhile cannot take lines from
 * it), and decides what matches with the index's own conditions on a table in memory, so a filter
 * means the same live and afterwards. Polls: the files are appended by other processes (the shims),
 * and a short poll is simpler and more portable than file-system notifications for that.
 */
export function followCalls(options: { index: RecordIndex; filter: LogFilter; onCall: (call: LogCall) => void; env?: NodeJS.ProcessEnv; intervalMs?: number }): { stop(): void } {
  const offsets = options.index.indexedSizes();
  const tails = new Map<string, FileTail>();
  const matcher = new Database(":memory:");
  matcher.run(
    "CREATE TABLE calls (id INTEGER PRIMARY KEY, ts INTEGER, session TEXT, server TEXT, tool TEXT, agent TEXT, project TEXT, decision TEXT, outcome TEXT, asked INTEGER, person INTEGER, status TEXT, doc TEXT)",
  );
  const where = whereOf(options.filter);
  const insert = matcher.query("INSERT INTO calls (ts, session, server, tool, agent, project, decision, outcome, asked, person, status, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const select = matcher.query(`SELECT doc FROM calls ${where.sql} ORDER BY ts, id`);

  const poll = () => {
    const ended: LogCall[] = [];
    for (const file of recordFiles(options.env)) {
      const from = offsets.get(file.path) ?? 0;
      let tail = tails.get(file.path);
      if (!tail) {
        if (file.size <= from) continue;
        const path = file.path;
        tail = new FileTail(path, from, { session: file.session, fileKey: path, loadCall: (id) => options.index.loadCall(path, id), loadRun: (runId, server) => options.index.loadRun(path, runId, server) });
        tails.set(path, tail);
      }
      ended.push(...tail.poll());
    }
    if (ended.length === 0) return;
    for (const call of ended) {
      insert.run(Date.parse(call.time) || 0, call.session, call.server, call.tool, call.agent, call.project, call.decision, call.outcome, call.asked ? 1 : 0, approvedByPerson(call) ? 1 : 0, call.status, JSON.stringify(call));
    }
    const matching = select.all(...where.values) as Array<{ doc: string }>;
    matcher.run("DELETE FROM calls");
    for (const row of matching) options.onCall(JSON.parse(row.doc) as LogCall);
  };

  const timer = setInterval(poll, options.intervalMs ?? FOLLOW_POLL_MS);
  return {
    stop() {
      clearInterval(timer);
      matcher.close();
    },
  };
}
