import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";
import { CallAssembler, type AssemblySource } from "./call-assembler.ts";
import { whereOf, type LogFilter } from "./log-filter.ts";
import { approvedByPerson, type LogCall } from "./log-call.ts";
import { recordFiles, type RecordFile } from "./record-files.ts";
import type { RecordIndex } from "./record-index.ts";

/** How often the record is looked at for new lines: a call shows well within a second of its end. */
export const FOLLOW_POLL_MS = 200;

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
  const assemblers = new Map<string, CallAssembler>();
  const shown = new Set<string>();
  const matcher = new Database(":memory:");
  matcher.run(
    "CREATE TABLE calls (id INTEGER PRIMARY KEY, ts INTEGER, session TEXT, server TEXT, tool TEXT, agent TEXT, project TEXT, decision TEXT, outcome TEXT, asked INTEGER, person INTEGER, status TEXT, doc TEXT)",
  );
  const where = whereOf(options.filter);
  const insert = matcher.query("INSERT INTO calls (ts, session, server, tool, agent, project, decision, outcome, asked, person, status, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const select = matcher.query(`SELECT doc FROM calls ${where.sql} ORDER BY ts, id`);

  const assemblerOf = (file: RecordFile): CallAssembler => {
    let assembler = assemblers.get(file.path);
    if (!assembler) {
      const source: AssemblySource = { session: file.session, fileKey: file.path, loadCall: (id) => options.index.loadCall(file.path, id), loadRun: (runId, server) => options.index.loadRun(file.path, runId, server) };
      assembler = new CallAssembler(source);
      assemblers.set(file.path, assembler);
    }
    return assembler;
  };

  const poll = () => {
    const ended: LogCall[] = [];
    for (const file of recordFiles(options.env)) {
      const from = offsets.get(file.path) ?? 0;
      if (file.size <= from) continue;
      const lines = readLinesFrom(file.path, from);
      if (lines.bytes === 0) continue;
      offsets.set(file.path, from + lines.bytes);
      const assembler = assemblerOf(file);
      for (const line of lines.text.split("\n")) {
        if (line === "") continue;
        try {
          const event = JSON.parse(line) as Record<string, unknown>;
          if (event !== null && typeof event === "object") assembler.add(event);
        } catch {
          // A line cut short: skipped, as the index does.
        }
      }
      for (const call of assembler.changed.values()) {
        if (call.ended !== null && !shown.has(call.call_id)) {
          shown.add(call.call_id);
          ended.push(call);
        }
      }
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

/** The whole lines of `path` from `from` on (a line still being written waits for the next poll). */
function readLinesFrom(path: string, from: number): { text: string; bytes: number } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { text: "", bytes: 0 };
  }
  try {
    const chunks: Buffer[] = [];
    let offset = from;
    for (;;) {
      const buffer = Buffer.alloc(1024 * 1024);
      const read = readSync(fd, buffer, 0, buffer.length, offset);
      if (read === 0) break;
      chunks.push(buffer.subarray(0, read));
      offset += read;
    }
    const all = Buffer.concat(chunks);
    const end = all.lastIndexOf(0x0a);
    return end === -1 ? { text: "", bytes: 0 } : { text: all.toString("utf8", 0, end + 1), bytes: end + 1 };
  } finally {
    closeSync(fd);
  }
}
