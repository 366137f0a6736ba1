import type { JSONPath } from "jsonc-parser";
import { messageOf, ThoughtGateError } from "../../core/errors.ts";
import { formatOf, type ObjectEdit } from "../formats/index.ts";
import { quoteCommandLine } from "./command-line.ts";
import type { RemoteTarget, ServerEntry, ShimCommand } from "./types.ts";

/**
 * Put a shim in front of every governed entry, changing only the keys wrap owns (docs/architecture.md,
 * decision 8): the command becomes `shim.command` and the args `shim.args` (an opencode
 * `[command, ...args]` list becomes `[shim.command, ...shim.args]`), and `shim.env` is added to
 * the entry's env next to what is already there; the keys are those of the entry's layout (Zed
 * `command.path`, goose `cmd`/`envs`, ...). Everything else (comments, other keys such as a
 * `disabled` flag, other entries, the rest of the file) stays byte for byte, in JSONC, TOML and
 * YAML alike (`../formats/`).
 *
 * `owned` lists the key paths written, one key each (`[..., "command"]`, `[..., "args"]`,
 * `[..., "env", "THOUGHTGATE_X"]`, or `[..., "env"]` when the entry had none), for
 * `restoreOwnedKeys`: keeping ownership per key means a change the agent makes to an entry during
 * the session (Zed `enabled`, Windsurf `disabledTools`) survives the restore. A key that was
 * missing is inserted so that removing it again gives back the original bytes.
 *
 * Throws a CONFIG error when the text does not parse or an entry is no longer what discovery saw.
 */
export function rewrite(
  text: string,
  entries: readonly ServerEntry[],
  shimFor: (entry: ServerEntry) => ShimCommand,
): { text: string; owned: JSONPath[] } {
  const governed = entries.filter((entry) => entry.governed);
  const [first] = governed;
  if (!first) return { text, owned: [] };
  try {
    const document = formatOf(first.agent, first.file).edit(text);
    // A remote entry is replaced whole, so its map is the object edited; a stdio entry is edited in place.
    const targets = document.objects(governed.map((entry) => (entry.remote ? entry.jsonPath.slice(0, -1) : [...entry.jsonPath, ...entry.layout.at])));
    const owned = governed.flatMap((entry, i) => {
      const target = targets[i];
      if (!target) throw changedSinceRead(entry);
      return entry.remote ? writeRemoteEntry(target, entry, entry.remote, shimFor(entry)) : writeEntry(target, entry, shimFor(entry));
    });
    return { text: document.apply(), owned };
  } catch (error) {
    if (error instanceof ThoughtGateError) throw error;
    throw new ThoughtGateError("CONFIG", `${first.file} ${messageOf(error)}: not rewritten`, { cause: error });
  }
}

function changedSinceRead(entry: ServerEntry): ThoughtGateError {
  return new ThoughtGateError("CONFIG", `${entry.file}: the server "${entry.name}" changed since it was read; not rewritten`);
}

function writeEntry(target: ObjectEdit, entry: ServerEntry, shim: ShimCommand): JSONPath[] {
  const { layout } = entry;
  const path = [...entry.jsonPath, ...layout.at];
  const owned: JSONPath[] = [];
  const missing: [string, unknown][] = [];
  const set = (key: string, value: unknown) => {
    owned.push([...path, key]);
    if (target.has(key)) target.replace(key, value);
    else missing.push([key, value]);
  };

  if (layout.line) {
    // The shim's words go in front, quoted; the original line follows byte for byte, so the agent
    // splits and expands it exactly as before (command-line.ts).
    if (target.get(layout.command) !== entry.line || entry.line === undefined) throw changedSinceRead(entry);
    const prefix = [shim.command, ...shim.args.slice(0, shim.args.indexOf("--") + 1)];
    set(layout.command, `${quoteCommandLine(prefix)} ${entry.line}`);
  } else if (layout.args === undefined) {
    const argv = target.get(layout.command);
    const expected = [entry.command, ...entry.args];
    if (!Array.isArray(argv) || argv.length !== expected.length || argv.some((part, i) => part !== expected[i])) throw changedSinceRead(entry);
    set(layout.command, [shim.command, ...shim.args]);
  } else {
    if (target.get(layout.command) !== entry.command) throw changedSinceRead(entry);
    set(layout.command, shim.command);
    set(layout.args, shim.args);
  }

  const extra = Object.entries(shim.env);
  const env = extra.length > 0 ? target.child(layout.env) : undefined;
  if (env) {
    const missingEnv: [string, unknown][] = [];
    for (const [key, value] of extra) {
      owned.push([...path, layout.env, key]);
      if (env.has(key)) env.replace(key, value);
      else missingEnv.push([key, value]);
    }
    env.insert(missingEnv);
  } else if (extra.length > 0) {
    // No env, or an empty one: the whole object is ours to write.
    set(layout.env, Object.fromEntries(extra));
  }
  target.insert(missing);
  return owned;
}

/**
 * A remote entry becomes a stdio entry running the shim (which reaches the same URL with the same
 * headers: `shim.args` and `shim.env` say how): the whole entry is wrap's to write and to put back,
 * so the restore gives back exactly the remote entry that was there. The entry's transport keys
 * (`type`, the URL, `headers`) go; its other keys (a `disabled` switch, a timeout, tool lists) stay.
 */
function writeRemoteEntry(map: ObjectEdit, entry: ServerEntry, remote: RemoteTarget, shim: ShimCommand): JSONPath[] {
  const original = map.get(entry.name);
  if (typeof original !== "object" || original === null || (original as Record<string, unknown>)[remote.urlKey] !== remote.url) throw changedSinceRead(entry);
  const kept = Object.entries(original as Record<string, unknown>).filter(([key]) => key !== "type" && key !== remote.urlKey && key !== "headers");
  const value = { ...(remote.typed ? { type: "stdio" } : {}), command: shim.command, args: shim.args, env: shim.env, ...Object.fromEntries(kept) };
  map.replace(entry.name, value);
  return [entry.jsonPath];
}
