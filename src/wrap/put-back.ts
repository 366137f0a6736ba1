/**
 * Putting a rewritten config back (docs/architecture.md, decision 8), shared by a live wrap's ConfigGuard
 * and by `unwrap` repairing after a dead one. The caller holds the config's lock. `configPath` is
 * the real file (config-path.ts): if a symlink stands there now, nothing is read or written
 * through it, and the restore fails with the way to do it by hand.
 */
import { unlinkSync } from "node:fs";
import { dirname } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { canonicalJson } from "../core/canonical-json.ts";
import { bestEffort, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { fsyncDirectory, writeFileAtomic } from "../core/atomic-write.ts";
import { readBackup, removeBackup } from "./backup.ts";
import { formatOf } from "./formats/index.ts";
import { removeRecord, type JournalRecord } from "./journal.ts";
import { readOwnFile } from "../core/safe-open.ts";

export type PutBackKind =
  /** The file was still what wrap wrote (or was deleted): the backup's bytes go back exactly. */
  | "backup"
  /** The agent changed the file meanwhile: only the entries wrap owns go back, its changes stay. */
  | "owned-keys"
  /** The file already holds the original bytes: nothing to write. */
  | "unchanged"
  /** Wrap backed the file up but died before rewriting it: nothing to write. */
  | "never-rewritten";

export type PutBackPlan = {
  kind: PutBackKind;
  /** What is on disk now (null: the file is gone). */
  current: Buffer | null;
  /** What will be written (null: nothing). */
  restored: Buffer | null;
  /** Owned keys left as they are: the user changed them since wrap wrote them (not what wrap wrote any more). */
  changedSince: JSONPath[];
};

/** `agentType` tells the config's format (JSONC, TOML, YAML) for putting back only the owned keys. */
export type PutBackInput = Pick<JournalRecord, "configPath" | "backupPath" | "rewrittenSha256" | "agentType"> & { owned: JSONPath[]; backupSha256?: string | null; written?: unknown[] | undefined; created?: true | undefined };

/** What `putBack` did, and which owned keys it left as the user changed them. */
export type PutBackResult = { kind: PutBackKind; changedSince: JSONPath[]; removed?: true };

/**
 * What each of `paths` holds in `text`, as plain data (undefined where it is absent), read with the
 * config's own format: what the journal keeps as written, and what a restore compares it with.
 */
export function valuesAt(agentType: string, configPath: string, text: string, paths: readonly JSONPath[]): unknown[] {
  const objects = formatOf(agentType, configPath)
    .edit(text)
    .objects(paths.map((path) => path.slice(0, -1)));
  return paths.map((path, i) => objects[i]?.get(String(path.at(-1))));
}

/**
 * `original`: the bytes a live guard backed up, kept in memory, so a backup file tampered with
 * during the session (swapped for a link to another file) is never what goes back.
 */
export function planPutBack(input: PutBackInput & { original?: Buffer | undefined }): PutBackPlan {
  const current = readOwnFile(input.configPath, "to restore", "it was a regular file when wrap backed it up");
  if (input.rewrittenSha256 === null) return { kind: "never-rewritten", current, restored: null, changedSince: [] };
  const backup = input.original ?? checkedBackup(input) ?? Buffer.alloc(0);
  // A file ThoughtGate created goes back to not existing: `restored` stays null, putBack removes it.
  if (input.created && (current === null || current.length === 0 || sha256OfBytes(current) === input.rewrittenSha256)) return { kind: "backup", current, restored: null, changedSince: [] };
  if (current === null) return { kind: "backup", current, restored: backup, changedSince: [] };
  if (current.equals(backup)) return { kind: "unchanged", current, restored: null, changedSince: [] };
  if (sha256OfBytes(current) === input.rewrittenSha256) return { kind: "backup", current, restored: backup, changedSince: [] };
  const currentText = current.toString("utf8");
  // A created file the user has written in since: only the owned keys leave it, taken out of an empty document.
  const backupText = input.created && backup.length === 0 ? emptyDocument(input) : backup.toString("utf8");
  const { ours, changedSince } = stillAsWritten(input, currentText);
  // `current` differs from what wrap wrote (checked above), so restoreOwnedKeys's own "untouched file"
  // shortcut must not fire: the backup text stands in for the rewrite, and it differs from `current` too.
  const restored = formatOf(input.agentType, input.configPath).restoreOwnedKeys(backupText, backupText, currentText, ours);
  return { kind: "owned-keys", current, restored: Buffer.from(restored, "utf8"), changedSince };
}

/**
 * The owned keys that still hold what wrap wrote (put back), and those the user changed since
 * (left as they are: a server re-added as another command, its arguments edited). A key the user
 * removed is neither: it stays away. Without `written` (a journal from before it was kept) every
 * owned key is put back, as then.
 */
function stillAsWritten(input: PutBackInput, currentText: string): { ours: JSONPath[]; changedSince: JSONPath[] } {
  const { written } = input;
  if (written === undefined || written.length !== input.owned.length) return { ours: input.owned, changedSince: [] };
  const now = valuesAt(input.agentType, input.configPath, currentText, input.owned);
  const ours: JSONPath[] = [];
  const changedSince: JSONPath[] = [];
  input.owned.forEach((path, i) => {
    if (now[i] === undefined || canonicalJson(now[i]) === canonicalJson(written[i])) ours.push(path);
    else changedSince.push(path);
  });
  return { ours, changedSince };
}

/**
 * Restore the config, then forget it: journal record, then backup (in that order, so a crash in
 * between leaves a backup equal to the config, which the next wrap recognises as harmless).
 */
export function putBack(input: PutBackInput & { original?: Buffer | undefined }, journal?: string): PutBackResult {
  const plan = planPutBack(input);
  if (plan.restored) writeFileAtomic(input.configPath, plan.restored);
  const removed = input.created === true && plan.kind === "backup" && plan.restored === null;
  if (removed && plan.current !== null) removeCreated(input.configPath);
  // The config is back: from here on a failure is untidiness, not a config left rewritten. What stays
  // (a record whose file equals its backup, or such a backup alone) is cleared by the next unwrap or wrap.
  try {
    removeRecord(input.configPath, journal);
    removeBackup(input.backupPath);
  } catch (error) {
    log.warn(`restored ${input.configPath}, but could not clear its journal record or backup: ${messageOf(error)}; \`thoughtgate unwrap\` tidies up once this process has ended`);
  }
  return { kind: plan.kind, changedSince: plan.changedSince, ...(removed ? { removed: true as const } : {}) };
}

/** The empty document of the config's format, the "backup" of a file ThoughtGate created. */
function emptyDocument(input: Pick<PutBackInput, "agentType" | "configPath">): string {
  return formatOf(input.agentType, input.configPath).name === "jsonc" ? "{}" : "";
}

/** Remove a config ThoughtGate created (never through a link: the path is the real file's). */
function removeCreated(configPath: string): void {
  try {
    unlinkSync(configPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new ThoughtGateError("IO", `cannot remove ${configPath}, which ThoughtGate created: ${messageOf(error)}`, { cause: error });
  }
  bestEffort(() => fsyncDirectory(dirname(configPath)));
}

/** `kept gh's command and args as you changed them since they were rewritten` (one line). */
export function describeChangedSince(paths: readonly JSONPath[]): string {
  const byEntry = new Map<string, string[]>();
  for (const path of paths) {
    const entry = String(path.length >= 2 ? path.at(-2) : path.at(-1));
    const key = String(path.at(-1));
    byEntry.set(entry, [...(byEntry.get(entry) ?? []), key]);
  }
  const parts = [...byEntry].map(([entry, keys]) => `${entry}'s ${keys.join(", ")}`);
  return `kept ${parts.join("; ")} as you changed them since ThoughtGate rewrote them (not put back to the pre-rewrite values)`;
}

/**
 * The backup's bytes, checked against the digest the journal holds (a backup changed behind the
 * journal's back is not put back); undefined while nothing was rewritten yet.
 */
export function checkedBackup(record: Pick<PutBackInput, "backupPath" | "backupSha256" | "rewrittenSha256" | "created">): Buffer | undefined {
  if (record.rewrittenSha256 === null) return undefined;
  // A created file has no backup (until a rebase writes the empty one: config-guard.ts).
  if (record.created && record.backupSha256 === null) return Buffer.alloc(0);
  const bytes = readBackup(record.backupPath);
  if (record.backupSha256 !== undefined && record.backupSha256 !== null && sha256OfBytes(bytes) !== record.backupSha256) {
    throw new ThoughtGateError("CONFIG", `${record.backupPath} is not the backup the wrap journal recorded (it changed since); it was not put back`);
  }
  return bytes;
}

/** Hex SHA-256 of bytes as they are on disk (what the journal's `rewrittenSha256` holds). */
export function sha256OfBytes(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** What a user can do when an automatic restore failed. */
export function manualRestoreHint(configPath: string, backupPath: string): string {
  return `the original is in ${backupPath}; restore it by hand with  cp ${shellQuote(backupPath)} ${shellQuote(configPath)} && rm ${shellQuote(backupPath)}  (or run \`thoughtgate unwrap --config-path ${shellQuote(configPath)}\` once this wrap has ended)`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
