import { defineCommand } from "citty";
import { EXIT, ThoughtGateError, messageOf, usageError } from "../core/errors.ts";
import { parseServerUrl } from "../http/endpoint.ts";
import { openInBrowser, type BrowserLaunch } from "../http/oauth/browser.ts";
import { login } from "../http/oauth/flow.ts";
import { canonicalResource } from "../http/oauth/metadata.ts";
import { listAuth, removeAuth, saveAuth, tokenPath } from "../http/oauth/token-store.ts";
import { commonArgs, givenOrAbsent } from "./_shared.ts";

/**
 * `thoughtgate auth`: OAuth logins for remote MCP servers, which `shim --url` (and so `wrap`)
 * then uses. SERVER is the server's URL, as in the agent's config.
 */
const serverArg = { server: { type: "positional", description: "The MCP server's URL", required: true } } as const;

const loginCommand = defineCommand({
  meta: { name: "login", description: "Authorize ThoughtGate with a remote MCP server (OAuth 2.1 in the browser): auth login SERVER" },
  args: {
    ...serverArg,
    "client-id": { type: "string", description: "A client registered with the authorization server beforehand (when it has no dynamic registration)", valueHint: "ID" },
    "client-secret-env": { type: "string", description: "With --client-id: the client's secret, from this environment variable", valueHint: "VAR" },
    scope: { type: "string", description: "Scopes to ask for (default: those the server names)", valueHint: "SCOPES" },
    ...commonArgs,
  },
  async run({ args }) {
    const server = parseServerUrl(args.server, "SERVER");
    const clientId = givenOrAbsent(args["client-id"], "--client-id");
    const secretVar = givenOrAbsent(args["client-secret-env"], "--client-secret-env");
    if (secretVar !== undefined && clientId === undefined) throw usageError("--client-secret-env goes with --client-id");
    const clientSecret = secretVar === undefined ? undefined : process.env[secretVar];
    if (secretVar !== undefined && !clientSecret) throw usageError(`--client-secret-env ${secretVar}: the variable is not set or empty`);
    const opened: BrowserLaunch[] = [];
    try {
      const auth = await login({
        server,
        ...(clientId ? { clientId } : {}),
        ...(clientSecret ? { clientSecret } : {}),
        ...(args.scope ? { scope: args.scope } : {}),
        present: (url) => {
          // Printed for a box without a browser; opened without the URL on any command line.
          process.stderr.write(`thoughtgate: open this URL to authorize ThoughtGate:\n${url}\n`);
          opened.push(openInBrowser(url));
        },
      });
      const path = saveAuth(auth);
      process.stderr.write(`thoughtgate: logged in to ${auth.server} (issuer ${auth.issuer}${auth.scope ? `, scope ${auth.scope}` : ""}); tokens in ${path}\n`);
      return EXIT.ok;
    } catch (error) {
      throw new ThoughtGateError("CONFIG", `auth login ${canonicalResource(server)}: ${messageOf(error)}`);
    } finally {
      for (const launch of opened) launch.close();
    }
  },
});

const logoutCommand = defineCommand({
  meta: { name: "logout", description: "Forget the tokens of a remote MCP server: auth logout SERVER" },
  args: { ...serverArg, ...commonArgs },
  run({ args }) {
    const server = canonicalResource(parseServerUrl(args.server, "SERVER"));
    const removed = removeAuth(server);
    process.stderr.write(removed ? `thoughtgate: removed the tokens of ${server} (${tokenPath(server)})\n` : `thoughtgate: no tokens stored for ${server}\n`);
    return EXIT.ok;
  },
});

const listCommand = defineCommand({
  meta: { name: "list", description: "The remote MCP servers ThoughtGate holds OAuth tokens for" },
  args: { ...commonArgs },
  async run() {
    const rows = listAuth();
    const lines = rows.map(({ path, auth, problem }) => {
      if (!auth) return `${path}  problem: ${problem}`;
      const expiry = auth.expiresAt === null ? "no expiry given" : auth.expiresAt < Date.now() ? "expired" : `expires ${new Date(auth.expiresAt).toISOString()}`;
      return `${auth.server}  issuer ${auth.issuer}  ${expiry}${auth.refreshToken ? ", refreshable" : ""}${auth.scope ? `  scope ${auth.scope}` : ""}`;
    });
    await Bun.write(Bun.stdout, lines.length === 0 ? "no remote MCP server logins\n" : `${lines.join("\n")}\n`);
    return EXIT.ok;
  },
});

export default defineCommand({
  meta: { name: "auth", description: "OAuth logins for remote MCP servers: auth list | login SERVER | logout SERVER" },
  subCommands: { list: listCommand, login: loginCommand, logout: logoutCommand },
});
