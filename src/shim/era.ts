import type { JsonRpcRequest } from "../core/jsonrpc.ts";
import { VERSION } from "../version.ts";

/**
 * The two eras of MCP a shim meets, told apart per request, never assumed from a handshake.
 * - legacy (2025-11-25 and earlier): `initialize` opens a session; the client's capabilities are in
 *   it; a server may send requests to the client (elicitation, sampling, roots).
 * - modern (2026-07-28): no handshake; every request carries `_meta` with the protocol version and
 *   the client's capabilities for that request alone; a server never sends requests, it answers
 *   with `resultType: "input_required"` and the client retries with `inputResponses`.
 * A request is modern when its `params._meta` names a protocol version (MCP 2026-07-28, "Per-request
 * protocol fields"). One stdio connection may carry both (a dual-era client probing with
 * `server/discover`, then falling back to `initialize`).
 */
export const META_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";

export type RequestEra =
  | { era: "legacy" }
  | { era: "modern"; protocolVersion: string; capabilities: Record<string, unknown> | null };

export function requestEra(request: JsonRpcRequest): RequestEra {
  const meta = metaOf(request.params);
  const version = meta?.[META_VERSION];
  if (typeof version !== "string") return { era: "legacy" };
  const capabilities = meta?.[META_CAPABILITIES];
  return { era: "modern", protocolVersion: version, capabilities: isObject(capabilities) ? capabilities : null };
}

/** MCP: `elicitation: {}` (2025-06-18) or `{form: {}}` (2025-11-25 and later) means form elicitation works. */
export function declaresFormElicitation(capabilities: unknown): boolean {
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  if (!isObject(elicitation)) return false;
  const modes = Object.keys(elicitation);
  return modes.length === 0 || modes.includes("form");
}

/**
 * The `_meta` the shim's own requests to a modern server carry: the protocol version of the agent's
 * request that made the shim ask, no client capabilities (the shim answers no input requests), and
 * the shim as the client.
 */
export function ownRequestMeta(era: RequestEra): Record<string, unknown> | null {
  if (era.era === "legacy") return null;
  return { [META_VERSION]: era.protocolVersion, [META_CAPABILITIES]: {}, [META_CLIENT_INFO]: { name: "thoughtgate", version: VERSION } };
}

export function metaOf(params: unknown): Record<string, unknown> | null {
  if (!isObject(params)) return null;
  const meta = params._meta;
  return isObject(meta) ? meta : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
