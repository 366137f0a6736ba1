import { defineCommand } from "citty";
import { discoverPolicy } from "../core/config/discover.ts";
import { usageError } from "../core/errors.ts";
import { didYouMean } from "../core/suggest.ts";
import { AGENT_TYPES } from "../wrap/adapters/types.ts";
import { isAgentType } from "../wrap/adapters/detect.ts";
import { runWrap } from "../wrap/run-wrap.ts";
import { commonArgs, givenOrAbsent, parsePort, profileArg, resolveProfile, splitChildCommand } from "./_shared.ts";

const args = {
  "agent-type": { type: "string", description: `Which agent (default: detected from the command): ${AGENT_TYPES.join(", ")}`, valueHint: "TYPE" },
  "config-path": { type: "string", description: "The agent's MCP config file (required for --agent-type custom)", valueHint: "PATH" },
  ...profileArg,
  "thoughtgate-config": { type: "string", description: "Policy file (default: discovery, else the embedded default policy)", valueHint: "PATH" },
  "governance-port": { type: "string", description: "Governance service port on 127.0.0.1 (default: any free port)", valueHint: "N" },
  "no-restore": { type: "boolean", description: "Leave the configs rewritten at exit (thoughtgate unwrap puts them back)" },
  "dry-run": { type: "boolean", description: "Print the rewrite as a unified diff on stdout and change nothing" },
  "allow-ungoverned": { type: "boolean", description: "Start the agent even when none (or not all) of its MCP servers can be governed; one warning line says what" },
  "sole-approver": { type: "boolean", description: "ThoughtGate alone asks about the governed servers' tools: the agent is told by its own flags, for this session only (Codex; Claude Code needs it no longer: its hook does this under wrap)" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "wrap", description: "Govern an agent: route its MCP servers through ThoughtGate while it runs" },
  args,
  async run({ rawArgs, args: parsed }) {
    const { child } = splitChildCommand(rawArgs, args, "wrap");
    const agentType = givenOrAbsent(parsed["agent-type"], "--agent-type");
    const configPath = givenOrAbsent(parsed["config-path"], "--config-path");
    const policyFile = givenOrAbsent(parsed["thoughtgate-config"], "--thoughtgate-config");
    // The policy's flag and $THOUGHTGATE_CONFIG are checked before wrap reads or prints anything.
    discoverPolicy(policyFile);
    if (agentType !== undefined && !isAgentType(agentType)) throw usageError(`--agent-type: expected one of ${AGENT_TYPES.join("|")}, got ${JSON.stringify(agentType)}${didYouMean(agentType, AGENT_TYPES)}`);
    return runWrap({
      command: child,
      ...(agentType ? { agentType } : {}),
      ...(configPath ? { configPath } : {}),
      profile: resolveProfile(parsed.profile),
      ...(policyFile ? { policyFile } : {}),
      governancePort: parsePort(parsed["governance-port"]),
      restore: !rawArgs.slice(0, rawArgs.indexOf("--")).includes("--no-restore"),
      dryRun: parsed["dry-run"] === true,
      allowUngoverned: parsed["allow-ungoverned"] === true,
      soleApprover: parsed["sole-approver"] === true,
      showDecisions: parsed.verbose === true,
      // console.error, not process.stderr: creating that Node stream costs wrap's service ~5 MB (log.ts).
      say: (text) => console.error(text),
      print: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
    });
  },
});
