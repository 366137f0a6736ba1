import { usageError } from "../core/errors.ts";
import { isEncryptedOrLoopback } from "../core/safe-url.ts";

/**
 * What the user gives for a remote MCP server (`--url`, `--header`), checked before anything is
 * sent: an `https://` URL (plain `http://` only to a loopback address, where nothing crosses the
 * network), no credentials or fragment in it, and headers that do not override the ones the
 * transport itself must control.
 */
export type Endpoint = { url: URL; headers: Array<[string, string]> };

/** Headers the transport sets itself; a user value would break the protocol or lie about the body. */
const RESERVED = new Set([
  "accept",
  "content-type",
  "content-length",
  "transfer-encoding",
  "connection",
  "host",
  "mcp-session-id",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "last-event-id",
]);

export function parseEndpoint(url: string, headers: readonly string[]): Endpoint {
  return { url: parseServerUrl(url, "--url"), headers: headers.map(parseHeader) };
}

export function parseServerUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`${flag} ${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw usageError(`${flag} must be an http(s) URL, not ${url.protocol}`);
  if (url.username !== "" || url.password !== "") throw usageError(`${flag} must not carry credentials in the URL (use --header or --bearer-token-env)`);
  if (url.hash !== "") throw usageError(`${flag} must not have a #fragment`);
  if (!isEncryptedOrLoopback(url)) {
    throw usageError(`${flag} ${url.origin}: plain http is refused for a host that is not loopback (the MCP traffic and any token would cross the network unencrypted); use https://`);
  }
  return url;
}

/** `Name: value` → [name, value]; a name that is not an HTTP token, or a reserved one, is a usage error. */
function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(":");
  const name = colon === -1 ? "" : text.slice(0, colon).trim();
  const value = colon === -1 ? "" : text.slice(colon + 1).trim();
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw usageError(`--header ${JSON.stringify(text)} is not "Name: value"`);
  if (RESERVED.has(name.toLowerCase())) throw usageError(`--header ${name}: the transport sets this header itself`);
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) throw usageError(`--header ${name}: the value holds a control character`);
  return [name, value];
}
