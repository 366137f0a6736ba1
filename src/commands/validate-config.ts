import { defineCommand } from "citty";
import { discoverPolicy, discoveryPaths, policyFiles } from "../core/config/discover.ts";
import { EXIT, usageError } from "../core/errors.ts";
import { showInvisible } from "../core/visible-text.ts";
import { EMBEDDED_DEFAULT_WORDS, EMBEDDED_DEFAULT_YAML } from "../governance/engine/default-policy.ts";
import { explainPolicy, looseningReport } from "../governance/engine/explain.ts";
import { checkPolicyFile, embeddedDefault, loadPolicyInForce, unboundAlwaysAllowRules } from "../governance/engine/policy.ts";
import { readPolicyFile } from "../core/config/read-file.ts";
import { agentServers, explainServers, serverFromFlag, serversOnMachine, sourcesNamingNoServer, type ConfiguredServer, type ServerToExplain } from "./_explain-servers.ts";
import { commonArgs, rejectUnknownFlags } from "./_shared.ts";

const args = {
  path: {
    type: "positional",
    required: false,
    description: "The file to check, alone (default: $THOUGHTGATE_CONFIG, else ~/.config/thoughtgate/thoughtgate.yaml and ./thoughtgate.yaml, the project's checked as a project policy)",
  },
  explain: { type: "boolean", description: "Also print the effective policy: which files, sources, rules in order, default, workflows, Cedar policies" },
  agent: {
    type: "string",
    description: "With --explain: start each MCP server this agent's configuration names, and say what each of its tools will get and why",
    valueHint: "claude|codex|cursor|…",
  },
  server: { type: "string", description: "With --explain: the same for one server, started with this command line", valueHint: "CMD" },
  "server-id": { type: "string", description: "The id policies know --server's server by (default server)", valueHint: "ID" },
  ...commonArgs,
} as const;

export default defineCommand({
  meta: { name: "validate-config", description: "Check a thoughtgate.yaml (and its Cedar files): each problem as `path: message`, exit 0 or 1" },
  args,
  async run({ rawArgs, args: parsed }) {
    rejectUnknownFlags(rawArgs, args);
    const out: string[] = [];
    const servers = serversToExplain(parsed.agent, parsed.server, parsed["server-id"]);
    if (servers && parsed.explain !== true) throw usageError("--agent and --server go with --explain");
    const code = await validate(parsed.path, parsed.explain === true, out, servers);
    // A project's policy comes with the repository: its keys and values are shown escaped (src/core/visible-text.ts).
    await Bun.write(Bun.stdout, `${out.join("\n").split("\n").map(showInvisible).join("\n")}\n`);
    return code;
  },
});

function serversToExplain(agent: string | undefined, server: string | undefined, serverId: string | undefined): ServerToExplain[] | null {
  if (agent !== undefined && server !== undefined) throw usageError("use either --agent or --server");
  if (serverId !== undefined && server === undefined) throw usageError("--server-id goes with --server");
  if (agent !== undefined) return agentServers(agent);
  if (server !== undefined) return [serverFromFlag(server, serverId ?? "server")];
  return null;
}

async function validate(path: string | undefined, explain: boolean, out: string[], servers: ServerToExplain[] | null): Promise<number> {
  const discovery = discoverPolicy(path);
  const files = policyFiles(discovery);
  if (files.length === 0) {
    out.push(`no thoughtgate.yaml found ($THOUGHTGATE_CONFIG, ~/.config/thoughtgate/thoughtgate.yaml, ./thoughtgate.yaml): the embedded default policy applies (${EMBEDDED_DEFAULT_WORDS})`);
    if (explain) out.push("", ...explainPolicy(embeddedDefault()), "", "as a thoughtgate.yaml:", EMBEDDED_DEFAULT_YAML.trimEnd());
    if (servers) out.push("", ...(await explainServers(embeddedDefault(), servers)));
    return EXIT.ok;
  }
  // Every file is checked, so one run lists the problems of both the user's and the project's.
  let failed = false;
  let configured: ConfiguredServer[] | null = null;
  for (const found of files) {
    const result = await checkPolicyFile(found);
    const name = found.origin === "project" ? `${found.file} (project policy)` : found.file;
    if ("unreadable" in result) out.push(result.unreadable);
    else if ("problems" in result) out.push(`${name}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`, ...result.problems);
    else {
      out.push(`ok: ${name}`, ...unboundAlwaysAllowRules(result.loaded.config, result.loaded.file).map((note) => `note: ${note}`));
      configured ??= serversOnMachine();
      out.push(...sourcesNamingNoServer(result.loaded.config, result.loaded.file, readPolicyFile(result.loaded.file), configured));
    }
    failed ||= !result.ok;
  }
  if (failed) return EXIT.error;
  const policy = await loadPolicyInForce(discovery);
  const organisation = policy.organisation?.source;
  if (organisation?.state.kind === "refused") {
    // Every call would be refused: the policy in force is not in order.
    out.push(`${organisation.label}; every governed call is refused until it is fixed`);
    return EXIT.error;
  }
  if (organisation) out.push(`ok: ${organisation.label}`);
  // A project rule that can never take effect is no error (the file is valid), but never silent.
  out.push(...looseningReport(policy, discoveryPaths().user));
  if (explain) out.push("", ...explainPolicy(policy));
  if (servers) out.push("", ...(await explainServers(policy, servers)));
  return EXIT.ok;
}
