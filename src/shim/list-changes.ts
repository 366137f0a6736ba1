import type { JsonRpcId } from "../core/jsonrpc.ts";
import type { DefinitionKind } from "../governance/definitions/definition.ts";
import type { Sink } from "../stdio/line-sink.ts";

/** What the agent asked to hear of on a 2026-07-28 `subscriptions/listen` stream. */
type Listen = { tools: boolean; prompts: boolean; resources: boolean };

const NOTICES: Record<DefinitionKind, { method: string; topic: keyof Listen }> = {
  tool: { method: "notifications/tools/list_changed", topic: "tools" },
  prompt: { method: "notifications/prompts/list_changed", topic: "prompts" },
  resource_template: { method: "notifications/resources/list_changed", topic: "resources" },
};

/**
 * The resource URIs a 2026-07-28 `subscriptions/listen` asks to follow, which replace
 * `resources/subscribe`: `params.notifications.resourceSubscriptions` (MCP 2026-07-28,
 * subscriptions). A `resourceSubscriptions` beside `notifications` is not in the specification,
 * but a lenient server might read it, so it is governed too. `null`: subscriptions the shim cannot
 * read (params or a filter that is not an object, a value that is not a list), refused rather than
 * passed on undecided.
 */
export function resourceSubscriptionsOf(params: unknown): unknown[] | null {
  if (params === undefined) return [];
  if (params === null || typeof params !== "object" || Array.isArray(params)) return null;
  const { notifications, resourceSubscriptions: beside } = params as { notifications?: unknown; resourceSubscriptions?: unknown };
  if (notifications !== undefined && (notifications === null || typeof notifications !== "object" || Array.isArray(notifications))) return null;
  const inFilter = (notifications as { resourceSubscriptions?: unknown } | undefined)?.resourceSubscriptions;
  const uris: unknown[] = [];
  for (const given of [inFilter, beside]) {
    if (given === undefined) continue;
    if (!Array.isArray(given)) return null;
    uris.push(...given);
  }
  return uris;
}

/**
 * Telling the agent that a list changed because of the shim (a person accepted a definition that
 * was hidden): a 2025-11-25 session (`initialize` seen) gets the plain notification; a 2026-07-28
 * agent hears of list changes only on a `subscriptions/listen` stream that asked for them, tagged
 * with the stream's id (MCP 2026-07-28, subscriptions).
 */
export class ListChanges {
  private legacySession = false;
  private readonly listens = new Map<JsonRpcId, Listen>();

  constructor(
    private readonly toAgent: Sink,
    /** Whether the listen request is still open (the router tracks the agent's requests). */
    private readonly isOpen: (id: JsonRpcId) => boolean,
  ) {}

  initialized(): void {
    this.legacySession = true;
  }

  listening(id: JsonRpcId, params: unknown): void {
    const asked = (params as { notifications?: Record<string, unknown> } | undefined)?.notifications;
    this.listens.set(id, { tools: asked?.toolsListChanged === true, prompts: asked?.promptsListChanged === true, resources: asked?.resourcesListChanged === true });
  }

  announce(kinds: Set<DefinitionKind>): void {
    for (const kind of kinds) {
      const { method, topic } = NOTICES[kind];
      if (this.legacySession) this.toAgent.sendText(JSON.stringify({ jsonrpc: "2.0", method }));
      for (const [id, listen] of this.listens) {
        if (!this.isOpen(id)) {
          this.listens.delete(id);
          continue;
        }
        if (listen[topic]) this.toAgent.sendText(JSON.stringify({ jsonrpc: "2.0", method, params: { _meta: { "io.modelcontextprotocol/subscriptionId": id } } }));
      }
    }
  }
}
