/**
 * Where a credential may travel (a Slack bot token, an OTLP collector's headers, an OAuth code, a
 * remote MCP server's traffic and token): over TLS, or in clear only to this machine, where nothing
 * crosses the network. The one check every such URL passes.
 */

/** The schemes a URL may use: `secure` anywhere, `plain` to a loopback host only. */
export type Schemes = { secure: string; plain: string };

const HTTP: Schemes = { secure: "https:", plain: "http:" };

/** Whether `hostname` (as `URL.hostname` gives it, IPv6 in brackets or not) is this machine: `localhost`, 127.0.0.0/8 or `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether `url` is encrypted, or plain only to a loopback host. */
export function isEncryptedOrLoopback(url: URL, schemes: Schemes = HTTP): boolean {
  return url.protocol === schemes.secure || (url.protocol === schemes.plain && isLoopbackHost(url.hostname));
}

/** Whether `text` is a URL without user:password@ that is encrypted, or plain only to a loopback host. */
export function isSafeUrl(text: string, schemes: Schemes = HTTP): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return url.username === "" && url.password === "" && isEncryptedOrLoopback(url, schemes);
}
