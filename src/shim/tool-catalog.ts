import type { JsonRpcResponse } from "../core/jsonrpc.ts";
import { messageOf } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { ToolAnnotations } from "../core/mcp-schema.ts";
import { catalogHint } from "../governance/definitions/annotation-catalog.ts";

const TOOL_LIST_MAX_PAGES = 50;

/**
 * What the shim knows of the server's tools: each listed tool's annotations (policies may depend on
 * them; the embedded default does), and whether the whole list has been read since it last changed.
 *
 * A call for a tool the shim has not seen listed waits until the shim has read every page itself.
 * Reading one page of a paginated list says nothing about the tools on the others, so only a whole
 * list (one page without a cursor, or the shim's own read of every page) makes the catalog complete.
 * A tool that is still unknown then (not listed, or the list could not be read) is decided with no
 * annotations, which the engine reads as the MCP defaults: possibly destructive, never benign.
 */
export class ToolCatalog {
  /** Listed tools; null for one listed without annotations (and unknown to the annotation catalog). */
  private readonly tools = new Map<string, ToolAnnotations | null>();
  /** Tools whose annotations are the annotation catalog's hint: where they came from. */
  private readonly hinted = new Map<string, string>();
  private complete = false;
  /** The shim tried to read the whole list since it last changed (a failed read is not retried per call). */
  private attempted = false;
  private fetching: Promise<unknown[] | null> | null = null;

  constructor(private readonly log: Logger) {}

  /** Whether a decision on `tool` must wait for the shim's own read of the whole list. */
  needsRead(tool: string): boolean {
    return !this.complete && !this.attempted && !this.tools.has(tool);
  }

  /** The tool's annotations as listed; undefined when it declared none or is unknown (MCP defaults apply). */
  annotationsOf(tool: string): ToolAnnotations | undefined {
    return this.tools.get(tool) ?? undefined;
  }

  /** Where the tool's annotations came from when they are the annotation catalog's hint, not the server's. */
  annotationSourceOf(tool: string): string | undefined {
    return this.hinted.get(tool);
  }

  /** A page of a `tools/list` result, the agent's or the shim's own; `whole` when it was the entire list. */
  remember(tools: unknown[], whole: boolean): void {
    for (const tool of tools) {
      const { name, annotations } = (tool ?? {}) as { name?: unknown; annotations?: unknown };
      if (typeof name !== "string") continue;
      this.hinted.delete(name);
      if (annotations !== null && typeof annotations === "object" && !Array.isArray(annotations)) {
        this.tools.set(name, annotations as ToolAnnotations);
        continue;
      }
      // Declares nothing: the catalog's hint, for this exact definition only (annotation-catalog.ts).
      const hint = catalogHint(tool);
      this.tools.set(name, hint ? hint.annotations : null);
      if (hint) this.hinted.set(name, hint.source);
    }
    if (whole) this.complete = true;
  }

  /** `notifications/tools/list_changed`: nothing read before may still hold. */
  invalidate(): void {
    this.tools.clear();
    this.hinted.clear();
    this.complete = false;
    this.attempted = false;
  }

  /**
   * Read every page of the server's tools/list with the shim's own requests (never shown to the
   * agent). On failure the catalog stays incomplete and unknown tools get the MCP defaults.
   * Resolves with every tool read (for the pin check), or null when the whole list could not be read.
   */
  readAll(ask: (method: string, params: unknown) => Promise<JsonRpcResponse | null>): Promise<unknown[] | null> {
    this.fetching ??= (async (): Promise<unknown[] | null> => {
      let cursor: string | undefined;
      const seen = new Set<string>();
      const read: unknown[] = [];
      for (let page = 0; page < TOOL_LIST_MAX_PAGES; page++) {
        const response = await ask("tools/list", cursor === undefined ? {} : { cursor });
        const result = response?.body.result as { tools?: unknown; nextCursor?: unknown } | undefined;
        if (!result || !Array.isArray(result.tools)) {
          const why = response === null ? "no answer" : response.isError ? `error ${JSON.stringify(response.body.error)}` : "not a tool list";
          this.unreadable(why);
          return null;
        }
        this.remember(result.tools, false);
        read.push(...result.tools);
        if (typeof result.nextCursor !== "string") {
          this.complete = true;
          return read;
        }
        if (seen.has(result.nextCursor)) {
          this.unreadable(`the server repeated the cursor ${JSON.stringify(result.nextCursor)}`);
          return null;
        }
        seen.add(result.nextCursor);
        cursor = result.nextCursor;
      }
      this.unreadable(`more than ${TOOL_LIST_MAX_PAGES} pages`);
      return null;
    })()
      .catch((error: unknown) => {
        this.unreadable(messageOf(error));
        return null;
      })
      .finally(() => {
        this.attempted = true;
        this.fetching = null;
      });
    return this.fetching;
  }

  private unreadable(why: string): void {
    this.log.warn(`could not read the whole tool list (${truncate(why)}): tools not seen listed are decided under the MCP defaults (possibly destructive)`);
  }
}

function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
