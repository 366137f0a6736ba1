import type { Authorizer } from "../remote-server.ts";
import { refresh } from "./flow.ts";
import { canonicalResource } from "./metadata.ts";
import { loadAuth, saveAuth, type StoredAuth } from "./token-store.ts";

/** Refresh a little before the server would refuse the token. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * The credential a shim sends to a remote server that uses OAuth: the stored access token,
 * refreshed when it has expired or the server answers 401 (once per refusal), the refreshed tokens
 * saved for the next shim. A shim never opens a browser: when nothing works the agent's call fails
 * with one line saying to run `thoughtgate auth login`.
 */
export class OAuthAuthorizer implements Authorizer {
  private readonly server: string;
  private auth: StoredAuth | null;
  private refreshing: Promise<boolean> | null = null;
  private lastFailure: string | null = null;

  constructor(
    url: URL,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly fetchImpl?: typeof fetch,
  ) {
    this.server = canonicalResource(url);
    this.auth = loadAuth(this.server, env);
  }

  get remedy(): string {
    const why = this.auth === null ? "no login is stored for it" : `the stored token was refused${this.lastFailure ? ` and could not be refreshed (${this.lastFailure})` : ""}`;
    return `${why}: run \`thoughtgate auth login ${this.server}\``;
  }

  async header(): Promise<string | null> {
    if (this.auth?.expiresAt != null && this.auth.expiresAt - EXPIRY_MARGIN_MS < Date.now()) await this.renew();
    return this.auth ? `Bearer ${this.auth.accessToken}` : null;
  }

  async unauthorized(_challenge: string | null): Promise<boolean> {
    return this.renew();
  }

  /** One refresh at a time; a token another process saved meanwhile is taken instead. */
  private renew(): Promise<boolean> {
    this.refreshing ??= this.doRenew().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRenew(): Promise<boolean> {
    const refused = this.auth?.accessToken;
    const stored = safeLoad(this.server, this.env);
    if (stored && stored.accessToken !== refused) {
      this.auth = stored;
      return true;
    }
    const current = stored ?? this.auth;
    if (!current) return false;
    const renewed = await refresh(current, this.fetchImpl);
    if (!renewed.ok) {
      this.lastFailure = renewed.detail;
      return false;
    }
    this.auth = renewed.auth;
    this.lastFailure = null;
    saveAuth(renewed.auth, this.env);
    return true;
  }
}

function safeLoad(server: string, env: NodeJS.ProcessEnv): StoredAuth | null {
  try {
    return loadAuth(server, env);
  } catch {
    return null;
  }
}
