import { errorResponse, type JsonRpcResponse } from "../core/jsonrpc.ts";
import { messageOf } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { Decider } from "../governance/verdict/decider.ts";
import type { PinPolicy } from "../governance/verdict/definition-acceptance.ts";
import { DEFINITION_LISTS } from "../governance/definitions/definition.ts";
import { GOVERNANCE_ERROR } from "../governance/verdict/errors.ts";
import type { ListKind } from "../governance/verdict/decider.ts";
import type { Sink } from "../stdio/line-sink.ts";
import type { CallAudit } from "./call-audit.ts";
import type { DefinitionGuard } from "./definition-guard.ts";
import type { PendingRequest } from "./request-tracker.ts";
import type { ToolCatalog } from "./tool-catalog.ts";

/**
 * List methods whose responses the shim filters: the key of their items, the visibility gate's
 * kind (null: not filtered by it) and the key naming each item.
 */
export const LISTS: Record<string, { items: string; visibility: ListKind | null; key: "name" | "uri" }> = {
  "tools/list": { items: "tools", visibility: "tools", key: "name" },
  "prompts/list": { items: "prompts", visibility: "prompts", key: "name" },
  "resources/list": { items: "resources", visibility: "resources", key: "uri" },
  "resources/templates/list": { items: "resourceTemplates", visibility: null, key: "name" },
};

export type ListFilterOptions = {
  audit: CallAudit;
  serverId: string;
  profile: Profile;
  decider: Decider;
  toAgent: Sink;
  catalog: ToolCatalog;
  definitions: DefinitionGuard;
  /** The pin policy in force for this server (never rejects: governance that cannot say is read strictly). */
  pinPolicy: () => PinPolicy | Promise<PinPolicy>;
  log: Logger;
};

/**
 * What a list response loses on its way to the agent (docs/architecture.md, decision 5): what the
 * visibility gate hides, and the definitions a person must accept first (changed since pinned, or
 * flagged: definition-guard.ts). The original bytes go out unless something was actually hidden;
 * every other field of the result is kept, except that a 2026-07-28 list hiding definitions that
 * wait for a person is marked `ttlMs: 0`, `cacheScope: "private"`, so the agent lists again instead
 * of caching a list that changes the moment someone accepts. A list that cannot be filtered is
 * refused (production).
 */
export class ListFilter {
  constructor(private readonly options: ListFilterOptions) {}

  /** Returns true when it took over delivering the response. */
  deliver(entry: PendingRequest, message: JsonRpcResponse, bytes: Uint8Array): boolean {
    const list = LISTS[entry.method];
    const result = message.body.result as Record<string, unknown> | undefined;
    const items = result?.[list?.items ?? ""];
    if (!list || !result || !Array.isArray(items)) return false;
    if (entry.method === "tools/list") this.options.catalog.remember(items, entry.firstPage === true && typeof result.nextCursor !== "string");
    const { decider, audit } = this.options;
    const definitions = DEFINITION_LISTS[entry.method];
    const filter = list.visibility === null ? undefined : decider.filterList;
    if (!definitions && !filter) {
      audit.listResult(entry, items.length, items.length);
      return false;
    }
    const names = items.map((item) => {
      const value = (item as Record<string, unknown> | null)?.[list.key] ?? (item as Record<string, unknown> | null)?.uriTemplate;
      return typeof value === "string" ? value : "";
    });
    let visible: string[] | Promise<string[]> | null = null;
    if (filter && list.visibility) {
      try {
        visible = filter.call(decider, this.options.serverId, list.visibility, names);
      } catch (error) {
        visible = Promise.reject(error);
      }
    }
    const policy = definitions ? this.options.pinPolicy() : null;
    const pinned = (settled: PinPolicy | null) => (settled && definitions ? this.options.definitions.check(definitions.kind, items, settled) : new Set<string>());
    if (!(visible instanceof Promise) && !(policy instanceof Promise)) {
      this.send(entry, message, bytes, items, names, pinned(policy), visible);
      return true;
    }
    Promise.all([policy, visible]).then(
      ([settled, shown]) => this.send(entry, message, bytes, items, names, pinned(settled), shown),
      (error: unknown) => this.unfiltered(entry, bytes, items.length, error),
    );
    return true;
  }

  private send(entry: PendingRequest, message: JsonRpcResponse, bytes: Uint8Array, items: unknown[], names: string[], pinHidden: Set<string>, visible: string[] | null): void {
    const { toAgent, log, audit } = this.options;
    const keep = visible === null ? null : new Set(visible);
    const kept = items.filter((_, i) => {
      const name = names[i] as string;
      return !pinHidden.has(name) && (keep === null || keep.has(name));
    });
    audit.listResult(entry, items.length, kept.length);
    if (kept.length === items.length) {
      toAgent.send(bytes);
      return;
    }
    const list = LISTS[entry.method] as (typeof LISTS)[string];
    const result = message.body.result as Record<string, unknown>;
    const hints = pinHidden.size > 0 && "ttlMs" in result ? { ttlMs: 0, cacheScope: "private" } : {};
    log.info(`${entry.method}: hid ${items.length - kept.length} of ${items.length}${pinHidden.size > 0 ? ` (${pinHidden.size} waiting for a person to accept their definition)` : " (not exposed)"}`);
    toAgent.sendText(JSON.stringify({ ...message.body, result: { ...result, [list.items]: kept, ...hints } }));
  }

  /** Fail closed: a list we cannot filter is not shown (development: shown, with a warning). */
  private unfiltered(entry: PendingRequest, bytes: Uint8Array, upstream: number, error: unknown): void {
    const { log, toAgent } = this.options;
    if (this.options.profile === "development") {
      this.options.audit.listResult(entry, upstream, upstream);
      log.warn(`WOULD_BLOCK ${entry.method}: cannot filter (${messageOf(error)}); forwarding unfiltered`);
      toAgent.send(bytes);
      return;
    }
    log.error(`${entry.method}: cannot filter (${messageOf(error)}); refusing it`);
    this.options.audit.listResult(entry, upstream, 0);
    toAgent.sendText(
      errorResponse(entry.id, GOVERNANCE_ERROR.serviceUnavailable, `ThoughtGate cannot check ${entry.method}: ${messageOf(error)}`, {
        gate: "visibility",
        server_id: this.options.serverId,
        reason: "governance unavailable",
      }),
    );
  }
}
