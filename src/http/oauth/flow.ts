import { createHash, randomBytes } from "node:crypto";
import { startCallback } from "./callback.ts";
import { parseBearerChallenge } from "./challenge.ts";
import { fetchJson } from "./fetch-json.ts";
import { canonicalResource, discoverAuthServer, discoverProtectedResource, type AuthServer } from "./metadata.ts";
import type { StoredAuth } from "./token-store.ts";

/**
 * OAuth 2.1 for an MCP server, as the MCP authorization spec lays it out: the 401's challenge,
 * discovery, a client (configured, or dynamically registered), authorization code with PKCE (S256)
 * through the browser and a loopback redirect, the `resource` parameter on the authorization and
 * token requests, and refresh.
 */
export type LoginOptions = {
  server: URL;
  /** A client registered beforehand (for servers without dynamic registration). */
  clientId?: string;
  clientSecret?: string;
  /** Scopes to ask for instead of those the server names. */
  scope?: string;
  /** Show the authorization URL to the user (print it, open the browser). */
  present: (url: string) => void;
  timeoutMs?: number;
  fetch?: typeof fetch;
};

const CLIENT_NAME = "ThoughtGate";
const LOGIN_TIMEOUT_MS = 300_000;

export async function login(options: LoginOptions): Promise<StoredAuth> {
  const { server } = options;
  const challenge = await probe(server, options.fetch);
  const resourceMetadata = await discoverProtectedResource(server, challenge, options.fetch);
  const issuer = resourceMetadata.authorizationServers[0] as string;
  const as = await discoverAuthServer(issuer, options.fetch);
  // The resource indicator (RFC 8707) is the server as its metadata names it (checked to cover it).
  const resource = resourceMetadata.resource;
  const callback = startCallback({ issuer: as.issuer, issRequired: as.issParameterSupported }, options.timeoutMs ?? LOGIN_TIMEOUT_MS);
  try {
    const client = options.clientId ? { id: options.clientId, ...(options.clientSecret ? { secret: options.clientSecret } : {}), registered: false } : await register(as, callback.redirectUri, options.fetch);
    const scope = options.scope ?? challenge?.scope ?? resourceMetadata.scopesSupported?.join(" ") ?? null;
    const withOffline = scope !== null && as.scopesSupported?.includes("offline_access") && !scope.split(" ").includes("offline_access") ? `${scope} offline_access` : scope;
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL(as.authorizationEndpoint);
    const params: Record<string, string> = {
      response_type: "code",
      client_id: client.id,
      redirect_uri: callback.redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: callback.state,
      resource,
      ...(withOffline ? { scope: withOffline } : {}),
    };
    for (const [key, value] of Object.entries(params)) authorize.searchParams.set(key, value);
    options.present(authorize.href);
    const answer = await callback.result;
    if (!answer.ok) throw new Error(answer.detail);
    const tokens = await tokenRequest(
      as.tokenEndpoint,
      { grant_type: "authorization_code", code: answer.code, redirect_uri: callback.redirectUri, client_id: client.id, code_verifier: verifier, resource, ...(client.secret ? { client_secret: client.secret } : {}) },
      options.fetch,
    );
    if (!tokens.ok) throw new Error(`the token request failed: ${tokens.detail}`);
    return { server: canonicalResource(server), issuer: as.issuer, tokenEndpoint: as.tokenEndpoint.href, resource, client, scope: tokens.scope ?? withOffline, ...tokens.tokens, savedAt: new Date().toISOString() };
  } finally {
    callback.close();
  }
}

/** A new access token from the refresh token; the refresh token is replaced when the server rotates it. */
export async function refresh(auth: StoredAuth, fetchImpl?: typeof fetch): Promise<{ ok: true; auth: StoredAuth } | { ok: false; detail: string }> {
  if (auth.refreshToken === null) return { ok: false, detail: "no refresh token was issued" };
  const answer = await tokenRequest(
    new URL(auth.tokenEndpoint),
    { grant_type: "refresh_token", refresh_token: auth.refreshToken, client_id: auth.client.id, resource: auth.resource, ...(auth.client.secret ? { client_secret: auth.client.secret } : {}) },
    fetchImpl,
  );
  if (!answer.ok) return answer;
  const refreshToken = answer.tokens.refreshToken ?? auth.refreshToken;
  return { ok: true, auth: { ...auth, ...answer.tokens, refreshToken, scope: answer.scope ?? auth.scope, savedAt: new Date().toISOString() } };
}

/** An unauthenticated request to the MCP endpoint, for the 401's challenge (null when there is none). */
async function probe(server: URL, fetchImpl: typeof fetch = fetch) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: "thoughtgate-auth-probe", method: "ping" });
  try {
    const response = await fetchImpl(server, { method: "POST", body, redirect: "manual", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, signal: AbortSignal.timeout(30_000) });
    void response.body?.cancel().catch(() => undefined);
    return response.status === 401 ? parseBearerChallenge(response.headers.get("www-authenticate")) : null;
  } catch (error) {
    throw new Error(`cannot reach ${server.origin}: ${(error as Error).message}`);
  }
}

/** RFC 7591 dynamic client registration: a public client (PKCE, no secret) with the loopback redirect. */
async function register(as: AuthServer, redirectUri: string, fetchImpl?: typeof fetch): Promise<StoredAuth["client"]> {
  if (!as.registrationEndpoint) throw new Error(`${as.issuer} offers no dynamic client registration: register a client with it and pass --client-id`);
  const answer = await fetchJson(
    as.registrationEndpoint,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: CLIENT_NAME,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        application_type: "native",
      }),
    },
    fetchImpl,
  );
  if (!answer.ok) throw new Error(`${as.issuer} refused to register ThoughtGate as a client: ${answer.detail}; register one with it and pass --client-id`);
  const { client_id: id, client_secret: secret, error, error_description: description } = answer.body;
  if (answer.status >= 300 || typeof id !== "string") {
    const why = typeof error === "string" ? `${error}${typeof description === "string" ? `: ${description.slice(0, 200)}` : ""}` : `HTTP ${answer.status}`;
    throw new Error(`${as.issuer} refused to register ThoughtGate as a client (${why}); register one with it and pass --client-id`);
  }
  return { id, ...(typeof secret === "string" ? { secret } : {}), registered: true };
}

type Tokens = { accessToken: string; refreshToken: string | null; expiresAt: number | null };

async function tokenRequest(endpoint: URL, form: Record<string, string>, fetchImpl?: typeof fetch): Promise<{ ok: true; tokens: Tokens; scope: string | null } | { ok: false; detail: string }> {
  const answer = await fetchJson(endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() }, fetchImpl);
  if (!answer.ok) return answer;
  const body = answer.body;
  if (answer.status !== 200) {
    const error = typeof body.error === "string" ? body.error : `HTTP ${answer.status}`;
    return { ok: false, detail: `${error}${typeof body.error_description === "string" ? `: ${body.error_description.slice(0, 200)}` : ""}` };
  }
  if (typeof body.access_token !== "string" || body.access_token === "") return { ok: false, detail: "the answer has no access_token" };
  if (typeof body.token_type !== "string" || body.token_type.toLowerCase() !== "bearer") return { ok: false, detail: `token_type ${JSON.stringify(body.token_type)} is not Bearer` };
  const expiresIn = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : null;
  return {
    ok: true,
    tokens: { accessToken: body.access_token, refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null, expiresAt: expiresIn === null ? null : Date.now() + expiresIn * 1000 },
    scope: typeof body.scope === "string" ? body.scope : null,
  };
}
