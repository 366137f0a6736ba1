import { defineCommand } from "citty";
import { runShim } from "../shim/proxy.ts";
import { runIdentity } from "../shim/run-identity.ts";
import { createShimDecider } from "../governance/deciders/shim-decider.ts";
import { findSession, type SessionLookup } from "../governance/deciders/find-session.ts";
import { commonArgs, eventsArg, eventsPath, givenOrAbsent, optionalDuration, profileArg, resolveProfile, runIdFromEnv } from "./_shared.ts";
import { remoteArgs, shimSides } from "./_shim-sides.ts";
import { replaceWithStateBinary } from "../core/exec.ts";
import { EXIT, messageOf, ThoughtGateError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { stateDir } from "../core/paths.ts";
import { placeShim } from "../core/user-environment.ts";
import type { Decider } from "../governance/verdict/decider.ts";
import { answerWithRefusal, refusalError } from "../shim/policy-refusal.ts";
import { TARGET, VERSION } from "../version.ts";

/** Set on a shim that became its session's binary, so a binary that still is not the session's version stops there. */
const BECAME = "THOUGHTGATE_SESSION_BINARY";

const args = {
  "server-id": { type: "string", description: "Name of this server in logs and events (default: the command's basename, or the URL's host)" },
  ...profileArg,
  "governance-endpoint": {
    type: "string",
    description: "Ask this governance service (thoughtgate serve / wrap) for every decision; secret from $THOUGHTGATE_GOVERNANCE_SECRET",
    valueHint: "URL",
  },
  "governance-ready-timeout": {
    type: "string",
    description: "With --governance-endpoint: how long to wait for the service to answer before giving up (default 30s)",
    valueHint: "DURATION",
  },
  "governance-secret-file": {
    type: "string",
    description: "Read the governance session secret from this file (what wrap writes) instead of $THOUGHTGATE_GOVERNANCE_SECRET",
    valueHint: "PATH",
  },
  "thoughtgate-config": {
    type: "string",
    description: "Policy file, used alone (default: $THOUGHTGATE_CONFIG, else ~/.config/thoughtgate/thoughtgate.yaml or the embedded default policy, restricted by ./thoughtgate.yaml)",
    valueHint: "PATH",
  },
  ...remoteArgs,
  ...eventsArg,
  "orphan-timeout": { type: "string", description: "Report requests unanswered for this long (default 5m)", valueHint: "DURATION" },
  "stdin-close-grace": { type: "string", description: "Shutdown: wait this long after closing the server's stdin (default 5s)", valueHint: "DURATION" },
  "sigterm-grace": { type: "string", description: "Shutdown: wait this long after SIGTERM before SIGKILL (default 2s)", valueHint: "DURATION" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "shim",
    description: "Proxy one MCP server, checking every JSON-RPC message and auditing tool calls",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    // Where this shim belongs is the user's, never its entry's: before anything reads the
    // environment, its placing variables become the user's own; the server still gets the
    // environment its entry gave (core/user-environment.ts).
    const serverEnv = { ...process.env };
    placeOwnEnvironment();
    // Every flag is checked before anything starts: a given-but-empty value is an error, never "absent".
    const flagProfile = parsed.profile === undefined ? undefined : resolveProfile(parsed.profile);
    const sides = await shimSides(rawArgs, args, parsed, givenOrAbsent(parsed["server-id"], "--server-id"), serverEnv);
    const { serverId } = sides;
    // A flag that says how to govern (a service, a policy file) is the user's own set-up, outside
    // any session; otherwise the shim belongs to the wrap session that started its agent, if any
    // (docs/architecture.md, "How a shim finds its session"), and that session decides, records and
    // sets the profile, whatever the environment says.
    const told = parsed["governance-endpoint"] !== undefined || parsed["governance-secret-file"] !== undefined || parsed["thoughtgate-config"] !== undefined;
    const lookup: SessionLookup = told ? { kind: "none" } : sessionBinary(await findSession());
    const session = lookup.kind === "joined" ? lookup.session : undefined;
    const profile = flagProfile ?? session?.profile ?? resolveProfile(undefined);
    const runId = session?.id ?? runIdFromEnv();
    const events = parsed.events === undefined && session ? session.events : eventsPath(parsed.events, { runId, serverId });
    const graces = {
      orphanTimeoutMs: optionalDuration(parsed["orphan-timeout"], "--orphan-timeout"),
      stdinCloseGraceMs: optionalDuration(parsed["stdin-close-grace"], "--stdin-close-grace"),
      sigtermGraceMs: optionalDuration(parsed["sigterm-grace"], "--sigterm-grace"),
    };
    const decider = await policyOrRefusal(serverId, () => createShimDecider({
      profile,
      serverId,
      endpoint: parsed["governance-endpoint"],
      secretFile: parsed["governance-secret-file"],
      configFlag: givenOrAbsent(parsed["thoughtgate-config"], "--thoughtgate-config"),
      readyTimeoutMs: optionalDuration(parsed["governance-ready-timeout"], "--governance-ready-timeout"),
      session: lookup,
      // "Always allow" from the agent's form writes the user's policy: loaded on the first approval only.
      alwaysWriter: async (engines) =>
        (await import("../governance/approval/always-allow.ts")).alwaysWriter({ ...engines, env: process.env, cwd: process.cwd(), origin: `thoughtgate shim --server-id ${serverId}, pid ${process.pid}`, now: () => new Date() }),
    }));
    if (decider === null) return EXIT.error;
    // Traces only when the policy (or the service) asks for them: nothing of it is loaded otherwise.
    const tracer = decider.tracing ? await (await import("../governance/engine/tracing.ts")).startShimTracer(decider.tracing, serverId) : undefined;
    const identity = events === null ? undefined : runIdentity({ session, cwd: process.cwd(), parentPid: process.ppid });
    return runShim({ serverId, profile, upstream: sides.upstream, agent: sides.agent, runId, identity, eventsPath: events, decider, ...graces, ...(tracer ? { tracer } : {}) });
  },
});

/**
 * The decider, or, when the policy cannot be loaded, null once the agent has been told so: each of
 * its requests answered with the file, the problem and the fix until it closes the pipe
 * (shim/policy-refusal.ts), the same said on stderr for the agent's log.
 */
async function policyOrRefusal(serverId: string, create: () => Promise<Decider>): Promise<Decider | null> {
  try {
    return await create();
  } catch (error) {
    if (!(error instanceof ThoughtGateError) || error.code !== "CONFIG") throw error;
    const refusal = { serverId, problem: error.message };
    log.error(refusalError(refusal).message);
    await answerWithRefusal(refusal, Bun.stdin.stream(), (line) => process.stdout.write(line));
    return null;
  }
}

/**
 * A session on another version of thoughtgate than this binary (the shim path was made another
 * version's by a later wrap or enroll: shim-path.ts): become the session's own binary, with the same
 * arguments, so the shim speaks its service's version. Returns only when nothing needs to change;
 * a session whose binary cannot be run is an ended session to this shim.
 */
function sessionBinary(lookup: SessionLookup): SessionLookup {
  if (lookup.kind !== "joined") return lookup;
  const { session } = lookup;
  if (session.version === VERSION && session.target === TARGET) return lookup;
  const ended = (why: string): SessionLookup => ({ kind: "ended", id: session.id, via: session.via, why: `session ${session.id} runs thoughtgate ${session.version} (${session.target}) and this shim is ${VERSION} (${TARGET}): ${why}` });
  if (process.env[BECAME] === session.shim) return ended(`${session.shim} is not that version`);
  try {
    // Only a thoughtgate of the user's own state directory, whatever the descriptor names, and with
    // the placed environment: a pin of an older version does not place itself, so the entry's HOME
    // would otherwise move it (its server then gets the user's HOME and XDG directories).
    return replaceWithStateBinary(session.shim, stateDir(), [session.shim, ...process.argv.slice(2)], { ...process.env, [BECAME]: session.shim });
  } catch (error) {
    return ended(`its binary cannot be run (${messageOf(error)})`);
  }
}

/** Make this process's placing variables the user's (core/user-environment.ts), saying which the entry's were not. */
function placeOwnEnvironment(): void {
  const placement = placeShim(process.execPath, process.env);
  if (placement === null) return;
  if ("refused" in placement) throw new ThoughtGateError("CONFIG", `this shim cannot tell where your thoughtgate files are: ${placement.refused}`);
  for (const key of Object.keys(process.env)) if (!(key in placement.env)) delete process.env[key];
  Object.assign(process.env, placement.env);
  if (placement.ignored.length > 0) {
    log.warn(`ignoring ${placement.ignored.map((key) => `$${key}`).join(", ")} from this server's environment: a shim takes where it belongs and whose policy it follows from your own files in ${placement.stateDir}, never from its entry (the server still gets them)`);
  }
}
