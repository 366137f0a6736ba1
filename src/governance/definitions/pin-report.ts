import { rmSync } from "node:fs";
import { basename } from "node:path";
import type { Severity } from "../../core/severity.ts";
import { ThoughtGateError } from "../../core/errors.ts";
import { changedFields, definitionDiff, type DefinitionKind } from "./definition.ts";
import { FindingContext, findingsOf, reaches, type Finding, type OtherDefinition } from "./findings.ts";
import { isPinFileNameOf, serverIdentity } from "./identity.ts";
import { allPinFiles, PinStore, type PinEntry, type PinFile } from "./pin-store.ts";

/** One pinned definition as `thoughtgate pins` and wrap's summary show it. */
export type DefinitionStatus = {
  kind: DefinitionKind;
  name: string;
  /** `changed`: the server last served another definition; `flagged`: findings hide it and no person accepted it. */
  status: "pinned" | "changed" | "flagged";
  entry: PinEntry;
  changed: string[];
  /** Of the served definition when changed, else of the pinned one. */
  findings: Finding[];
  diff: string;
};

export type ServerPins = { path: string; file: PinFile; definitions: DefinitionStatus[] };

/** Every server's pins (or one server id's), each definition with its status under `blockSeverity`. */
export function pinReport(serverId: string | null, blockSeverity: (serverId: string) => Severity | "none", env: NodeJS.ProcessEnv = process.env): { servers: ServerPins[]; problems: string[] } {
  const { files, problems } = allPinFiles(env);
  const tools: OtherDefinition[] = files.flatMap(({ file }) => Object.values(file.definitions).filter((e) => e.kind === "tool").map((e) => ({ serverId: file.server_id, name: e.name, digest: e.digest })));
  const servers = files
    .filter(({ file }) => serverId === null || file.server_id === serverId)
    .map(({ path, file }) => ({ path, file, definitions: statuses(file, blockSeverity(file.server_id), tools.filter((t) => t.serverId !== file.server_id)) }));
  return { servers, problems };
}

function statuses(file: PinFile, threshold: Severity | "none", others: OtherDefinition[]): DefinitionStatus[] {
  const entries = Object.values(file.definitions).sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  return entries.map((entry) => {
    const same = entries.filter((e) => e.kind === entry.kind);
    const current = entry.served ?? entry;
    const context = new FindingContext(new Set(same.map((e) => e.name)), same.map((e) => descriptionLength(e.served?.definition ?? e.definition)), entry.kind === "tool" ? others : []);
    const findings = findingsOf(entry.kind, entry.name, current.definition, current.digest, context);
    const flagged = entry.accepted_by === null && findings.some((f) => reaches(f.severity, threshold));
    const status = entry.served ? "changed" : flagged ? "flagged" : "pinned";
    return {
      kind: entry.kind,
      name: entry.name,
      status,
      entry,
      changed: entry.served ? changedFields(entry.definition, entry.served.definition) : [],
      findings,
      diff: entry.served ? definitionDiff(`${file.server_id}.${entry.name}`, entry.definition, entry.served.definition) : "",
    };
  });
}

export type PinChange = { serverId: string; kind: DefinitionKind; name: string; what: string };

/**
 * `thoughtgate pins accept SERVER NAME` (or every waiting definition of SERVER): the definition the
 * server serves now (what a shim last recorded) becomes the pin, accepted by `by`; a flagged pin is
 * marked accepted. Running shims see the file change and show it again.
 */
export function acceptPins(serverId: string, name: string | null, by: string, blockSeverity: Severity | "none", env: NodeJS.ProcessEnv = process.env): PinChange[] {
  const { servers } = pinReport(serverId, () => blockSeverity, env);
  if (servers.length === 0) throw new ThoughtGateError("CONFIG", `no pins for server ${JSON.stringify(serverId)} (\`thoughtgate pins list\` shows the servers)`);
  const done: PinChange[] = [];
  for (const server of servers) {
    const waiting = server.definitions.filter((d) => (name === null || d.name === name) && d.status !== "pinned");
    if (waiting.length === 0) continue;
    storeOf(server.file, env).update((file) => {
      for (const item of waiting) {
        const entry = file.definitions[`${item.kind}:${item.name}`];
        if (!entry) continue;
        const accepted = entry.served ?? entry;
        file.definitions[`${item.kind}:${item.name}`] = { kind: entry.kind, name: entry.name, digest: accepted.digest, definition: accepted.definition, pinned_at: new Date().toISOString(), accepted_by: by };
        done.push({ serverId: file.server_id, kind: item.kind, name: item.name, what: item.status === "changed" ? `changed (${item.changed.join(", ")})` : "flagged" });
      }
    });
  }
  if (done.length === 0 && name !== null && !servers.some((s) => s.definitions.some((d) => d.name === name))) {
    throw new ThoughtGateError("CONFIG", `server ${JSON.stringify(serverId)} has no pinned definition named ${JSON.stringify(name)}`);
  }
  return done;
}

export type PinReset = { forgotten: PinChange[]; removedFiles: string[] };

/**
 * `thoughtgate pins reset SERVER [NAME]`: forget the pins, so the next definition seen is pinned
 * afresh. It is also the way out of a pin file that cannot be read (which blocks every definition
 * of its server): such a file cannot say whose it is, so the whole-server reset removes the
 * unreadable files named for SERVER (identity.ts, `isPinFileNameOf`). Naming a server or a
 * definition that has no pins is an error, never a quiet "nothing to do".
 */
export function resetPins(serverId: string, name: string | null, env: NodeJS.ProcessEnv = process.env): PinReset {
  const { files, unreadable } = allPinFiles(env);
  const own = files.filter((f) => f.file.server_id === serverId);
  const broken = unreadable.filter((u) => isPinFileNameOf(basename(u.path), serverId));
  if (own.length === 0 && broken.length === 0) throw new ThoughtGateError("CONFIG", `no pins for server ${JSON.stringify(serverId)} (\`thoughtgate pins list\` shows the servers)`);
  const forgotten: PinChange[] = [];
  if (name === null) {
    for (const { path, file } of own) {
      rmSync(path, { force: true });
      forgotten.push(...Object.values(file.definitions).map((e) => ({ serverId, kind: e.kind, name: e.name, what: "reset" })));
    }
    for (const { path } of broken) rmSync(path, { force: true });
    return { forgotten, removedFiles: broken.map((b) => b.path) };
  }
  if (broken.length > 0) {
    // A file that cannot be parsed cannot lose one definition: only a fresh start gets out of it.
    throw new ThoughtGateError("IO", `cannot reset one definition: ${broken.map((b) => b.problem).join("; ")}; \`thoughtgate pins reset ${serverId}\` (without a name) starts its pins afresh`);
  }
  for (const { file } of own) {
    storeOf(file, env).update((fresh) => {
      for (const [key, entry] of Object.entries(fresh.definitions)) {
        if (entry.name !== name) continue;
        delete fresh.definitions[key];
        forgotten.push({ serverId, kind: entry.kind, name, what: "reset" });
      }
    });
  }
  if (forgotten.length === 0) throw new ThoughtGateError("CONFIG", `server ${JSON.stringify(serverId)} has no pinned definition named ${JSON.stringify(name)}`);
  return { forgotten, removedFiles: [] };
}

function storeOf(file: PinFile, env: NodeJS.ProcessEnv): PinStore {
  const identity = serverIdentity(file.server_id, file.command, file.url);
  // The file names the identity it was written for; a hand-edited command must not move its pins.
  return new PinStore({ ...identity, digest: file.identity }, env);
}

function descriptionLength(definition: unknown): number {
  const description = (definition as { description?: unknown } | null)?.description;
  return typeof description === "string" ? description.length : 0;
}
