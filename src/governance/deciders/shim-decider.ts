import { readFileSync } from "node:fs";
import type { Profile } from "../../core/profile.ts";
import { placeOf, type Place } from "../../core/project.ts";
import type { Decider } from "../verdict/decider.ts";
import type { AlwaysWriter } from "../verdict/always-rule.ts";
import type { PolicyInForce } from "../engine/policy.ts";
import { messageOf, ThoughtGateError, usageError } from "../../core/errors.ts";
import { ENDPOINT_ENV, SESSION_SECRET_ENV } from "../wire/env.ts";
import { isSameProcessRunning } from "../../core/process-identity.ts";
import { endedSessionDecider } from "./ended-session.ts";
import type { Session, SessionLookup } from "./find-session.ts";

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
   * The wrap session the shim belongs to (session.ts), looked up when no flag says how to govern:
   * its service decides; an ended one refuses every governed call; none, the shim governs on its own.
   */
  session?: SessionLookup | undefined;
  /** The writer of "always allow" rules for a standalone shim, made from its engine holder (the shim command gives it). */
  alwaysWriter?: (engines: { policy(): PolicyInForce; reload(): Promise<boolean> }) => Promise<AlwaysWriter>;
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
async function createLocalDecider(options: ShimGovernanceOptions): Promise<Decider> {
  const [{ EngineHolder }, { LocalDecider }] = await Promise.all([import("../engine/engine-holder.ts"), import("./local-decider.ts")]);
  const holder = await EngineHolder.load(options.configFlag);
  // Polled, not watched with file-system events: one event watcher thread per shim is memory each
  // of them would pay (engine-holder.ts).
  holder.watch("poll");
  const makeWriter = options.alwaysWriter;
  const always = makeWriter ? () => makeWriter({ policy: () => holder.policy, reload: () => holder.reload() }) : undefined;
  const decider = new LocalDecider(holder, options.profile, always, shimPlace(options));
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
  if (options.session && options.session.kind !== "none" && options.endpoint === undefined && options.secretFile === undefined && !options.configFlag) {
    return options.session.kind === "ended" ? endedSessionDecider(options.session, options.serverId) : joinSession(options.session.session, options);
  }
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

/**
 * The decider of a shim in a wrap session: the session's service, with its secret from the session
 * directory. A session that ends before the shim is connected (its wrap killed meanwhile, its
 * secret already removed) gives the ended session's decider, never a wait.
 */
async function joinSession(session: Session, options: ShimGovernanceOptions): Promise<Decider> {
  const gone = () => (isSameProcessRunning(session.wrap.pid, session.wrap.startId) ? null : `the thoughtgate wrap of session ${session.id} (pid ${session.wrap.pid}) has ended`);
  const ended = (why: string) => endedSessionDecider({ kind: "ended", id: session.id, via: session.via, why }, options.serverId);
  let secret: string;
  try {
    secret = readFileSync(session.secretFile, "utf8").trim();
  } catch (error) {
    return ended(gone() ?? `the secret of session ${session.id} cannot be read (${messageOf(error)})`);
  }
  const { RemoteDecider, SessionEnded } = await import("./remote-decider.ts");
  try {
    return await RemoteDecider.connect({ endpoint: session.endpoint, secret, serverId: options.serverId, profile: options.profile, place: placeOf(process.cwd(), session.project), sessionGone: gone, ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }) });
  } catch (error) {
    if (error instanceof SessionEnded) return ended(error.message);
    throw error;
  }
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
