import { defineCommand } from "citty";
import { runArbiter, DECISION_TIMEOUT_MS } from "../arbiter/run-arbiter.ts";
import { usageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { commonArgs, eventsArg, eventsPath, givenOrAbsent, optionalDuration, profileArg, resolveProfile, runIdFromEnv, splitChildCommand } from "./_shared.ts";

const args = {
  ...profileArg,
  "thoughtgate-config": {
    type: "string",
    description: "Policy file, used alone (default: $THOUGHTGATE_CONFIG, else ~/.config/thoughtgate/thoughtgate.yaml or the embedded default policy, restricted by ./thoughtgate.yaml)",
    valueHint: "PATH",
  },
  "event-prefix": { type: "string", description: "Event lines start with STR (default: any line that is a JSON object with a tool.* type)", valueHint: "STR" },
  "default-action": { type: "string", description: "What an approval gets when there is no terminal to ask on (default deny)", valueHint: "deny|allow" },
  "decision-timeout": { type: "string", description: "Deny a request not decided within this long (default 5m)", valueHint: "DURATION" },
  "server-id": { type: "string", description: "The child's name in rules (`source`) and events, unless a request names its `server` (default codecli)", valueHint: "ID" },
  ...eventsArg,
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "arbiter",
    description: "Run a codecli-style agent and decide the tool.request events it prints, answering on its stdin",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    const { child } = splitChildCommand(rawArgs, args, "arbiter");
    const defaultAction = parsed["default-action"] ?? "deny";
    if (defaultAction !== "deny" && defaultAction !== "allow") throw usageError(`--default-action: expected deny or allow, got ${JSON.stringify(defaultAction)}${didYouMean(defaultAction, ["deny", "allow"])}`);
    const decisionTimeoutMs = optionalDuration(parsed["decision-timeout"], "--decision-timeout") ?? DECISION_TIMEOUT_MS;
    if (decisionTimeoutMs <= 0) throw usageError("--decision-timeout must be more than 0");
    const profile = resolveProfile(parsed.profile);
    const runId = runIdFromEnv();
    const serverId = givenOrAbsent(parsed["server-id"], "--server-id") ?? "codecli";
    const engines = await EngineHolder.load(parsed["thoughtgate-config"]);
    // Traces only when the user's policy asks for them: nothing of it is loaded otherwise.
    const tracer = engines.policy.base.engine.config.telemetry?.otlp ? await (await import("../governance/engine/tracing.ts")).startServiceTracer(engines.policy, "arbiter") : undefined;
    return runArbiter({
      command: child,
      profile,
      serverId,
      runId,
      eventsPath: eventsPath(parsed.events, { runId, serverId }),
      engines,
      eventPrefix: givenOrAbsent(parsed["event-prefix"], "--event-prefix") ?? null,
      defaultAction,
      decisionTimeoutMs,
      tracer,
    });
  },
});
