import { errorResponse, type JsonRpcResponse } from "../core/jsonrpc.ts";
import { messageOf } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { Profile } from "../core/profile.ts";
import type { Decider } from "../governance/decider.ts";
import { GOVERNANCE_ERROR } from "../governance/errors.ts";
import type { ListKind } from "../governance/visibility.ts";
import type { Sink } from "../stdio/line-sink.ts";
import type { CallAudit } from "./call-audit.ts";
import type { Outstanding } from "./request-tracker.ts";
import type { ToolCatalog } from "./tool-catalog.ts";

/** List methods whose responses the visibility gate filters, and the key naming each item. */
export const LISTS: Record<string, { kind: ListKind; key: "name" | "uri" }> = {
  "tools/list": { kind: "tools", key: "name" },
  "prompts/list": { kind: "prompts", key: "name" },
  "resources/list": { kind: "resources", key: "uri" },
};

export type ListFilterOptions = {
  audit: CallAudit;
  serverId: string;
  profile: Profile;
  decider: Decider;
  toAgent: Sink;
  catalog: ToolCatalog;
  log: Logger;
};

/**
 * The visibility gate on list responses (docs/architecture.md, decision 5): a tools, prompts or
 * resources list reaches the agent with what it may not see taken out. The original bytes go out
 * unless something was actually hidden; a list that cannot be filtered is refused (production).
 */
export class ListFilter {
  constructor(private readonly options: ListFilterOptions) {}

  /** Returns true when it took over delivering the response. */
  deliver(entry: Outstanding, message: JsonRpcResponse, bytes: Uint8Array): boolean {
    const list = LISTS[entry.method];
    const result = message.body.result as Record<string, unknown> | undefined;
    const items = result?.[list?.kind ?? ""];
    if (!list || !result || !Array.isArray(items)) return false;
    const names = items.map((item) => {
      const value = (item as Record<string, unknown> | null)?.[list.key];
      return typeof value === "string" ? value : "";
    });
    if (list.kind === "tools") this.options.catalog.remember(items, entry.firstPage === true && typeof result.nextCursor !== "string");
    const { decider, toAgent, log, audit } = this.options;
    const filter = decider.filterList;
    if (!filter) {
      audit.listResult(entry, items.length, items.length);
      return false;
    }
    const send = (visible: string[]) => {
      const keep = new Set(visible);
      const kept = items.filter((_, i) => keep.has(names[i] as string));
      audit.listResult(entry, items.length, kept.length);
      if (kept.length === items.length) {
        toAgent.send(bytes);
        return;
      }
      log.info(`${entry.method}: hid ${items.length - kept.length} of ${items.length} (not exposed)`);
      toAgent.sendText(JSON.stringify({ ...message.body, result: { ...result, [list.kind]: kept } }));
    };
    let visible: string[] | Promise<string[]>;
    try {
      visible = filter.call(decider, this.options.serverId, list.kind, names);
    } catch (error) {
      visible = Promise.reject(error);
    }
    if (!(visible instanceof Promise)) {
      send(visible);
      return true;
    }
    visible.then(send, (error: unknown) => this.unfiltered(entry, bytes, items.length, error));
    return true;
  }

  /** Fail closed: a list we cannot filter is not shown (development: shown, with a warning). */
  private unfiltered(entry: Outstanding, bytes: Uint8Array, upstream: number, error: unknown): void {
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
