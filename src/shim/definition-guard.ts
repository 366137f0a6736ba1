import { watch, type FSWatcher } from "node:fs";
import { messageOf } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { uriTemplateMatches } from "../core/uri-template.ts";
import { showInvisible } from "../core/visible-text.ts";
import type { DefinitionChange, PinPolicy } from "../governance/verdict/definition-acceptance.ts";
import { changedFields, definitionDiff, definitionDigest, definitionKey, definitionName, KIND_WORDS, type DefinitionKind } from "../governance/definitions/definition.ts";
import { describeFinding, FindingContext, findingsOf, reaches, worstSeverity, type Finding, type OtherDefinition } from "../governance/definitions/findings.ts";
import type { ServerIdentity } from "../governance/definitions/identity.ts";
import { allPinFiles, PinStore, pinsDir, pinsDirStamp, type PinFile } from "../governance/definitions/pin-store.ts";
import type { EventStream } from "../telemetry/events.ts";

/** What the guard knows of one served definition. */
type Tracked = {
  kind: DefinitionKind;
  name: string;
  key: string;
  digest: string;
  definition: unknown;
  findings: Finding[];
  /** Under the policy it was last checked with. */
  change: DefinitionChange | null;
  policy: string;
};

type PinWrite = (file: PinFile) => void;

/** Page fingerprints remembered (a paginated list has a few; a server whose lists vary, more). */
const MAX_PAGES = 64;

/**
 * Pinned definitions for one shim (docs/governance.md, "Pinned definitions"): every tools, prompts
 * and resource templates list the shim sees (the agent's, or its own read) is compared with the
 * server's pins, checked for poisoning, and the definitions a person must accept first are hidden
 * and their calls refused. The work is done when a list arrives, and only for what is new or
 * changed since the last list (a digest per item); a call costs one map lookup, and only while
 * something is blocked. Pins are read from disk when the first list arrives and again when the
 * file changed (another shim, `thoughtgate pins accept`), which the guard watches for while it
 * blocks anything. One class: the served definitions, the pins and what
 * is blocked change together.
 */
export class DefinitionGuard {
  private readonly store: PinStore;
  private file: PinFile | null = null;
  private stamp = "";
  private unreadable: string | null = null;
  private readonly tracked = new Map<string, Tracked>();
  private readonly blocked = new Map<string, Tracked>();
  private others: { stamp: string; list: OtherDefinition[] } | null = null;
  private readonly findingsCache = new Map<string, Finding[]>();
  private readonly said = new Set<string>();
  private watcher: FSWatcher | null = null;
  /** Pages seen before, by a fingerprint of their bytes and the policy: an unchanged page costs one hash. */
  private readonly pages = new Map<string, string[]>();

  constructor(
    private readonly options: { identity: ServerIdentity; log: Logger; events: EventStream; onUnblocked: (kinds: Set<DefinitionKind>) => void },
  ) {
    this.store = new PinStore(options.identity);
  }

  get hasBlocked(): boolean {
    return this.blocked.size > 0;
  }

  /** One page of a list on its way to the agent (or the shim's own read): the names to hide. */
  check(kind: DefinitionKind, items: readonly unknown[], policy: PinPolicy): Set<string> {
    const hidden = new Set<string>();
    const version = `${policy.mode}:${policy.blockSeverity}:${policy.enforce}`;
    const changedOnDisk = policy.mode !== "off" && this.reload();
    // The same page as before (servers list the same tools in the same order every time): only the
    // state of its definitions is looked up, nothing is hashed or checked again.
    const fingerprint = `${kind}:${version}:${Bun.hash(JSON.stringify(items))}`;
    const known = changedOnDisk ? undefined : this.pages.get(fingerprint);
    if (known) {
      for (const key of known) {
        const tracked = this.tracked.get(key);
        if (tracked?.change && policy.mode === "strict" && policy.enforce) hidden.add(tracked.name);
      }
      return hidden;
    }
    const keys: string[] = [];
    const writes: PinWrite[] = [];
    let context: FindingContext | null = null;
    for (const item of items) {
      const name = definitionName(kind, item);
      if (name === null) continue;
      const key = definitionKey(kind, name);
      keys.push(key);
      const digest = definitionDigest(item);
      let tracked = this.tracked.get(key);
      if (!tracked || tracked.digest !== digest || tracked.policy !== version || changedOnDisk) {
        context ??= this.contextFor(kind, items);
        tracked = { kind, name, key, digest, definition: item, findings: this.findingsFor(kind, name, item, digest, context), change: null, policy: version };
        this.evaluate(tracked, policy, writes);
      }
      if (tracked.change && policy.mode === "strict" && policy.enforce) hidden.add(name);
    }
    this.persist(writes);
    this.updateWatch(policy);
    if (this.pages.size >= MAX_PAGES) this.pages.clear();
    this.pages.set(fingerprint, keys);
    return hidden;
  }

  /** The change a person must accept before this governed request runs, or null. */
  pending(method: string, target: string): DefinitionChange | null {
    if (this.blocked.size === 0) return null;
    if (method === "tools/call") return this.blocked.get(definitionKey("tool", target))?.change ?? null;
    if (method === "prompts/get") return this.blocked.get(definitionKey("prompt", target))?.change ?? null;
    if (method === "resources/read" || method === "resources/subscribe") {
      for (const tracked of this.blocked.values()) {
        const template = (tracked.definition as { uriTemplate?: unknown }).uriTemplate;
        if (tracked.kind === "resource_template" && typeof template === "string" && uriTemplateMatches(template, target)) return tracked.change;
      }
    }
    return null;
  }

  /** Re-read the pins when another process changed them; the kinds whose blocked definitions are now accepted. */
  refresh(policy: PinPolicy): Set<DefinitionKind> {
    const before = new Map(this.blocked);
    if (!this.reload()) return new Set();
    const version = `${policy.mode}:${policy.blockSeverity}:${policy.enforce}`;
    for (const tracked of this.tracked.values()) {
      tracked.policy = version;
      this.evaluate(tracked, policy, [], true);
    }
    this.updateWatch(policy);
    return new Set([...before.values()].filter((t) => !this.blocked.has(t.key)).map((t) => t.kind));
  }

  /** A person accepted the definition whose digest they were shown: it is the pin now. */
  accept(change: DefinitionChange, by: string): void {
    const key = definitionKey(change.kind, change.name);
    const tracked = this.tracked.get(key);
    if (!tracked || tracked.digest !== change.servedDigest) return;
    const write: PinWrite = (file) => {
      file.definitions[key] = { kind: change.kind, name: change.name, digest: tracked.digest, definition: tracked.definition, pinned_at: new Date().toISOString(), accepted_by: by };
    };
    this.persist([write]);
    tracked.change = null;
    this.blocked.delete(key);
    this.options.events.emit("definition_accepted", { kind: change.kind, name: change.name, digest: tracked.digest, by });
    this.options.log.info(`accepted the ${KIND_WORDS[change.kind]} ${showInvisible(change.name)}'s definition (${by}): it is the pin now`);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  /** Compare one definition with its pin; `quiet` when re-checking after a reload (no new pins, no repeated reports). */
  private evaluate(tracked: Tracked, policy: PinPolicy, writes: PinWrite[], quiet = false): void {
    const { kind, name, key, digest, definition } = tracked;
    const blocking = tracked.findings.filter((f) => reaches(f.severity, policy.blockSeverity));
    tracked.change = null;
    if (policy.mode !== "off") {
      const pin = this.file?.definitions[key];
      if (this.unreadable !== null) {
        tracked.change = { kind, name, status: "changed", changed: [`pins unreadable: ${this.unreadable}`], pinnedDigest: null, servedDigest: digest, diff: "", findings: blocking };
      } else if (!pin) {
        if (!quiet) {
          const pinnedAt = new Date().toISOString();
          const apply: PinWrite = (file) => {
            file.definitions[key] ??= { kind, name, digest, definition, pinned_at: pinnedAt, accepted_by: null };
          };
          apply(this.ensureFile());
          writes.push(apply);
          this.options.events.emit("definition_pinned", { kind, name, digest });
        }
        if (blocking.length > 0) tracked.change = { kind, name, status: "flagged", changed: [], pinnedDigest: digest, servedDigest: digest, diff: "", findings: blocking };
      } else if (pin.digest === digest) {
        if (pin.served && !quiet) writes.push((file) => void (file.definitions[key] && delete file.definitions[key].served));
        if (blocking.length > 0 && pin.accepted_by === null) tracked.change = { kind, name, status: "flagged", changed: [], pinnedDigest: digest, servedDigest: digest, diff: "", findings: blocking };
      } else {
        const changed = changedFields(pin.definition, definition);
        tracked.change = { kind, name, status: "changed", changed, pinnedDigest: pin.digest, servedDigest: digest, diff: definitionDiff(`${this.options.identity.serverId}.${name}`, pin.definition, definition), findings: blocking };
        if (pin.served?.digest !== digest && !quiet) {
          const seenAt = new Date().toISOString();
          writes.push((file) => {
            const entry = file.definitions[key];
            if (entry && entry.digest !== digest) entry.served = { digest, definition, seen_at: seenAt };
          });
        }
      }
    }
    this.tracked.set(key, tracked);
    if (tracked.change && policy.mode === "strict") this.blocked.set(key, tracked);
    else this.blocked.delete(key);
    if (!quiet) this.report(tracked, policy);
  }

  /** Log and record each outcome once per definition digest. */
  private report(tracked: Tracked, policy: PinPolicy): void {
    const { kind, name, digest, change, findings } = tracked;
    const once = `${tracked.key}@${digest}:${policy.mode}:${policy.enforce}`;
    if (this.said.has(once)) return;
    this.said.add(once);
    const action = policy.mode === "strict" ? (policy.enforce ? "hidden" : "would_block") : "warned";
    const label = `${KIND_WORDS[kind]} ${showInvisible(name)}`;
    const accept = `accept it with \`thoughtgate pins accept ${this.options.identity.serverId} ${name}\``;
    const verb = action === "hidden" ? "hid the" : action === "would_block" ? "WOULD_BLOCK the" : "warning: the";
    if (change?.status === "changed") {
      this.options.log.warn(`${verb} ${label}: its definition changed since it was pinned (${change.changed.join(", ")}); ${accept}`);
      this.options.events.emit("definition_changed", { kind, name, pinned_digest: change.pinnedDigest ?? "", served_digest: digest, changed: change.changed, findings: change.findings.map((f) => f.rule), action });
    }
    if (findings.length === 0) return;
    const worst = worstSeverity(findings) ?? "low";
    const flagged = change !== null && change.findings.length > 0;
    const flaggedAction = flagged ? action : "logged";
    const head = flagged ? `${verb} ${label}: flagged by the poisoning checks` : `${label}: poisoning checks found`;
    this.options.log.warn(`${head}${flagged ? `; ${accept}` : ""}\n${findings.map((f) => `  ${describeFinding(f)}`).join("\n")}`);
    this.options.events.emit("definition_flagged", { kind, name, digest, severity: worst, findings: findings.map((f) => ({ rule: f.rule, severity: f.severity, path: f.path })), action: flaggedAction });
  }

  /** What the checks compare a page's definitions with: the page's others, and other servers' tools. */
  private contextFor(kind: DefinitionKind, items: readonly unknown[]): FindingContext {
    const names = new Set<string>();
    const lengths: number[] = [];
    for (const item of items) {
      const name = definitionName(kind, item);
      if (name !== null) names.add(name);
      const description = (item as { description?: unknown } | null)?.description;
      lengths.push(typeof description === "string" ? description.length : 0);
    }
    return new FindingContext(names, lengths, kind === "tool" ? this.otherDefinitions() : []);
  }

  private findingsFor(kind: DefinitionKind, name: string, definition: unknown, digest: string, context: FindingContext): Finding[] {
    const cached = this.findingsCache.get(`${kind}:${digest}`);
    if (cached) return cached;
    const found = findingsOf(kind, name, definition, digest, context);
    this.findingsCache.set(`${kind}:${digest}`, found);
    return found;
  }

  /**
   * Other servers' pinned tools (for shadowing), re-read when any pin file changed. A server is its
   * identity (identity.ts: the id and what runs it), not its id: a repository's entry that reuses the
   * user's `--server-id` over another command is another server, checked against the user's like any
   * other. Its tools of the same names are not its look-alikes (the same id with another command is
   * also how an upgraded server looks: `…-server@2` for `@1`), so those are left out.
   */
  private otherDefinitions(): OtherDefinition[] {
    const stamp = pinsDirStamp();
    if (this.others?.stamp === stamp) return this.others.list;
    const list: OtherDefinition[] = [];
    const { serverId, digest } = this.options.identity;
    for (const { file } of allPinFiles().files) {
      if (file.server_id === serverId && file.identity === digest) continue;
      for (const entry of Object.values(file.definitions)) {
        if (entry.kind === "tool") list.push({ serverId: file.server_id, name: entry.name, digest: entry.digest, sameId: file.server_id === serverId });
      }
    }
    // Findings depend on the other servers: computed again against the new set.
    if (this.others !== null) this.findingsCache.clear();
    this.others = { stamp, list };
    return list;
  }

  /** Load the pins when they changed on disk; returns whether they did. A file that cannot be read blocks everything (fail closed). */
  private reload(): boolean {
    const stamp = this.store.stamp();
    if (stamp === this.stamp) return false;
    this.stamp = stamp;
    try {
      this.file = this.store.load();
      this.unreadable = null;
    } catch (error) {
      this.file = null;
      this.unreadable = messageOf(error);
      this.options.log.error(`cannot read this server's pins, so no definition can be checked (every one is blocked): ${this.unreadable}`);
    }
    return true;
  }

  private ensureFile(): PinFile {
    this.file ??= { v: 1, server_id: this.options.identity.serverId, identity: this.options.identity.digest, command: this.options.identity.command, url: this.options.identity.url, definitions: {} };
    return this.file;
  }

  /** Write under the lock; a failure keeps the pins for this session and says so. */
  private persist(writes: PinWrite[]): void {
    if (writes.length === 0 || this.unreadable !== null) return;
    try {
      this.file = this.store.update((file) => {
        for (const write of writes) write(file);
      });
      this.stamp = this.store.stamp();
    } catch (error) {
      this.options.log.error(`could not save the pins (${messageOf(error)}): they hold for this session only`);
    }
  }

  /** While something is blocked in production, a `thoughtgate pins accept` elsewhere must unblock it here. */
  private updateWatch(policy: PinPolicy): void {
    if (this.blocked.size === 0 || !policy.enforce) {
      this.close();
      return;
    }
    if (this.watcher) return;
    try {
      let timer: ReturnType<typeof setTimeout> | null = null;
      this.watcher = watch(pinsDir(), () => {
        timer ??= setTimeout(() => {
          timer = null;
          const kinds = this.refresh(policy);
          if (kinds.size > 0) this.options.onUnblocked(kinds);
        }, 50);
      });
      this.watcher.unref?.();
    } catch (error) {
      this.options.log.debug(`cannot watch the pins directory (${messageOf(error)}): an acceptance elsewhere shows on the next list or call`);
    }
  }
}
