/**
 * What the secret scanner recognises, each with a stable id: the `<kind>` of `[REDACTED:<kind>]`,
 * of `secrets.kinds` in thoughtgate.yaml and of the audit's `secrets_found` event
 * (docs/governance.md, Secret scanning).
 */
const SECRET_KINDS = {
  aws_access_key_id: "AWS access key id (AKIA…, ASIA…)",
  aws_secret_access_key: "AWS secret access key (the value of a key named like aws_secret_access_key)",
  gcp_api_key: "Google Cloud API key (AIza…)",
  private_key: "PEM private key block (-----BEGIN … PRIVATE KEY-----), as in a GCP service-account key file",
  azure_storage_key: "Azure storage account key (AccountKey=…)",
  azure_shared_access_key: "Azure Service Bus / Event Hubs key (SharedAccessKey=…)",
  azure_sas_signature: "signature of an Azure shared access signature URL (sig=…)",
  azure_client_secret: "Microsoft Entra ID client secret (…Q~…)",
  github_token: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
  gitlab_token: "GitLab personal access token (glpat-…)",
  slack_token: "Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-, xapp-)",
  slack_webhook: "Slack incoming webhook URL path (hooks.slack.com/services/…)",
  openai_api_key: "OpenAI API key (sk-proj-…, sk-svcacct-…, sk-admin-…, sk-…)",
  anthropic_api_key: "Anthropic API key (sk-ant-…)",
  stripe_secret_key: "Stripe secret key (sk_live_…, sk_test_…)",
  stripe_restricted_key: "Stripe restricted key (rk_live_…, rk_test_…)",
  stripe_webhook_secret: "Stripe webhook signing secret (whsec_…)",
  jwt: "JSON Web Token (eyJ….eyJ….…)",
  url_password: "the password of a URL or connection string (scheme://user:password@host)",
  authorization_header: "the value of an Authorization header",
  bearer_token: "a Bearer token",
  secret_field: "the value of a field named like a credential (password, token, secret, api_key, authorization…)",
} as const;

export type SecretKind = keyof typeof SECRET_KINDS;

export const SECRET_KIND_IDS = Object.keys(SECRET_KINDS) as SecretKind[];

export function isSecretKind(value: string): value is SecretKind {
  return Object.hasOwn(SECRET_KINDS, value);
}

/**
 * One finding: `[start, end)` in the scanned bytes. `wrap`, for a whole JSON value replaced (a
 * number, an object), is the quote of its nesting level, so the replacement is a string there;
 * `close` ends a string that was cut off before its closing quote.
 */
export type Span = { kind: SecretKind; start: number; end: number; wrap?: string; close?: string };

/** What replaces a finding unless the policy says otherwise. */
export function redactedMarker(kind: SecretKind): string {
  return `[REDACTED:${kind}]`;
}
