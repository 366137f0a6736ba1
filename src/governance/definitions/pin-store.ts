import { closeSync, lstatSync, mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../../core/atomic-write.ts";
import { bestEffort, messageOf, ThoughtGateError } from "../../core/errors.ts";
import { stateDir } from "../../core/paths.ts";
import { createExclusive, readOwnFile } from "../../core/safe-open.ts";
import { pinFileName, type ServerIdentity } from "./identity.ts";

/** A pin file is read whole; a server with thousands of large tools still fits. */
const MAX_PIN_FILE_BYTES = 32 * 1024 * 1024;
/** Writers hold the lock for the few milliseconds of one read-change-write. */
const LOCK_WAIT_MS = 2_000;
/** A lock older than this was left by a process that died holding it. */
const LOCK_STALE_MS = 10_000;

const served = v.object({ digest: v.string(), definition: v.unknown(), seen_at: v.string() });

const pinEntry = v.object({
  kind: v.picklist(["tool", "prompt", "resource_template"]),
  name: v.string(),
  /** Of `definition`: what a served definition is compared with. */
  digest: v.string(),
  definition: v.unknown(),
  pinned_at: v.string(),
  /** null: trusted on first use; else the channel a person accepted it through (elicitation, web, cli, slack). */
  accepted_by: v.nullable(v.string()),
  /** The definition the server serves now, when it differs from the pin (recorded for the diff and `pins accept`). */
  served: v.optional(served),
});

const pinFileSchema = v.object({
  v: v.literal(1),
  server_id: v.string(),
  identity: v.string(),
  command: v.array(v.string()),
  url: v.nullable(v.string()),
  definitions: v.record(v.string(), pinEntry),
});

export type PinEntry = v.InferOutput<typeof pinEntry>;
export type PinFile = v.InferOutput<typeof pinFileSchema>;

export function pinsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "pins");
}

/** Change detection without reading: a rename (every write) changes the inode and mtime. */
export type Stamp = string;

/**
 * One server's pins: `<state dir>/pins/<id>-<hash>.json` (directory 0700, file 0600), replaced
 * atomically (temp, fsync, rename). Shims, `thoughtgate pins` and the approval paths may write one
 * file at once: each change is read-change-write under a lock file (`O_CREAT|O_EXCL`), re-reading
 * the file inside the lock so no writer's change is lost. A file that does not parse is an error,
 * never an empty set of pins (that would trust every definition afresh).
 */
export class PinStore {
  readonly path: string;
  private readonly dir: string;

  constructor(
    readonly identity: ServerIdentity,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.dir = pinsDir(env);
    this.path = join(this.dir, pinFileName(identity));
  }

  /** The pins, or an empty file when none were written yet. Throws (one line) when it cannot be read. */
  load(): PinFile {
    return readPinFile(this.path) ?? this.empty();
  }

  /** Cheap: whether the file changed since `stamp` (another process wrote it). */
  stamp(): Stamp {
    try {
      const stat = statSync(this.path);
      return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch {
      return "missing";
    }
  }

  /** Change the pins under the lock; returns the file as written. */
  update(change: (file: PinFile) => void): PinFile {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withLock(this.path, () => {
      const file = this.load();
      change(file);
      writeFileAtomic(this.path, `${JSON.stringify(file)}\n`, { mode: 0o600 });
      return file;
    });
  }

  private empty(): PinFile {
    const { serverId, digest, command, url } = this.identity;
    return { v: 1, server_id: serverId, identity: digest, command, url, definitions: {} };
  }
}

/** Null when the file does not exist; throws a one-line error when it cannot be read or is not a pin file. */
function readPinFile(path: string): PinFile | null {
  let bytes: Buffer | null;
  try {
    bytes = readOwnFile(path, "the pin file", "remove it with `thoughtgate pins reset`");
  } catch (error) {
    throw new ThoughtGateError("IO", messageOf(error));
  }
  if (bytes === null) return null;
  if (bytes.length > MAX_PIN_FILE_BYTES) throw new ThoughtGateError("IO", `${path} is larger than ${MAX_PIN_FILE_BYTES} bytes; not a pin file ThoughtGate wrote`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new ThoughtGateError("IO", `${path} is not valid JSON (${messageOf(error)}); \`thoughtgate pins reset\` starts that server's pins afresh`);
  }
  const checked = v.safeParse(pinFileSchema, parsed);
  if (!checked.success) throw new ThoughtGateError("IO", `${path} is not a pin file (${checked.issues[0]?.message ?? "invalid"}); \`thoughtgate pins reset\` starts that server's pins afresh`);
  return checked.output;
}

/**
 * Every pin file, for `thoughtgate pins`, wrap's summary and the shadowing check; unreadable ones
 * are reported (`problems`, and by path in `unreadable`), not skipped silently.
 */
export function allPinFiles(env: NodeJS.ProcessEnv = process.env): { files: Array<{ path: string; file: PinFile }>; problems: string[]; unreadable: Array<{ path: string; problem: string }> } {
  const dir = pinsDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith("."));
  } catch {
    return { files: [], problems: [], unreadable: [] };
  }
  const files: Array<{ path: string; file: PinFile }> = [];
  const unreadable: Array<{ path: string; problem: string }> = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    try {
      const file = readPinFile(path);
      if (file) files.push({ path, file });
    } catch (error) {
      unreadable.push({ path, problem: messageOf(error) });
    }
  }
  return { files, problems: unreadable.map((u) => u.problem), unreadable };
}

/** The stamp of the whole directory (a write renames into it): whether any server's pins changed. */
export function pinsDirStamp(env: NodeJS.ProcessEnv = process.env): Stamp {
  try {
    const stat = statSync(pinsDir(env));
    return `${stat.ino}:${stat.mtimeMs}`;
  } catch {
    return "missing";
  }
}

function withLock<T>(path: string, work: () => T): T {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const fd = createExclusive(lock, "the pin file's lock");
    if (fd !== null) {
      closeSync(fd);
      break;
    }
    const age = Date.now() - (lstatSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > LOCK_STALE_MS) bestEffort(() => unlinkSync(lock));
    else if (Date.now() > deadline) throw new ThoughtGateError("IO", `${path}: another thoughtgate holds ${lock}; try again (remove the lock if no thoughtgate is running)`);
    else Bun.sleepSync(5);
  }
  try {
    return work();
  } finally {
    bestEffort(() => unlinkSync(lock));
  }
}
