/**
 * JSON-RPC 2.0 message shapes as the shim sees them, and the error responses it writes itself.
 * Classification is deliberately strict: anything that is not exactly a request, a notification or
 * a response is not forwarded (docs/architecture.md, decision 2).
 */
export type JsonRpcId = string | number;

export type JsonObject = { [key: string]: unknown };

export type JsonRpcRequest = { kind: "request"; id: JsonRpcId; method: string; params: unknown; body: JsonObject };
type JsonRpcNotification = { kind: "notification"; method: string; params: unknown; body: JsonObject };
export type JsonRpcResponse = { kind: "response"; id: JsonRpcId | null; isError: boolean; body: JsonObject };
export type Message = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/**
 * Error codes the shim writes itself. Governance codes (-32003 …) live with the engine. The shim's
 * own codes sit outside JSON-RPC's reserved -32768…-32000: within it, -32001 is what MCP SDK clients
 * report for their own request timeouts and -32002 is MCP's "resource not found" (2025-11-25 and
 * earlier), so an agent could misread either (docs/governance.md, "Error codes").
 */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The MCP server is not running: it never started or it exited. */
  serverUnavailable: -31001,
  /** The shim rejected the message's framing (size, encoding, smuggling). */
  framingRejected: -31002,
  /** Too many requests already wait for the other side's answer (what a shim holds per peer is bounded). */
  tooManyPending: -31003,
} as const;

export function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

export type Classified =
  | { ok: true; message: Message }
  | { ok: false; code: "NotJsonRpc" | "InvalidId"; detail: string; id: JsonRpcId | null; wasRequest: boolean };

/** Classify a parsed JSON object that already has `"jsonrpc": "2.0"`. */
export function classify(body: JsonObject): Classified {
  const hasId = "id" in body;
  const method = body.method;
  if (typeof method === "string") {
    if (!hasId) return { ok: true, message: { kind: "notification", method, params: body.params, body } };
    if (!isValidId(body.id)) {
      return { ok: false, code: "InvalidId", detail: "request id must be a string or a safe integer", id: null, wasRequest: true };
    }
    return { ok: true, message: { kind: "request", id: body.id, method, params: body.params, body } };
  }
  if (method !== undefined) {
    const id = hasId && isValidId(body.id) ? body.id : null;
    return { ok: false, code: "NotJsonRpc", detail: "method must be a string", id, wasRequest: hasId };
  }
  const hasResult = "result" in body;
  const hasError = "error" in body;
  if (hasId && hasResult !== hasError) {
    if (body.id !== null && !isValidId(body.id)) {
      return { ok: false, code: "InvalidId", detail: "response id must be a string, a safe integer or null", id: null, wasRequest: false };
    }
    return { ok: true, message: { kind: "response", id: body.id as JsonRpcId | null, isError: hasError, body } };
  }
  return {
    ok: false,
    code: "NotJsonRpc",
    detail: "neither a request, a notification nor a response",
    id: null,
    wasRequest: false,
  };
}

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return JSON.stringify({ jsonrpc: "2.0", id, error });
}
