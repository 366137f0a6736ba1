import { readFileSync } from "node:fs";
import type { Profile } from "../../core/profile.ts";
import { placeOf, type Place } from "../../core/project.ts";
import type { Decider } from "../decision/decider.ts";
import { messageOf, ThoughtGateError, usageError } from "../../core/errors.ts";
import { ENDPOINT_ENV, SESSION_SECRET_ENV } from "../wire/env.ts";

export type ShimGovernanceOptions = {
  profile: Profile;
  serverId: string;
  /** `--governance-endpoint` (or $THOUGHTGATE_GOVERNANCE_ENDPOINT): decide through the service. */
  endpoint: string | undefined;
  /** `--governance-secret-file`: where wrap keeps the session secret (never in the agent's config). */
  secretFile?: string | undefined;
  /** `--thoughtgate-config`; discovery and the embedded default apply when absent. */
  configFlag: string | undefined;
  /** `--governance-ready-timeout`: how long to wait for the service to be ready. */
  readyTimeoutMs?: number | undefined;
  /**
   * The session's project directory, when the shim belongs to a session that knows it (docs/governance.md,
   * "Rules that see arguments"); otherwise the project root of the shim's working directory.
   */
  project?: string | undefined;
};

/** Where this shim's calls are made from: its working directory, and the session's project or its own. */
function shimPlace(options: ShimGovernanceOptions): Place {
  return placeOf(process.cwd(), options.project);
}

/**
 * The decider a standalone shim uses: its own engine, reloaded on SIGHUP and file changes.
 * A config that was asked for and cannot be loaded throws (the shim does not start). The engine
 * loads here only: a shim whose decisions come from the service never loads it (nor Cedar).
 */
export async function createLocalDecider(options: ShimGovernanceOptions): Promise<Decider> {
  const [{ EngineHolder }, { LocalDecider }] = await Promise.all([import("../engine/engine-holder.ts"), import("./local-decider.ts")]);
  const holder = await EngineHolder.load(options.configFlag);
  // Polled, not watched with file-system events: one event watcher thread per shim is memory each
  // of them would pay (engine-holder.ts).
  holder.watch("poll");
  const decider = new LocalDecider(holder, options.profile, shimPlace(options));
  // Only the user's own policy may choose where spans go (core/config/load.ts): the base layer's.
  const otlp = holder.policy.base.engine.config.telemetry?.otlp;
  return Object.assign(decider, { close: () => holder.close(), ...(otlp ? { tracing: { kind: "export" as const, otlp } } : {}) });
}

/** The service when an endpoint is given (its secret comes from the environment), else the local engine. */
export async function createShimDecider(options: ShimGovernanceOptions, env: NodeJS.ProcessEnv = process.env): Promise<Decider> {
  // Given but empty (an unset `${VAR}` in the agent's config) must not mean "decide in-process with
  // another policy than the service's": it stops the shim.
  const endpoint = nonEmpty(options.endpoint, "--governance-endpoint") ?? nonEmpty(env[ENDPOINT_ENV], `$${ENDPOINT_ENV}`);
  if (options.secretFile !== undefined) nonEmpty(options.secretFile, "--governance-secret-file");
  if (!endpoint) {
    if (options.secretFile !== undefined) throw usageError("--governance-secret-file needs --governance-endpoint (the service it belongs to)");
    if (options.readyTimeoutMs !== undefined) throw usageError("--governance-ready-timeout needs --governance-endpoint (the service to wait for)");
    return createLocalDecider(options);
  }
  if (!isHttpUrl(endpoint)) throw usageError(`--governance-endpoint: ${JSON.stringify(endpoint)} is not an http:// URL`);
  if (options.configFlag) throw usageError("use either --governance-endpoint or --thoughtgate-config: the service owns the policy");
  const secret = options.secretFile ? readSecretFile(options.secretFile) : env[SESSION_SECRET_ENV];
  if (!secret) throw usageError(`--governance-endpoint needs the session secret in $${SESSION_SECRET_ENV} or --governance-secret-file`);
  // Loaded only here: a shim with a local policy never needs the HTTP client.
  const { RemoteDecider } = await import("./remote-decider.ts");
  return RemoteDecider.connect({ endpoint, secret, serverId: options.serverId, profile: options.profile, place: shimPlace(options), ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }) });
}

function nonEmpty(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw usageError(`${name} is empty: give a value or leave it out`);
  return value;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function readSecretFile(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    // The session that wrote it has ended (or never started): there is no service to ask.
    throw new ThoughtGateError("GOVERNANCE_UNAVAILABLE", `cannot read the governance session secret ${path}: ${messageOf(error)} (is the thoughtgate wrap session that wrote it still running?)`);
  }
}
