import { defineCommand } from "citty";
import { EXIT, messageOf } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { APPROVAL_KEY_ENV, ENDPOINT_ENV, SESSION_SECRET_ENV } from "../governance/wire/api.ts";
import { desktopTool } from "../governance/approval/desktop-notifier.ts";
import { EngineHolder } from "../governance/engine/engine-holder.ts";
import { publishService, siblingServices } from "../governance/wire/service-descriptor.ts";
import { newSecret, processPersonCheck, startGovernanceService } from "../governance/service/service.ts";
import { startServiceTracer } from "../governance/engine/tracing.ts";
import { isSameProcessRunning, ownProcessStartId } from "../core/process-identity.ts";
import { parsePort, commonArgs, profileArg, rejectUnknownFlags, resolveProfile } from "./_shared.ts";

const args = {
  "thoughtgate-config": { type: "string", description: "Policy file, used alone (default: $THOUGHTGATE_CONFIG, else ~/.config/thoughtgate/thoughtgate.yaml or the embedded default, restricted by ./thoughtgate.yaml)", valueHint: "PATH" },
  ...profileArg,
  "governance-port": { type: "string", description: "Listen on this port of 127.0.0.1 (default 0: any free port)", valueHint: "N" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: {
    name: "serve",
    description: "Run the governance service on its own: decisions for shims, the approvals page, metrics; reloads on SIGHUP and file changes",
  },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const profile = resolveProfile(parsed.profile);
    const port = parsePort(parsed["governance-port"]);
    const engines = await EngineHolder.load(parsed["thoughtgate-config"]);
    const sessionSecret = newSecret();
    const cliKey = newSecret();
    const tracer = await startServiceTracer(engines.policy, "serve");
    const startedAt = new Date().toISOString();
    const service = startGovernanceService({
      engine: () => engines.engine,
      profile,
      port,
      sessionSecret,
      pageKey: newSecret(),
      cliKey,
      // Only a person decides: the CLI only at a terminal unless the user's own policy says otherwise
      // (the base layer: never a project's). serve runs no agent of its own.
      people: processPersonCheck({ requireTerminal: () => engines.policy.base.engine.config.cli?.require_terminal !== false, agent: () => null }),
      desktop: desktopTool(),
      always: (await import("../governance/approval/always-allow.ts")).alwaysWriter({ policy: () => engines.policy, reload: () => engines.reload(), env: process.env, cwd: process.cwd(), origin: `thoughtgate serve, pid ${process.pid}`, now: () => new Date() }),
      role: "serve",
      session: { kind: "serve", started_at: startedAt },
      // Services side by side share a Slack app: a click on another's message is handed on to it.
      siblings: () => siblingServices(isSameProcessRunning),
      ...(tracer ? { tracer } : {}),
    });
    engines.watch();
    // `thoughtgate tasks|approve|deny` find this service (and its CLI key, never the page key) here;
    // without it they still work with the export line printed below.
    let unpublish = () => {};
    try {
      unpublish = publishService({ endpoint: service.url, pid: process.pid, start_id: ownProcessStartId(), kind: "serve", cli_key: cliKey, started_at: startedAt });
    } catch (error) {
      log.warn(`cannot record this service for thoughtgate tasks | approve | deny (${messageOf(error)}); use the export line below`);
    }
    process.once("exit", unpublish);

    const policy = engines.files.length > 0 ? engines.label : "the embedded default (no thoughtgate.yaml found; see `thoughtgate validate-config --explain`)";
    // The page key is printed, never written to a file (docs/architecture.md, decision 7); it is in
    // the URL's fragment, which browsers never send. The CLI key is also in the 0600 descriptor.
    // console.error, not process.stderr: creating that Node stream costs the service ~5 MB (log.ts).
    console.error(
      [
        `ThoughtGate governance service on ${service.url} (profile ${profile})`,
        `policy: ${policy}`,
        "",
        "Shims (thoughtgate shim --governance-endpoint) read:",
        `  export ${ENDPOINT_ENV}=${service.url} ${SESSION_SECRET_ENV}=${sessionSecret}`,
        "",
        "Approvals page (keep this link private):",
        `  ${service.approvalsUrl}`,
        "",
        "thoughtgate tasks | approve | deny find this service on their own; from elsewhere:",
        `  export ${ENDPOINT_ENV}=${service.url} ${APPROVAL_KEY_ENV}=${cliKey}`,
        "",
        "Ctrl-C stops; SIGHUP or editing the policy files reloads.",
      ].join("\n"),
    );

    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
    });
    log.info(`${signal}: stopping the governance service`);
    service.setShutdown();
    engines.close();
    await service.stop();
    unpublish();
    return EXIT.ok;
  },
});
