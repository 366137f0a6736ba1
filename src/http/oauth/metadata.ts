import type { BearerChallenge } from "./challenge.ts";
import { fetchJson, secureUrl } from "./fetch-json.ts";

/**
 * Discovery as the MCP authorization spec describes it: the server's protected resource metadata
 * (RFC 9728: from the 401's `resource_metadata`, else the well-known URIs, path first), then its
 * authorization server's metadata (RFC 8414 and OpenID Connect Discovery, in the spec's order),
 * each validated before it is used.
 */
export type ProtectedResource = { resource: string; authorizationServers: string[]; scopesSupported: string[] | null };

export type AuthServer = {
  issuer: string;
  authorizationEndpoint: URL;
  tokenEndpoint: URL;
  registrationEndpoint: URL | null;
  scopesSupported: string[] | null;
  /** RFC 9207: the server says it puts `iss` in authorization responses. */
  issParameterSupported: boolean;
};

export async function discoverProtectedResource(server: URL, challenge: BearerChallenge | null, fetchImpl?: typeof fetch): Promise<ProtectedResource> {
  const candidates: URL[] = [];
  if (challenge?.resourceMetadata) candidates.push(secureUrl(challenge.resourceMetadata, "the resource_metadata URL"));
  else {
    const path = server.pathname.replace(/\/$/, "");
    if (path !== "") candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, server));
    candidates.push(new URL("/.well-known/oauth-protected-resource", server));
  }
  const failures: string[] = [];
  for (const url of candidates) {
    const answer = await fetchJson(url, {}, fetchImpl);
    if (!answer.ok || answer.status !== 200) {
      failures.push(answer.ok ? `${url.href}: HTTP ${answer.status}` : answer.detail);
      continue;
    }
    const { resource, authorization_servers: servers, scopes_supported: scopes } = answer.body;
    if (typeof resource !== "string") throw new Error(`${url.href} has no "resource"`);
    if (!covers(resource, server)) throw new Error(`${url.href} describes ${resource}, not ${server.origin}${server.pathname}: not used`);
    if (!Array.isArray(servers) || servers.length === 0 || !servers.every((item) => typeof item === "string")) throw new Error(`${url.href} names no authorization server`);
    return { resource, authorizationServers: servers as string[], scopesSupported: stringList(scopes) };
  }
  throw new Error(`no protected resource metadata for ${server.origin}${server.pathname} (${failures.join("; ")})`);
}

export async function discoverAuthServer(issuerText: string, fetchImpl?: typeof fetch): Promise<AuthServer> {
  const issuer = secureUrl(issuerText, "the authorization server");
  const path = issuer.pathname.replace(/\/$/, "");
  const candidates =
    path === ""
      ? ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
      : [`/.well-known/oauth-authorization-server${path}`, `/.well-known/openid-configuration${path}`, `${path}/.well-known/openid-configuration`];
  const failures: string[] = [];
  for (const candidate of candidates) {
    const url = new URL(candidate, issuer);
    const answer = await fetchJson(url, {}, fetchImpl);
    if (!answer.ok || answer.status !== 200) {
      failures.push(answer.ok ? `${url.href}: HTTP ${answer.status}` : answer.detail);
      continue;
    }
    const body = answer.body;
    // RFC 8414 §3.3: a document whose issuer is not the one asked about is not used (a mix-up otherwise).
    if (body.issuer !== issuerText) throw new Error(`${url.href} names the issuer ${JSON.stringify(body.issuer)}, not ${issuerText}: not used`);
    const methods = stringList(body.code_challenge_methods_supported);
    if (!methods?.includes("S256")) throw new Error(`${issuerText} does not support PKCE with S256 (code_challenge_methods_supported): refusing to authorize`);
    return {
      issuer: issuerText,
      authorizationEndpoint: secureUrl(body.authorization_endpoint, "authorization_endpoint"),
      tokenEndpoint: secureUrl(body.token_endpoint, "token_endpoint"),
      registrationEndpoint: body.registration_endpoint === undefined ? null : secureUrl(body.registration_endpoint, "registration_endpoint"),
      scopesSupported: stringList(body.scopes_supported),
      issParameterSupported: body.authorization_response_iss_parameter_supported === true,
    };
  }
  throw new Error(`no authorization server metadata for ${issuerText} (${failures.join("; ")})`);
}

/** The canonical URI of an MCP server (RFC 8707): origin and path, without a trailing slash. */
export function canonicalResource(server: URL): string {
  return `${server.origin}${server.pathname.replace(/\/$/, "")}`;
}

/** Whether a metadata `resource` is this server: the same origin, and its path or a parent of it. */
function covers(resource: string, server: URL): boolean {
  try {
    const url = new URL(resource);
    const path = url.pathname.replace(/\/$/, "");
    return url.origin === server.origin && (server.pathname === path || server.pathname.startsWith(`${path}/`) || path === "");
  } catch {
    return false;
  }
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === "string") ? (value as string[]) : null;
}
