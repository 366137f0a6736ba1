import { defineCommand } from "citty";
import { usageError } from "../core/errors.ts";
import { AGENT_TYPES } from "../wrap/adapters/types.ts";
import { isAgentType } from "../wrap/adapters/detect.ts";
import { runWrap } from "../wrap/session.ts";
import { commonArgs, parsePort, profileArg, resolveProfile, splitChildCommand } from "./_shared.ts";

const args = {
  "agent-type": { type: "string", description: `Which agent (default: detected from the command): ${AGENT_TYPES.join(", ")}`, valueHint: "TYPE" },
  "config-path": { type: "string", description: "The agent's MCP config file (required for --agent-type custom)", valueHint: "PATH" },
  ...profileArg,
  "thoughtgate-config": { type: "string", description: "Policy file (default: discovery, else the embedded default policy)", valueHint: "PATH" },
  "governance-port": { type: "string", description: "Governance service port on 127.0.0.1 (default: any free port)", valueHint: "N" },
  "no-restore": { type: "boolean", description: "Leave the configs rewritten at exit (thoughtgate unwrap puts them back)" },
  "dry-run": { type: "boolean", description: "Print the rewrite as a unified diff and change nothing" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "wrap", description: "Govern an agent: route its MCP servers through ThoughtGate while it runs: wrap [flags] -- CMD [ARGS...]" },
  args,
  async run({ rawArgs, args: parsed }) {
    const { child } = splitChildCommand(rawArgs.filter((arg) => arg !== "--no-restore"), args, "wrap");
    const agentType = parsed["agent-type"];
    if (agentType !== undefined && !isAgentType(agentType)) throw usageError(`--agent-type: expected one of ${AGENT_TYPES.join("|")}, got ${JSON.stringify(agentType)}`);
    return runWrap({
      command: child,
      ...(agentType ? { agentType } : {}),
      ...(parsed["config-path"] ? { configPath: parsed["config-path"] } : {}),
      profile: resolveProfile(parsed.profile),
      ...(parsed["thoughtgate-config"] ? { policyFile: parsed["thoughtgate-config"] } : {}),
      governancePort: parsePort(parsed["governance-port"]),
      restore: !rawArgs.slice(0, rawArgs.indexOf("--")).includes("--no-restore"),
      dryRun: parsed["dry-run"] === true,
      showDecisions: parsed.verbose === true,
      say: (text) => process.stderr.write(`${text}\n`),
    });
  },
});
