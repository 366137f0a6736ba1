import type { ArgsDef } from "citty";
import { basename } from "node:path";
import { messageOf, ThoughtGateError, usageError } from "../core/errors.ts";
import { isLoopbackHost } from "../core/safe-url.ts";
import { parseEndpoint } from "../http/endpoint.ts";
import type { Authorizer } from "../http/remote-server.ts";
import type { AgentSide } from "../shim/stdio-agent.ts";
import { StdioUpstream } from "../shim/stdio-upstream.ts";
import type { Upstream } from "../shim/upstream.ts";
import { CHILD_COMMANDS, givenOrAbsent, optionalDuration, rejectChildWithoutSeparator, rejectUnknownFlags } from "./_shared.ts";

/** The flags that choose the server side of `shim` (a remote server instead of `-- CMD`). */
export const remoteArgs = {
  url: { type: "string", description: "Govern the remote MCP server at this Streamable HTTP URL instead of starting one (https://, or http:// to loopback)", valueHint: "URL" },
  "url-env": { type: "string", description: "--url, read from this environment variable (what wrap writes when the URL has a query string)", valueHint: "VAR" },
  header: { type: "string", description: "With --url: send this header with every request; repeatable", valueHint: "'Name: value'" },
  "header-env": { type: "string", description: "With --url: send the header `Name: value` held in this environment variable (kept off the command line); repeatable", valueHint: "VAR" },
  "bearer-token-env": { type: "string", description: "With --url: send `Authorization: Bearer` with the token in this environment variable", valueHint: "VAR" },
  listen: { type: "string", description: "Serve agents over Streamable HTTP on this loopback address instead of stdio (endpoint /mcp, /health); port 0 picks a free one", valueHint: "127.0.0.1:PORT" },
  "listen-token-env": { type: "string", description: "With --listen: the bearer token agents must send, from this environment variable (default THOUGHTGATE_LISTEN_TOKEN)", valueHint: "VAR" },
  "request-timeout": { type: "string", description: "With --url: answer (and cancel) a request the server has not answered after this long (default: no limit)", valueHint: "DURATION" },
} as const satisfies ArgsDef;

type Parsed = { listen?: string; "listen-token-env"?: string; url?: string; "url-env"?: string; header?: string | string[]; "bearer-token-env"?: string; "request-timeout"?: string };

/**
 * `--url` / `-- CMD` (the server), checked together: exactly one of them. The HTTP sides (the
 * remote client, OAuth, the `--listen` front end) load only when asked for: a shim of a stdio
 * server between stdio pipes never pays for them (docs/benchmarks.md, "Where the memory goes").
 */
export async function shimSides(
  rawArgs: string[],
  args: ArgsDef,
  parsed: Parsed,
  serverIdFlag: string | undefined,
  /** The environment the server gets: the entry's, as the agent gave it. */
  serverEnv: NodeJS.ProcessEnv = process.env,
): Promise<{ serverId: string; upstream: Upstream; agent?: (onGone: (reason: string) => void) => AgentSide }> {
  const separator = rawArgs.indexOf("--");
  const ours = separator === -1 ? rawArgs : rawArgs.slice(0, separator);
  const child = separator === -1 ? [] : rawArgs.slice(separator + 1);
  // `shim npx server`: the server's command without `--` (with --url there is none to run).
  if (separator === -1 && parsed.url === undefined && parsed["url-env"] === undefined) rejectChildWithoutSeparator(rawArgs, args, "shim");
  rejectUnknownFlags(ours, args);
  const url = urlOf(givenOrAbsent(parsed.url, "--url"), givenOrAbsent(parsed["url-env"], "--url-env"));
  const headers = [...repeated(ours, "header"), ...repeated(ours, "header-env").map((variable) => fromEnv(variable, "--header-env"))];
  const agent = await agentSide(givenOrAbsent(parsed.listen, "--listen"), givenOrAbsent(parsed["listen-token-env"], "--listen-token-env"));
  if (url === undefined) {
    if (headers.length > 0 || parsed["bearer-token-env"] !== undefined || parsed["request-timeout"] !== undefined) {
      throw usageError("--header, --header-env, --bearer-token-env and --request-timeout go with --url");
    }
    if (child.length === 0) throw usageError(`shim needs the MCP server's command after --, e.g. thoughtgate shim -- ${CHILD_COMMANDS.shim?.example} (or --url URL for a remote server)`);
    const serverId = serverIdFlag ?? basename(child[0] ?? "server");
    // The agent's token for --listen is the shim's credential, never the server's.
    const withhold = parsed.listen === undefined ? [] : [parsed["listen-token-env"] ?? DEFAULT_LISTEN_TOKEN_ENV];
    return { serverId, upstream: new StdioUpstream(child, serverId, withhold, serverEnv), ...(agent ? { agent: agent(serverId) } : {}) };
  }
  if (child.length > 0) throw usageError("--url and -- CMD both name a server: give one");
  const endpoint = parseEndpoint(url, headers);
  const serverId = serverIdFlag ?? endpoint.url.hostname;
  const auth = bearerFromEnv(givenOrAbsent(parsed["bearer-token-env"], "--bearer-token-env"), endpoint.headers) ?? (await oauthFor(endpoint.url, endpoint.headers));
  const requestTimeoutMs = optionalDuration(parsed["request-timeout"], "--request-timeout") ?? null;
  const { HttpUpstream } = await import("../shim/http-upstream.ts");
  return { serverId, upstream: new HttpUpstream({ serverId, url: endpoint.url, headers: endpoint.headers, auth, requestTimeoutMs }), ...(agent ? { agent: agent(serverId) } : {}) };
}

const DEFAULT_LISTEN_TOKEN_ENV = "THOUGHTGATE_LISTEN_TOKEN";

/**
 * `--listen HOST:PORT`: the agent side as an HTTP server. Loopback only (there is no TLS: a token
 * sent over the network would be readable on the way), and a token is required.
 */
async function agentSide(listen: string | undefined, tokenVariable: string | undefined): Promise<((serverId: string) => (onGone: (reason: string) => void) => AgentSide) | null> {
  if (listen === undefined) {
    if (tokenVariable !== undefined) throw usageError("--listen-token-env goes with --listen");
    return null;
  }
  const match = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  const port = Number(match?.[2]);
  if (!match || port > 65_535) throw usageError(`--listen ${JSON.stringify(listen)} is not HOST:PORT`);
  const hostname = (match[1] as string).replace(/^\[|\]$/g, "");
  if (!isLoopbackHost(hostname)) throw usageError(`--listen ${listen}: only a loopback address (127.0.0.1, ::1, localhost); agents elsewhere would send the token unencrypted`);
  const variable = tokenVariable ?? DEFAULT_LISTEN_TOKEN_ENV;
  const token = process.env[variable];
  if (token === undefined || token.trim().length < 16) throw usageError(`--listen needs a token of at least 16 characters in $${variable} (agents send it as a bearer token)`);
  const { HttpAgent } = await import("../shim/http-agent.ts");
  return (serverId) => () =>
    new HttpAgent({ serverId, hostname, port, token: token.trim(), onListening: (url) => process.stderr.write(`thoughtgate: shim listening on ${url} (health: ${url.replace(/\/mcp$/, "/health")})\n`) });
}

function urlOf(flag: string | undefined, variable: string | undefined): string | undefined {
  if (flag !== undefined && variable !== undefined) throw usageError("--url and --url-env both name the server: give one");
  return variable === undefined ? flag : fromEnv(variable, "--url-env");
}

function fromEnv(variable: string, flag: string): string {
  const value = process.env[variable];
  if (value === undefined || value.trim() === "") throw usageError(`${flag} ${variable}: the variable is not set or empty`);
  return value;
}

/** Every value of a repeatable flag, in order (`--header A --header=B`). */
export function repeated(ours: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < ours.length; i++) {
    const arg = ours[i] as string;
    if (arg === `--${name}`) {
      const value = ours[i + 1];
      if (value === undefined) throw usageError(`--${name} needs a value`);
      values.push(value);
      i++;
    } else if (arg.startsWith(`--${name}=`)) values.push(arg.slice(name.length + 3));
  }
  return values;
}

/** OAuth (tokens from `thoughtgate auth login`) unless the user gives the credential as a header. */
async function oauthFor(url: URL, headers: ReadonlyArray<readonly [string, string]>): Promise<Authorizer | null> {
  if (headers.some(([name]) => name.toLowerCase() === "authorization")) return null;
  const { OAuthAuthorizer } = await import("../http/oauth/authorizer.ts");
  try {
    return new OAuthAuthorizer(url);
  } catch (error) {
    throw new ThoughtGateError("CONFIG", `OAuth tokens for ${url.origin}${url.pathname}: ${messageOf(error)}`);
  }
}

function bearerFromEnv(variable: string | undefined, headers: ReadonlyArray<readonly [string, string]>): Authorizer | null {
  if (variable === undefined) return null;
  if (headers.some(([name]) => name.toLowerCase() === "authorization")) throw usageError("--bearer-token-env and --header Authorization both set the credential: give one");
  const token = process.env[variable];
  if (token === undefined || token.trim() === "") throw usageError(`--bearer-token-env ${variable}: the variable is not set or empty`);
  return { header: async () => `Bearer ${token.trim()}`, unauthorized: async () => false, remedy: `the token in $${variable} was refused` };
}
