import { defineCommand } from "citty";
import { runShim } from "../shim/proxy.ts";
import { createShimDecider } from "../governance/deciders/shim-decider.ts";
import { commonArgs, eventsArg, eventsPath, givenOrAbsent, optionalDuration, profileArg, resolveProfile, runIdFromEnv } from "./_shared.ts";
import { remoteArgs, shimSides } from "./_shim-sides.ts";

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
    // Every flag is checked before anything starts: a given-but-empty value is an error, never "absent".
    const profile = resolveProfile(parsed.profile);
    const sides = await shimSides(rawArgs, args, parsed, givenOrAbsent(parsed["server-id"], "--server-id"));
    const { serverId } = sides;
    const runId = runIdFromEnv();
    const events = eventsPath(parsed.events, { runId, serverId });
    const graces = {
      orphanTimeoutMs: optionalDuration(parsed["orphan-timeout"], "--orphan-timeout"),
      stdinCloseGraceMs: optionalDuration(parsed["stdin-close-grace"], "--stdin-close-grace"),
      sigtermGraceMs: optionalDuration(parsed["sigterm-grace"], "--sigterm-grace"),
    };
    const decider = await createShimDecider({
      profile,
      serverId,
      endpoint: parsed["governance-endpoint"],
      secretFile: parsed["governance-secret-file"],
      configFlag: givenOrAbsent(parsed["thoughtgate-config"], "--thoughtgate-config"),
      readyTimeoutMs: optionalDuration(parsed["governance-ready-timeout"], "--governance-ready-timeout"),
    });
    // Traces only when the policy (or the service) asks for them: nothing of it is loaded otherwise.
    const tracer = decider.tracing ? await (await import("../governance/engine/tracing.ts")).startShimTracer(decider.tracing, serverId) : undefined;
    return runShim({ serverId, profile, upstream: sides.upstream, agent: sides.agent, runId, eventsPath: events, decider, ...graces, ...(tracer ? { tracer } : {}) });
  },
});
