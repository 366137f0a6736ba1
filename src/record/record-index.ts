/**
 * The index `thoughtgate log` keeps beside the record (`<state dir>/log-index.sqlite`, Bun's
 * `bun:sqlite`), so a question over months of calls is not a scan of every file. The JSONL files
 * stay the record: the index is only ever built from them, is brought up to date with what they
 * gained before every answer, and is never trusted blindly (docs/events.md, "The index"):
 *
 * - it keeps only what a question selects on (time, server, tool, decision, outcome; session,
 *   agent and project with the call's file and run) and where in the record each call's lines
 *   are: every call an answer shows is assembled again from those lines of the record, and must
 *   agree with the row that selected it;
 * - a file it indexed that no longer starts with the bytes it read, or ends before where it
 *   stopped, is indexed again from its start; a file gone from disk loses its rows;
 * - its call count must match its own per-file counts when it opens;
 * - any error SQLite reports (a damaged or foreign file) and any failed check throws it away and
 *   builds it again from the record, then answers.
 *
 * Several `log`s (a `--follow` beside a query, two terminals asking) may update it at once: SQLite's
 * locking (WAL, a write transaction per batch that re-reads where the file was left) keeps each
 * batch whole and never indexes a line twice. The checks, the build and the queries are one file:
 * they share one connection and one recovery path.
 */
import { constants, Database } from "bun:sqlite";
import { lstatSync, mkdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { stateDir } from "../core/paths.ts";
import { kindOf } from "../core/safe-open.ts";
import { CallAssembler, type Assembled, type RunInfo } from "./call-assembler.ts";
import { whereOf, type FilterColumns, type LogFilter } from "./log-filter.ts";
import { approvedByPerson, type LogCall } from "./log-call.ts";
import { callFromLines, closeSync, fingerprint, openRecord, readWholeLines } from "./record-lines.ts";
import { recordFiles, type RecordFile } from "./record-files.ts";

export const INDEX_FILE = "log-index.sqlite";
/** Bumped whenever the tables or what a row holds change: an index of another version is rebuilt. */
const SCHEMA_VERSION = "2";
/** The start of a file the index remembers, to notice a file replaced by another. */
const HEAD_BYTES = 4096;
/** The bytes just before where indexing stopped, to notice a file cut or rewritten there. */
const TAIL_BYTES = 64;
/** How long a writer waits for another before giving up (SQLite's busy timeout). */
const BUSY_MS = 10_000;
/** The index and the files SQLite keeps beside it. */
const SQLITE_SUFFIXES = ["", "-wal", "-shm", "-journal"] as const;
/** SQLite refuses a symlink in place of the index (SQLITE_CANTOPEN_SYMLINK) instead of writing through it. */
const OPEN_FLAGS = constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | constants.SQLITE_OPEN_NOFOLLOW;

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session TEXT, size INTEGER NOT NULL, mtime REAL NOT NULL,
  head_len INTEGER NOT NULL, head TEXT NOT NULL, tail TEXT NOT NULL, calls INTEGER NOT NULL, newest INTEGER NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, run_id TEXT NOT NULL, server TEXT NOT NULL, agent TEXT, agent_command TEXT, project TEXT,
  UNIQUE (file_id, run_id, server));
CREATE TABLE calls (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, run INTEGER, call_id TEXT NOT NULL, ts INTEGER NOT NULL, server TEXT NOT NULL,
  tool TEXT NOT NULL, decision TEXT, outcome TEXT NOT NULL, asked INTEGER NOT NULL, person INTEGER NOT NULL, status TEXT, lines TEXT NOT NULL);
CREATE INDEX calls_ts ON calls (ts);
CREATE INDEX calls_server_ts ON calls (server, ts);
CREATE INDEX calls_file_ts ON calls (file_id, ts);
CREATE INDEX calls_id ON calls (call_id);
`;

/** A check of the index failed: it is rebuilt. */
class IndexDamaged extends Error {}

type FileRow = { id: number; path: string; size: number; mtime: number; head_len: number; head: string; tail: string; calls: number };
/** A call's row as a question selects it, with where its lines are. */
type CallRow = { call_id: string; ts: number; server: string; tool: string; outcome: string; lines: string; file_id: number; path: string; session: string | null };
type RunRow = { agent_command: string | null; project: string | null };

/** In the index, where a call ran is kept with its file (session) and its run (agent, project). */
const INDEX_COLUMNS: FilterColumns = {
  session: (test) => `file_id IN (SELECT id FROM files WHERE ${test.replaceAll("$", "session")})`,
  agent: (test) => `run IN (SELECT id FROM runs WHERE ${test.replaceAll("$", "agent")})`,
  project: (test) => `run IN (SELECT id FROM runs WHERE ${test.replaceAll("$", "project")})`,
};

const CALL_ROW = "SELECT c.call_id, c.ts, c.server, c.tool, c.outcome, c.lines, c.file_id, f.path, f.session FROM calls c JOIN files f ON f.id = c.file_id";

export type UpdateResult = { files: number; bytes: number; calls: number; rebuilt: string | null };

export class RecordIndex {
  private db: Database;
  /** Why the index was rebuilt during this process's use of it, if it was. */
  private rebuiltBecause: string | null = null;

  private constructor(
    readonly path: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.db = this.openChecked();
  }

  /** The index of this user's record, checked, ready to update. */
  static open(env: NodeJS.ProcessEnv = process.env, path = join(stateDir(env), INDEX_FILE)): RecordIndex {
    try {
      return new RecordIndex(path, env);
    } catch (error) {
      throw new ThoughtGateError("IO", `cannot open the log index ${path}: ${messageOf(error)}`);
    }
  }

  close(): void {
    this.db.close();
  }

  /** Why the index was rebuilt while this process used it (damaged, another version, deleted), or null. */
  get rebuilt(): string | null {
    return this.rebuiltBecause;
  }

  /** Index what the record gained since the last time (every file, or those given). */
  update(files: RecordFile[] = recordFiles(this.env)): UpdateResult {
    return this.guarded(() => {
      const result: UpdateResult = { files: 0, bytes: 0, calls: 0, rebuilt: null };
      const known = new Map((this.db.query("SELECT id, path, size, mtime, head_len, head, tail, calls FROM files").all() as FileRow[]).map((row) => [row.path, row]));
      for (const file of files) {
        const row = known.get(file.path);
        known.delete(file.path);
        if (row && row.size === file.size && row.mtime === file.mtimeMs) continue;
        const indexed = this.indexFile(file, row);
        if (indexed.bytes > 0) result.files += 1;
        result.bytes += indexed.bytes;
        result.calls += indexed.calls;
      }
      // Files no longer on disk (removed by hand, or pruned by another log): their rows go too.
      for (const gone of known.values()) this.forgetFile(gone.id);
      result.rebuilt = this.rebuiltBecause;
      return result;
    });
  }

  /** The newest calls matching `filter` (at most `limit`), and how many match in all. */
  query(filter: LogFilter, limit: number): { calls: LogCall[]; total: number } {
    return this.guarded(() => {
      const where = whereOf(filter, INDEX_COLUMNS);
      const rows = this.db.query(`${CALL_ROW} WHERE c.id IN (SELECT id FROM calls ${where.sql} ORDER BY ts DESC, id DESC LIMIT ?) ORDER BY c.ts DESC, c.id DESC`).all(...where.values, limit) as CallRow[];
      const total = rows.length < limit ? rows.length : (this.db.query(`SELECT count(*) AS n FROM calls ${where.sql}`).get(...where.values) as { n: number }).n;
      return { calls: this.fromRecord(rows), total };
    });
  }

  /** Calls whose id is `id` or starts with it (so a long id can be given in part), newest first. */
  find(id: string, limit = 2): LogCall[] {
    return this.guarded(() => {
      const starting = this.db.query(`${CALL_ROW} WHERE c.call_id >= ? AND c.call_id < ? ORDER BY c.ts DESC LIMIT ?`).all(id, `${id}\uffff`, limit) as CallRow[];
      if (starting.length > 0) return this.fromRecord(starting);
      // The short id `log` shows is the id's end (log-call.ts, shortCallId): a call id's start is its time.
      const pattern = `%${id.replace(/[\\%_]/g, (c) => `\\${c}`)}`;
      return this.fromRecord(this.db.query(`${CALL_ROW} WHERE c.call_id LIKE ? ESCAPE '\\' ORDER BY c.ts DESC LIMIT ?`).all(pattern, limit) as CallRow[]);
    });
  }

  /** How far each file is indexed (bytes), by path. */
  indexedSizes(): Map<string, number> {
    return this.guarded(() => new Map((this.db.query("SELECT path, size FROM files").all() as Array<{ path: string; size: number }>).map((row) => [row.path, row.size])));
  }

  /** A call of a file as the record has it, found through the index (for a follower continuing past the index). */
  loadCall(path: string, callId: string): Assembled | null {
    return this.guarded(() => {
      const row = this.db.query(`${CALL_ROW} WHERE f.path = ? AND c.call_id = ?`).get(path, callId) as CallRow | null;
      return row ? this.assemble(row) : null;
    });
  }

  /** What a run's `run_start` said, as the index holds it. */
  loadRun(path: string, runId: string, server: string): RunInfo | null {
    return this.guarded(() => {
      const found = this.db.query("SELECT r.agent_command, r.project FROM runs r JOIN files f ON f.id = r.file_id WHERE f.path = ? AND r.run_id = ? AND r.server = ?").get(path, runId, server) as RunRow | null;
      return found ? runInfo(found) : null;
    });
  }

  /** Files whose newest event is older than `cutoff` (ms since the epoch), with their session. */
  filesOlderThan(cutoff: number): Array<{ path: string; session: string | null; calls: number }> {
    return this.guarded(() => this.db.query("SELECT path, session, calls FROM files WHERE newest < ? ORDER BY newest").all(cutoff) as Array<{ path: string; session: string | null; calls: number }>);
  }

  /** Drop the rows of files removed from the record. */
  forget(paths: string[]): void {
    this.guarded(() => {
      for (const path of paths) {
        const row = this.db.query("SELECT id FROM files WHERE path = ?").get(path) as { id: number } | null;
        if (row) this.forgetFile(row.id);
      }
    });
  }

  /** The calls of `rows`, each assembled again from its lines in the record and checked against its row. */
  private fromRecord(rows: CallRow[]): LogCall[] {
    return rows.map((row) => {
      const assembled = this.assemble(row);
      const call = assembled?.call;
      if (!call || call.server !== row.server || call.tool !== row.tool || call.outcome !== row.outcome || (Date.parse(call.time) || 0) !== row.ts) {
        throw new IndexDamaged(`call ${row.call_id} is not in ${row.path} as indexed`);
      }
      return call;
    });
  }

  private assemble(row: CallRow): Assembled | null {
    const fd = openRecord(row.path);
    if (fd === null) return null;
    try {
      const runs = this.db.query("SELECT agent_command, project FROM runs WHERE file_id = ? AND run_id = ? AND server = ?");
      const loadRun = (runId: string, server: string) => {
        const found = runs.get(row.file_id, runId, server) as RunRow | null;
        return found ? runInfo(found) : null;
      };
      return callFromLines(fd, row.lines.split(",").map(Number), { path: row.path, session: row.session, callId: row.call_id, loadRun });
    } finally {
      closeSync(fd);
    }
  }

  /** Run `step`; if SQLite or a check says the index is damaged, rebuild it from the record and run it again. */
  private guarded<T>(step: () => T): T {
    try {
      return step();
    } catch (error) {
      if (!isDamage(error) || this.rebuiltBecause !== null) throw error;
      const why = error instanceof IndexDamaged ? error.message : `it was damaged (${messageOf(error)})`;
      this.rebuild(why);
      return step();
    }
  }

  private rebuild(why: string): void {
    log.warn(`the log index ${this.path} is rebuilt from the record: ${why}`);
    this.rebuiltBecause = why;
    try {
      this.db.close();
    } catch {
      // A damaged file may refuse to close cleanly: it is deleted next.
    }
    this.db = this.create();
    this.update();
  }

  /** Open the index, or make it; an index that fails a check is made again. */
  private openChecked(): Database {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const foreign = this.foreignFile();
    if (foreign !== null) {
      log.warn(`the log index ${this.path} is rebuilt from the record: ${foreign}`);
      this.rebuiltBecause = foreign;
      return this.create();
    }
    let db: Database | null = null;
    try {
      db = new Database(this.path, OPEN_FLAGS);
      configure(db);
      const opened = db;
      // Made here if new: in a write transaction, so several logs starting at once make it once.
      opened.transaction(() => {
        const tables = opened.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() as { n: number };
        if (tables.n > 0) return;
        opened.run(SCHEMA);
        opened.run("INSERT INTO meta (key, value) VALUES ('version', ?)", [SCHEMA_VERSION]);
      }).immediate();
      const version = db.query("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | null;
      if (version?.value !== SCHEMA_VERSION) throw new IndexDamaged(`it was made by another version (${version?.value ?? "none"})`);
      const counts = db.query("SELECT (SELECT count(*) FROM calls) AS rows, (SELECT coalesce(sum(calls), 0) FROM files) AS counted").get() as { rows: number; counted: number };
      if (counts.rows !== counts.counted) throw new IndexDamaged(`it holds ${counts.rows} calls where its files add up to ${counts.counted}`);
      return db;
    } catch (error) {
      if (!isDamage(error)) throw error;
      try {
        db?.close();
      } catch {
        // As above: it is deleted next.
      }
      const why = error instanceof IndexDamaged ? error.message : `it was damaged (${messageOf(error)})`;
      log.warn(`the log index ${this.path} is rebuilt from the record: ${why}`);
      this.rebuiltBecause = why;
      return this.create();
    }
  }

  /**
   * Why the index or a file beside it is not one SQLite may open, or null: a symlink (written
   * through, it would land outside the state directory), a FIFO (opening it could block, reading it
   * fails), a file with a second name, anything but a regular file. Looked at without following
   * links, before SQLite opens anything; `create` then removes the name itself, never what it points to.
   */
  private foreignFile(): string | null {
    for (const suffix of SQLITE_SUFFIXES) {
      const path = `${this.path}${suffix}`;
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      if (!stat.isFile()) return `${path} was ${kindOf(stat)}, not a regular file (removed; nothing was read or written through it)`;
      if (stat.nlink > 1) return `${path} had ${stat.nlink} hard links, another name for the same file (removed; nothing was written through it)`;
    }
    return null;
  }

  /** A new, empty index in place of a damaged one (its WAL and shared-memory files too). */
  private create(): Database {
    for (const suffix of SQLITE_SUFFIXES) {
      const path = `${this.path}${suffix}`;
      // rmSync removes a symlink or a FIFO itself; a directory here is the user's, never removed.
      if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) throw new ThoughtGateError("IO", `${path} is a directory, not the log index: move it away, then run log again`);
      rmSync(path, { force: true });
    }
    const db = new Database(this.path, OPEN_FLAGS);
    configure(db);
    db.transaction(() => {
      db.run(SCHEMA);
      db.run("INSERT INTO meta (key, value) VALUES ('version', ?)", [SCHEMA_VERSION]);
    }).immediate();
    return db;
  }

  private forgetFile(id: number): void {
    this.db.transaction(() => {
      this.db.run("DELETE FROM calls WHERE file_id = ?", [id]);
      this.db.run("DELETE FROM runs WHERE file_id = ?", [id]);
      this.db.run("DELETE FROM files WHERE id = ?", [id]);
    })();
  }

  /** Index `file` from where the index left it (its start, when it no longer matches what was read). */
  private indexFile(file: RecordFile, known: FileRow | undefined): { bytes: number; calls: number } {
    // Removed between the walk and now: the next update forgets it.
    const fd = openRecord(file.path);
    if (fd === null) return { bytes: 0, calls: 0 };
    try {
      if (known && !sameStart(fd, known)) this.forgetFile(known.id);
      let bytes = 0;
      let calls = 0;
      for (;;) {
        const batch = this.db.transaction(() => this.indexBatch(fd, file)).immediate();
        bytes += batch.bytes;
        calls += batch.calls;
        if (!batch.more) return { bytes, calls };
      }
    } finally {
      closeSync(fd);
    }
  }

  /**
   * One batch, inside a write transaction: where the file was left is read again here, so two
   * processes updating at once never index the same bytes twice.
   */
  private indexBatch(fd: number, file: RecordFile): { bytes: number; calls: number; more: boolean } {
    const row = this.db.query("SELECT id, path, size, mtime, head_len, head, tail, calls FROM files WHERE path = ?").get(file.path) as FileRow | null;
    if (row && !sameStart(fd, row)) {
      this.forgetFile(row.id);
      return { bytes: 0, calls: 0, more: true };
    }
    const from = row?.size ?? 0;
    const fileId = row?.id ?? (this.db.query("INSERT INTO files (path, session, size, mtime, head_len, head, tail, calls, newest) VALUES (?, ?, 0, 0, 0, '', '', 0, 0) RETURNING id").get(file.path, file.session) as { id: number }).id;
    const chunk = readWholeLines(fd, from);
    const runs = this.db.query("SELECT agent_command, project FROM runs WHERE file_id = ? AND run_id = ? AND server = ?");
    const loadRun = (runId: string, server: string) => {
      const found = runs.get(fileId, runId, server) as RunRow | null;
      return found ? runInfo(found) : null;
    };
    const earlier = this.db.query(`${CALL_ROW} WHERE c.file_id = ? AND c.call_id = ?`);
    const assembler = new CallAssembler({
      session: file.session,
      fileKey: file.path,
      loadCall: (id) => {
        const found = earlier.get(fileId, id) as CallRow | null;
        return found ? callFromLines(fd, found.lines.split(",").map(Number), { path: file.path, session: file.session, callId: id, loadRun }) : null;
      },
      loadRun,
    });
    let newest = 0;
    let offset = from;
    for (const line of chunk.text.split("\n")) {
      const at = offset;
      offset += Buffer.byteLength(line) + 1;
      if (line === "") continue;
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(line) as Record<string, unknown>;
      } catch {
        // A line cut short by a crash: the rest of the record still counts.
        continue;
      }
      if (event === null || typeof event !== "object") continue;
      assembler.add(event, at);
      const ts = typeof event.ts === "string" ? Date.parse(event.ts) : Number.NaN;
      if (ts > newest) newest = ts;
    }
    const insertRun = this.db.query("INSERT OR REPLACE INTO runs (file_id, run_id, server, agent, agent_command, project) VALUES (?, ?, ?, ?, ?, ?)");
    for (const run of assembler.runs.values()) {
      insertRun.run(fileId, run.runId, run.server, run.agentCommand?.[0] ? basename(run.agentCommand[0]) : null, run.agentCommand === null ? null : JSON.stringify(run.agentCommand), run.project);
    }
    const runOf = this.db.query("SELECT id FROM runs WHERE file_id = ? AND run_id = ? AND server = ?");
    const insert = this.db.query("INSERT INTO calls (file_id, run, call_id, ts, server, tool, decision, outcome, asked, person, status, lines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const change = this.db.query("UPDATE calls SET ts = ?, tool = ?, decision = ?, outcome = ?, asked = ?, person = ?, status = ?, lines = ? WHERE file_id = ? AND call_id = ?");
    for (const call of assembler.changed.values()) {
      const lines = (assembler.lines.get(call.call_id) ?? []).join(",");
      const ts = Date.parse(call.time) || 0;
      const person = approvedByPerson(call) ? 1 : 0;
      if (assembler.isNew(call.call_id)) {
        const run = runOf.get(fileId, call.run_id, call.server) as { id: number } | null;
        insert.run(fileId, run?.id ?? null, call.call_id, ts, call.server, call.tool, call.decision, call.outcome, call.asked ? 1 : 0, person, call.status, lines);
      } else {
        change.run(ts, call.tool, call.decision, call.outcome, call.asked ? 1 : 0, person, call.status, lines, fileId, call.call_id);
      }
    }
    const to = from + chunk.bytes;
    this.db.run("UPDATE files SET size = ?, mtime = ?, head_len = ?, head = ?, tail = ?, calls = calls + ?, newest = max(newest, ?) WHERE id = ?", [
      to,
      to >= file.size ? file.mtimeMs : 0,
      Math.min(HEAD_BYTES, to),
      fingerprint(fd, 0, Math.min(HEAD_BYTES, to)),
      fingerprint(fd, Math.max(0, to - TAIL_BYTES), to),
      assembler.created,
      newest,
      fileId,
    ]);
    return { bytes: chunk.bytes, calls: assembler.changed.size, more: chunk.more };
  }
}

function runInfo(row: RunRow): RunInfo {
  return { agentCommand: row.agent_command === null ? null : (JSON.parse(row.agent_command) as string[]), project: row.project };
}

function configure(db: Database): void {
  db.run(`PRAGMA busy_timeout = ${BUSY_MS}`);
  db.run("PRAGMA journal_mode = WAL");
  // The index can always be rebuilt from the record: an fsync per batch buys nothing.
  db.run("PRAGMA synchronous = NORMAL");
}

/** SQLite's own errors (a damaged file, not a database) and our failed checks mean: rebuild. */
function isDamage(error: unknown): boolean {
  if (error instanceof IndexDamaged) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return error.name === "SQLiteError" && typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB|FORMAT|ERROR|MISMATCH|SCHEMA|RANGE)/.test(code);
}

/** The file still starts with what was indexed, and has the bytes where indexing stopped. */
function sameStart(fd: number, row: FileRow): boolean {
  if (row.size === 0) return true;
  return fingerprint(fd, 0, row.head_len) === row.head && fingerprint(fd, Math.max(0, row.size - TAIL_BYTES), row.size) === row.tail;
}
