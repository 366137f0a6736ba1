import { excerpt, readCapped } from "../body.ts";
import { isEncryptedOrLoopback } from "../../core/safe-url.ts";

/** Metadata, registration and token answers are small; anything larger is not one. */
const MAX_OAUTH_BODY_BYTES = 1024 * 1024;
const TIMEOUT_MS = 30_000;

export type JsonAnswer = { ok: true; status: number; body: Record<string, unknown> } | { ok: false; status: number | null; detail: string };

/**
 * One request to an OAuth endpoint: no redirects followed (a metadata document or a token
 * endpoint that redirects is not one to trust), a bounded body that must be a JSON object.
 */
export async function fetchJson(url: URL, init: RequestInit = {}, fetchImpl: typeof fetch = fetch): Promise<JsonAnswer> {
  let response: Response;
  try {
    response = await fetchImpl(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS), headers: { accept: "application/json", ...(init.headers ?? {}) } });
  } catch (error) {
    return { ok: false, status: null, detail: `cannot reach ${url.origin}: ${(error as Error).message}` };
  }
  const body = await readCapped(response.body, MAX_OAUTH_BODY_BYTES);
  if (body.kind === "oversize") return { ok: false, status: response.status, detail: `${url.href} answered with ${body.size} bytes` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    return { ok: false, status: response.status, detail: `${url.href} answered HTTP ${response.status}${body.bytes.length > 0 ? `: ${excerpt(body.bytes)}` : ""}` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { ok: false, status: response.status, detail: `${url.href} did not answer with a JSON object` };
  return { ok: true, status: response.status, body: parsed as Record<string, unknown> };
}

/**
 * OAuth 2.1 §1.5 (and the MCP authorization spec): every authorization server endpoint is HTTPS;
 * plain http only to a loopback address, where nothing crosses the network.
 */
export function secureUrl(value: unknown, what: string): URL {
  if (typeof value !== "string") throw new Error(`${what} is missing`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${what} ${JSON.stringify(value)} is not a URL`);
  }
  if (!isEncryptedOrLoopback(url)) throw new Error(`${what} ${url.origin} is not https`);
  return url;
}
