/**
 * A wrap session's descriptor, `<state dir>/sessions/<run id>/wrap.json` (session-file.ts): written by
 * wrap before the agent starts, read by every shim of the session (where to ask, what profile, which
 * record), by `doctor` (which wraps run, and on which version) and by the next wrap (which pinned
 * binaries are still in use). Rewritten once the agent runs, to add the agent's pid.
 */
import * as v from "valibot";
import { writeFileAtomic } from "./atomic-write.ts";
import { messageOf } from "./errors.ts";
import { PROFILES } from "./profile.ts";
import { readOwnFile } from "./safe-open.ts";

const pid = v.pipe(v.number(), v.integer(), v.minValue(1));

const sessionDescriptorSchema = v.object({
  version: v.string(),
  target: v.string(),
  /** The wrap process, and its start stamp (`processStartId`) so a reused pid is not taken for it. */
  pid,
  startId: v.nullable(v.string()),
  /** The binary wrap ran as, and the one this session's shims run (src/wrap/shim-path.ts). */
  binary: v.string(),
  shim: v.string(),
  startedAt: v.string(),
  // What the shims need; absent in the descriptor of a wrap from before shims found their session.
  /** The governance service the shims ask; its secret is the session directory's `secret`. */
  endpoint: v.optional(v.pipe(v.string(), v.regex(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}$/, "expected a loopback http URL"))),
  profile: v.optional(v.picklist(PROFILES)),
  /** The agent wrap launched: its type, its command line, and (once started) its pid and start stamp. */
  agent: v.optional(
    v.object({
      type: v.string(),
      command: v.array(v.string()),
      pid: v.nullable(pid),
      startId: v.nullable(v.string()),
    }),
  ),
  /** wrap's working directory, and its project root (src/core/project.ts). */
  cwd: v.optional(v.string()),
  project: v.optional(v.string()),
  /**
   * The MCP servers every entry of which runs through a shim of this session, by the names the
   * agent knows them by (src/wrap/agent-hooks.ts, `governedServerNames`): the agent's hook lets
   * their tools through for the shim to decide. Absent: none.
   */
  governedServers: v.optional(v.array(v.string())),
});

export type SessionDescriptor = v.InferOutput<typeof sessionDescriptorSchema>;

export type DescriptorRead = { ok: true; descriptor: SessionDescriptor } | { ok: false; why: string };

/** Read and check a descriptor; never throws. A symlink or a file that is not regular is refused. */
export function readSessionDescriptor(path: string): DescriptorRead {
  let bytes: Buffer | null;
  try {
    bytes = readOwnFile(path, "the session descriptor");
  } catch (error) {
    return { ok: false, why: messageOf(error) };
  }
  if (!bytes) return { ok: false, why: `${path} does not exist` };
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    return { ok: false, why: `${path} is not JSON (${messageOf(error)})` };
  }
  const parsed = v.safeParse(sessionDescriptorSchema, json);
  if (!parsed.success) return { ok: false, why: `${path}: ${v.getDotPath(parsed.issues[0]) ?? "(file)"}: ${parsed.issues[0].message}` };
  return { ok: true, descriptor: parsed.output };
}

/** Write a descriptor atomically (0600): a shim reading it meanwhile sees the old one or the new one. */
export function writeSessionDescriptor(path: string, descriptor: SessionDescriptor): void {
  writeFileAtomic(path, `${JSON.stringify(descriptor, null, 2)}\n`, { mode: 0o600 });
}
