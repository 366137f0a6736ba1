/**
 * Every HTTP request to a remote MCP server goes through here: redirects are followed by hand,
 * only 307 and 308 (which keep the method and the body) and only within the origin the user
 * configured. A redirect to another origin is refused, never followed: it would carry the MCP
 * traffic (and the Authorization header) to a server nobody chose.
 */
const MAX_REDIRECTS = 5;

export type Fetched = { ok: true; response: Response; url: URL } | { ok: false; detail: string };

export async function fetchWithinOrigin(url: URL, init: RequestInit, fetchImpl: typeof fetch = fetch): Promise<Fetched> {
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response: Response;
    try {
      response = await fetchImpl(target, { ...init, redirect: "manual" });
    } catch (error) {
      if (init.signal?.aborted) return { ok: false, detail: "the request was cancelled" };
      return { ok: false, detail: `cannot reach ${target.origin}: ${(error as Error).message}` };
    }
    if (response.status < 300 || response.status > 399 || response.status === 304) return { ok: true, response, url: target };
    void response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    let next: URL;
    try {
      next = new URL(location ?? "", target);
    } catch {
      return { ok: false, detail: `HTTP ${response.status} redirect to an invalid location` };
    }
    if (location === null) return { ok: false, detail: `HTTP ${response.status} redirect without a Location` };
    if (next.origin !== url.origin) return { ok: false, detail: `HTTP ${response.status} redirect to another origin (${next.origin}) refused` };
    if (response.status !== 307 && response.status !== 308) {
      return { ok: false, detail: `HTTP ${response.status} redirect refused: only 307 and 308 keep the request as sent` };
    }
    target = next;
  }
  return { ok: false, detail: `more than ${MAX_REDIRECTS} redirects` };
}
