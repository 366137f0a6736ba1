import type { JsonObject } from "../core/jsonrpc.ts";
import { log } from "../core/log.ts";

/**
 * The request metadata headers of MCP 2026-07-28 Streamable HTTP ("Request Metadata"): a modern
 * request carries `MCP-Protocol-Version` (equal to its `_meta` protocol version), `Mcp-Method`,
 * `Mcp-Name` (for `tools/call`, `prompts/get`, `resources/read`) and one `Mcp-Param-{Name}` per
 * tool parameter the tool's `inputSchema` marks with `x-mcp-header`. Values that are not plain
 * visible ASCII are sent as `=?base64?…?=`. A legacy (2025-11-25) request carries none of these but
 * the negotiated `MCP-Protocol-Version`.
 */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";

/** The protocol version a modern request names in its `_meta`, or null for a legacy request. */
export function modernVersionOf(params: unknown): string | null {
  if (!isObject(params)) return null;
  const meta = params._meta;
  if (!isObject(meta)) return null;
  const version = meta[PROTOCOL_VERSION_KEY];
  return typeof version === "string" ? version : null;
}

type Annotation = { name: string; path: string[]; type: "string" | "boolean" | "integer" };

/** What the server's `tools/list` said about `x-mcp-header`, per tool. */
export class ParameterHeaders {
  private readonly byTool = new Map<string, Annotation[]>();

  /** Learn from a `tools/list` result; a tool whose annotations break the rules gets no headers (and a warning). */
  learn(result: unknown): void {
    const tools = isObject(result) && Array.isArray(result.tools) ? result.tools : [];
    for (const tool of tools) {
      if (!isObject(tool) || typeof tool.name !== "string") continue;
      try {
        this.byTool.set(tool.name, annotationsOf(tool.inputSchema));
      } catch (error) {
        this.byTool.delete(tool.name);
        log.warn(`tool "${tool.name}": ${(error as Error).message}; its calls carry no Mcp-Param headers`);
      }
    }
  }

  /** The headers a modern request needs besides the protocol version. */
  headersFor(method: string, params: unknown): Array<[string, string]> {
    const headers: Array<[string, string]> = [["mcp-method", method]];
    const p = isObject(params) ? params : {};
    const name = method === "resources/read" ? p.uri : method === "tools/call" || method === "prompts/get" ? p.name : undefined;
    if (typeof name === "string") headers.push(["mcp-name", headerValue(name)]);
    if (method !== "tools/call" || typeof p.name !== "string") return headers;
    for (const annotation of this.byTool.get(p.name) ?? []) {
      const value = valueAt(p.arguments, annotation.path);
      if (value === undefined || value === null) continue;
      const text = annotation.type === "boolean" && typeof value === "boolean" ? String(value) : annotation.type === "integer" && Number.isSafeInteger(value) ? String(value) : typeof value === "string" ? value : null;
      // A value of the wrong type is the server's to reject; sending it under the header would lie about the body.
      if (text !== null) headers.push([`mcp-param-${annotation.name}`, headerValue(text)]);
    }
    return headers;
  }
}

const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** A header value as the spec's Value Encoding says: plain when it is safe, else `=?base64?…?=`. */
export function headerValue(value: string): string {
  const sentinel = value.startsWith("=?base64?") && value.endsWith("?=");
  if (value === "" || (PLAIN.test(value) && !sentinel)) return value;
  return `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

function annotationsOf(schema: unknown): Annotation[] {
  const found: Annotation[] = [];
  const names = new Set<string>();
  const visit = (node: unknown, path: string[]) => {
    if (!isObject(node)) return;
    if (Object.hasOwn(node, "x-mcp-header")) {
      const name = node["x-mcp-header"];
      const type = node.type;
      if (path.length === 0) throw new Error("x-mcp-header on the schema itself, not on a property");
      if (typeof name !== "string" || !HTTP_TOKEN.test(name)) throw new Error("x-mcp-header is not an HTTP token");
      if (type !== "string" && type !== "boolean" && type !== "integer") throw new Error(`x-mcp-header "${name}" is on a ${String(type)} property`);
      if (names.has(name.toLowerCase())) throw new Error(`x-mcp-header "${name}" appears twice`);
      names.add(name.toLowerCase());
      found.push({ name, path, type });
    }
    if (isObject(node.properties)) for (const [key, child] of Object.entries(node.properties)) visit(child, [...path, key]);
  };
  visit(schema, []);
  return found;
}

function valueAt(args: unknown, path: string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
