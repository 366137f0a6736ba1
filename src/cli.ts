#!/usr/bin/env bun
import { defineCommand, runCommand, type CommandDef, type SubCommandsDef } from "citty";
import { EXIT, messageOf, ThoughtGateError } from "./core/errors.ts";
import { log, setVerbose } from "./core/log.ts";
import { TARGET, VERSION } from "./version.ts";

// Subcommands load on first use, so `shim` never pays for what `inspect` (or later cedar) needs.
const subCommands = {
  wrap: () => import("./commands/wrap.ts").then((m) => m.default),
  demo: () => import("./commands/demo.ts").then((m) => m.default),
  shim: () => import("./commands/shim.ts").then((m) => m.default),
  "__demo-server": () => import("./commands/demo-parts.ts").then((m) => m.demoServer),
  "__demo-agent": () => import("./commands/demo-parts.ts").then((m) => m.demoAgent),
  inspect: () => import("./commands/inspect.ts").then((m) => m.default),
  doctor: () => import("./commands/doctor.ts").then((m) => m.default),
  serve: () => import("./commands/serve.ts").then((m) => m.default),
  tasks: () => import("./commands/tasks.ts").then((m) => m.default),
  approvals: () => import("./commands/approvals.ts").then((m) => m.default),
  approve: () => import("./commands/approve.ts").then((m) => m.default),
  deny: () => import("./commands/deny.ts").then((m) => m.default),
  "validate-config": () => import("./commands/validate-config.ts").then((m) => m.default),
  unwrap: () => import("./commands/unwrap.ts").then((m) => m.default),
  enroll: () => import("./commands/enroll.ts").then((m) => m.enroll),
  unenroll: () => import("./commands/enroll.ts").then((m) => m.unenroll),
  arbiter: () => import("./commands/arbiter.ts").then((m) => m.default),
  hook: () => import("./commands/hook.ts").then((m) => m.default),
  auth: () => import("./commands/auth.ts").then((m) => m.default),
  pins: () => import("./commands/pins.ts").then((m) => m.default),
  log: () => import("./commands/log.ts").then((m) => m.default),
  policy: () => import("./commands/policy.ts").then((m) => m.default),
} satisfies SubCommandsDef;

const root = defineCommand({
  meta: {
    name: "thoughtgate",
    version: VERSION,
    description: "Governance between AI agents and their MCP servers",
  },
  subCommands,
});

/**
 * The one error boundary. Exit codes (the table in README.md, "Exit codes", and src/core/errors.ts):
 *   0 ok · 1 ThoughtGate or configuration error, governance service unavailable · 2 usage error ·
 *   shim, wrap, arbiter: the server's or the agent's own code.
 */
export async function main(argv: string[]): Promise<number> {
  const verbose = argv.includes("--verbose");
  if (verbose) setVerbose();
  // Which command a usage error's hint names: `thoughtgate wrap --help`, or the root's for an unknown one.
  let known: string | undefined;
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === "--help" || name === "-h" || name === "help") {
      process.stdout.write(await (await import("./commands/_help.ts")).renderRootHelp(root));
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === "--version" || name === "-v" || name === "version") {
      process.stdout.write(`thoughtgate ${VERSION} (${TARGET})\n`);
      return EXIT.ok;
    }
    const load = subCommands[name as keyof typeof subCommands];
    if (!load) throw await (await import("./commands/_unknown-command.ts")).unknownCommand(name, rest, Object.keys(subCommands));
    known = name;
    const command = (await load()) as CommandDef;
    const ours = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
    if (ours.includes("--help") || ours.includes("-h")) {
      process.stdout.write(await (await import("./commands/_help.ts")).renderCommandHelp(command, rest, "thoughtgate"));
      return EXIT.ok;
    }
    if (command.subCommands !== undefined) {
      const unknown = await (await import("./commands/_unknown-command.ts")).unknownSubcommand(name, command, rest);
      if (unknown) throw unknown;
    }
    const { result } = await runCommand(command, { rawArgs: rest });
    return typeof result === "number" ? result : EXIT.ok;
  } catch (error) {
    return report(error, verbose, known);
  }
}

function report(error: unknown, verbose: boolean, command: string | undefined): number {
  const usage = `run \`thoughtgate ${command === undefined ? "" : `${command} `}--help\` for usage`;
  if (error instanceof ThoughtGateError) {
    log.error(error.message);
    if (verbose && error.stack) log.debug(error.stack);
    if (error.code === "USAGE") log.info(usage);
    return error.exitCode;
  }
  // citty's own argument errors (missing required flag, bad enum) are usage errors too.
  if (error instanceof Error && error.name === "CLIError") {
    log.error(error.message);
    log.info(usage);
    return EXIT.usage;
  }
  log.error(`unexpected error: ${messageOf(error)}`);
  if (verbose && error instanceof Error && error.stack) log.error(error.stack);
  return EXIT.error;
}

if (import.meta.main) {
  process.on("uncaughtException", (error) => {
    log.error(`uncaught: ${messageOf(error)}`);
    process.exit(EXIT.error);
  });
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
