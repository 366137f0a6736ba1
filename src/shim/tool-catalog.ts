import type { JsonRpcResponse } from "../core/jsonrpc.ts";
import type { Logger } from "../core/log.ts";
import type { ToolAnnotations } from "../core/mcp-schema.ts";

const TOOL_LIST_MAX_PAGES = 50;

/**
 * What the shim knows of the server's tools: each tool's annotations from `tools/list` (policies
 * may depend on them; the embedded default does), and whether the list has been read since it
 * last changed. When a call comes before any list, the shim reads the list itself.
 */
export class ToolCatalog {
  private readonly annotations = new Map<string, ToolAnnotations>();
  /** Set once the server's tool list (and so every tool's annotations) has been read. */
  private read = false;
  private fetching: Promise<void> | null = null;

  constructor(private readonly log: Logger) {}

  get known(): boolean {
    return this.read;
  }

  annotationsOf(tool: string): ToolAnnotations | undefined {
    return this.annotations.get(tool);
  }

  /** A page of a `tools/list` result, the agent's or the shim's own. */
  remember(tools: unknown[]): void {
    for (const tool of tools) {
      const { name, annotations } = (tool ?? {}) as { name?: unknown; annotations?: unknown };
      if (typeof name === "string" && annotations !== null && typeof annotations === "object") {
        this.annotations.set(name, annotations as ToolAnnotations);
      }
    }
    this.read = true;
  }

  /** `notifications/tools/list_changed`: what was read may no longer hold. */
  invalidate(): void {
    this.read = false;
  }

  /** Fetch every page of the server's tools/list with the shim's own requests (never shown to the agent). */
  readAll(ask: (method: string, params: unknown) => Promise<JsonRpcResponse | null>): Promise<void> {
    this.fetching ??= (async () => {
      let cursor: string | undefined;
      for (let page = 0; page < TOOL_LIST_MAX_PAGES; page++) {
        const response = await ask("tools/list", cursor === undefined ? {} : { cursor });
        const result = response?.body.result as { tools?: unknown; nextCursor?: unknown } | undefined;
        if (!result || !Array.isArray(result.tools)) {
          this.log.warn("could not read the tool list; deciding without tool annotations");
          return;
        }
        this.remember(result.tools);
        if (typeof result.nextCursor !== "string") return;
        cursor = result.nextCursor;
      }
    })().finally(() => {
      this.fetching = null;
    });
    return this.fetching;
  }
}
