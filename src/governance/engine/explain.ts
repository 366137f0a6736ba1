import { SLACK_API_URL, type ArgumentMatcherConfig, type Rule, type ThoughtGateConfig, type Workflow } from "../../core/config/schema.ts";
import { dirname } from "node:path";
import { formatDuration } from "../../core/duration.ts";
import type { ToolAnnotations } from "../../core/mcp-schema.ts";
import type { Place } from "../../core/project.ts";
import { EMBEDDED_DEFAULT_WORDS } from "./default-policy.ts";
import { DEFAULT_WORKFLOW, type GovernanceEngine } from "./engine.ts";
import { looseningRules } from "./loosening.ts";
import { policyLabel, type PolicyInForce, type PolicyLayer } from "./policy.ts";
import type { Candidate } from "./rules.ts";
import { decisionInput, type ServerProgram } from "../verdict/decider.ts";

const ORIGINS: Record<PolicyLayer["origin"], string> = {
  flag: "given on the command line",
  env: "from $THOUGHTGATE_CONFIG",
  user: "found in the user config directory",
  project: "found in the working directory",
  embedded: "no thoughtgate.yaml found",
};

/**
 * The policy in force in words (`validate-config --explain`): which files, how they combine, and
 * each one's gates in the order they apply.
 */
export function explainPolicy(policy: PolicyInForce): string[] {
  const organisation = policy.organisation;
  if (!organisation) return explainLocal(policy);
  const { source } = organisation;
  const floor = [
    `organisation policy: ${source.settings.url} (from ${source.settings.from}; fetched again every ${formatDuration(source.settings.refreshMs)}, usable offline for ${formatDuration(source.settings.maxStaleMs)})`,
    "  The floor: the policies below may only restrict it. Each call gets the stricter decision, and one the",
    "  organisation's policy made says so in its reason (\"organisation policy: rule x: deny\").",
  ];
  if (source.state.kind === "refused" || !organisation.layer) return [...floor, `  REFUSED: ${source.label}: every call is refused until it is fixed`, "", ...explainLocal(policy)];
  const layer: PolicyLayer = { engine: organisation.layer, file: `${source.settings.url} version ${source.state.version}`, origin: "flag" };
  return [...floor, "", ...explainLayer(layer, `organisation policy version ${source.state.version} (signed ${source.state.issuedAt}${source.state.note ? `; ${source.state.note}` : ""})`), "", ...explainLocal(policy)];
}

function explainLocal(policy: PolicyInForce): string[] {
  if (!policy.restriction) return explainLayer(policy.base, `policy: ${policy.base.file ?? "the embedded default"} (${ORIGINS[policy.base.origin]})`);
  return [
    `policy: ${policyLabel(policy)}`,
    "  A project policy may only add restrictions: each call gets the stricter decision of the two (a deny",
    "  beats an approval, an approval beats a forward; two approvals: the shorter timeout, on_timeout deny",
    "  over approve, the channel both allow), and a tool, prompt or resource is shown only when both show it.",
    "  Secret scanning: results are scanned when either scans them, each kind the stricter way.",
    "",
    ...explainLayer(policy.base, policy.base.file === null ? "the embedded default policy (no user thoughtgate.yaml found)" : `user policy: ${policy.base.file} (${ORIGINS[policy.base.origin]})`),
    "",
    ...explainLayer(policy.restriction, `project policy: ${policy.restriction.file} (${ORIGINS[policy.restriction.origin]}; restricts the above)`),
  ];
}

/**
 * One policy in the order the gates apply it: what each server exposes, the rules (first match
 * wins), the default, the approval workflows and the Cedar policies.
 */
function explainLayer(layer: PolicyLayer, heading: string): string[] {
  const config: ThoughtGateConfig = layer.engine.config;
  const cedarPolicyIds = layer.engine.cedar?.policyIds ?? [];
  const lines: string[] = [heading];
  if (layer.file === null) lines.push(`  ${EMBEDDED_DEFAULT_WORDS}.`, "  A tool that declares no annotations is taken as MCP's defaults say (not read-only, destructive, open-world): asked.");

  lines.push("", "gate 1, visibility (what each server shows the agent):");
  for (const s of config.sources) {
    if (!s.enabled) {
      lines.push(`  ${s.id}: disabled (shows nothing)`);
      continue;
    }
    const { mode, tools, prompts, resources } = s.expose;
    if (mode === "all") {
      lines.push(`  ${s.id}: everything`);
      continue;
    }
    const lists = [`tools ${list(tools)}`, ...(prompts ? [`prompts ${list(prompts)}`] : []), ...(resources ? [`resources ${list(resources)}`] : [])];
    lines.push(`  ${s.id}: ${mode} ${lists.join("; ")}`);
  }
  lines.push(`  ${config.sources.length > 0 ? "any other server" : "every server"}: everything`);

  lines.push("", "gate 2, rules (first match wins):");
  config.governance.rules.forEach((rule, i) => lines.push(`  ${i + 1}. ${rule.id ?? `rules[${i}]`}: ${describeRule(rule)}`));
  if (config.governance.rules.length === 0) lines.push("  (none)");
  lines.push(`  otherwise: ${config.governance.defaults.action}`);

  lines.push("", "gate 3, Cedar:");
  if (config.cedar) {
    lines.push(`  policies: ${config.cedar.policies.join(", ")}`);
    if (config.cedar.schema) lines.push(`  schema: ${config.cedar.schema}`);
    lines.push(`  policy ids: ${cedarPolicyIds.length > 0 ? cedarPolicyIds.join(", ") : "(none)"}`);
  } else {
    lines.push("  no policies (rules with action policy are not allowed)");
  }

  lines.push("", "gate 4, approval workflows:");
  for (const [name, workflow] of Object.entries(config.approval)) lines.push(`  ${name}: ${describeWorkflow(workflow)}`);
  lines.push(`  default (built in, for approve rules that name none): ${describeWorkflow(DEFAULT_WORKFLOW)}`);
  return [...lines, "", ...describeSecrets(config.secrets)];
}

/** The `secrets:` section: whether results are scanned, per server, and the kinds not handled the default way. */
function describeSecrets(secrets: ThoughtGateConfig["secrets"]): string[] {
  const lines = ["secret scanning (results on their way to the agent):"];
  if (!secrets) return [...lines, "  every server's results; every kind found replaced by [REDACTED:<kind>]"];
  lines.push(`  ${secrets.scan === "results" ? "every server's results" : "no server's results"}, unless said below`);
  for (const [id, server] of Object.entries(secrets.servers)) lines.push(`  ${id}: ${server.scan === "results" ? "scanned" : "not scanned"}`);
  for (const [kind, setting] of Object.entries(secrets.kinds)) {
    const action = setting.action ?? "redact";
    const how = action === "redact" ? `replaced by ${JSON.stringify(setting.replacement ?? `[REDACTED:${kind}]`)}` : action === "detect" ? "logged and forwarded" : "not looked for";
    lines.push(`  ${kind}: ${how}`);
  }
  return lines;
}

function describeRule(rule: Rule): string {
  const on = [rule.method === "tools/call" ? `tool ${rule.match}` : `${rule.method} ${rule.match}`];
  if (rule.source) on.push(`on ${rule.source}`);
  if (rule.annotations) {
    const hints = Object.entries(rule.annotations).filter(([, value]) => value !== undefined);
    on.push(`with ${hints.map(([key, value]) => `${key}=${value}`).join(", ")}`);
  }
  if (rule.arguments) on.push(`where ${Object.entries(rule.arguments).map(([name, matcher]) => `${name} ${describeMatcher(matcher)}`).join(" and ")}`);
  if (rule.project) on.push(`in project ${rule.project}`);
  let action: string = rule.action;
  if (rule.action === "approve") action = `approve (workflow ${rule.approval ?? "default"})`;
  if (rule.action === "policy") {
    action = `Cedar decides${rule.policy_id ? ` (policy_id ${rule.policy_id})` : ""}${rule.approval ? `, then approval (workflow ${rule.approval})` : ""}`;
  }
  return `${on.join(" ")} → ${action}`;
}

/** An argument matcher in words: `within ${PROJECT}`, `like *.md`, `= "x"`, or `one of …`. */
function describeMatcher(matcher: ArgumentMatcherConfig): string {
  if (Array.isArray(matcher)) return `one of (${matcher.map(describeMatcher).join(", ")})`;
  if (matcher !== null && typeof matcher === "object") {
    if ("within" in matcher) return `within ${matcher.within}`;
    if ("glob" in matcher) return `like ${matcher.glob}`;
    return `= ${JSON.stringify(matcher.equals)}`;
  }
  return `= ${JSON.stringify(matcher)}`;
}

function describeWorkflow(workflow: Workflow): string {
  return `${describeDestination(workflow.destination)}; after ${formatDuration(workflow.timeout)} without an answer: ${workflow.on_timeout}`;
}

/** Where a workflow asks, in words; a Slack destination's tokens are never shown. */
function describeDestination(destination: Workflow["destination"]): string {
  if (destination.type === "any") return "any channel (elicitation, web page, CLI)";
  if (destination.type !== "slack") return `${destination.type} only`;
  const how = destination.app_token ? "Approve/Deny buttons by Socket Mode" : "👍/👎 reactions, read every few seconds";
  const where = destination.base_url === SLACK_API_URL ? "" : ` through ${destination.base_url}`;
  return `Slack channel ${destination.channel}${where} (${how}; approvers ${destination.approvers.join(", ")}), and the web page, CLI and elicitation`;
}

function list(globs: string[]): string {
  return globs.length > 0 ? globs.join(", ") : "(empty)";
}

/**
 * The project's rules that can never take effect, each with where it belongs (loosening.ts), in
 * words for `validate-config` and wrap's banner; empty when there is no project policy or none.
 * `userFile`: where the user's own policy is (or would be).
 */
export function looseningReport(policy: PolicyInForce, userFile: string): string[] {
  return [...belowOrganisation(policy), ...belowUser(policy, userFile)];
}

/** The user's (and the project's) rules that would loosen the organisation's policy: theirs to ask for. */
function belowOrganisation(policy: PolicyInForce): string[] {
  const organisation = policy.organisation;
  if (!organisation?.layer) return [];
  const url = organisation.source.settings.url;
  const layers = [policy.base, ...(policy.restriction ? [policy.restriction] : [])].filter((layer) => layer.file !== null);
  return layers.flatMap((layer) =>
    looseningRules(organisation.layer?.config as ThoughtGateConfig, layer.engine.config, dirname(layer.file as string)).flatMap(({ ruleId, rule, overriddenBy }) => [
      `${layer.origin === "project" ? "project" : "user"} policy ${layer.file}: rule ${ruleId} (${describeRule(rule)}) can never take effect where the organisation policy ${url} ${VERBS[overriddenBy.action] ?? "decides"} (${overriddenBy.rule ? `rule ${overriddenBy.ruleId}: ${describeRule(overriddenBy.rule)}` : `its default: ${overriddenBy.action}`}): the organisation's policy is the floor, and only its administrators can change it.`,
    ]),
  );
}

/** The project's rules that would loosen the user's policy (or the embedded default), with where they belong. */
function belowUser(policy: PolicyInForce, userFile: string): string[] {
  const { base, restriction } = policy;
  if (!restriction || restriction.file === null) return [];
  const projectDir = dirname(restriction.file);
  const whose = base.file === null ? "the embedded default policy" : `your policy ${base.file}`;
  return looseningRules(base.engine.config, restriction.engine.config, projectDir).flatMap(({ ruleId, rule, overriddenBy }) => [
    `project policy ${restriction.file}: rule ${ruleId} (${describeRule(rule)}) can never take effect where ${whose} ${VERBS[overriddenBy.action] ?? "decides"} (${overriddenBy.rule ? `rule ${overriddenBy.ruleId}: ${describeRule(overriddenBy.rule)}` : `its default: ${overriddenBy.action}`}): a project policy may only add restrictions.`,
    base.file === null
      ? `  To let these calls through in this project, start your own policy ${userFile} from the embedded default (\`thoughtgate validate-config --explain\` prints it as a thoughtgate.yaml) and put this rule, kept to the project, first:`
      : `  To let these calls through in this project, put this rule, kept to the project, in your policy ${base.file} above ${overriddenBy.rule ? `rule ${overriddenBy.ruleId}` : "the end of its rules"}:`,
    `    - ${ruleYaml({ ...rule, id: ruleId, project: projectDir })}`,
  ]);
}

const VERBS: Record<string, string> = { deny: "denies", approve: "asks", policy: "lets Cedar decide" };

/** A rule as one line of YAML (a flow mapping), as it would be written into a policy file. */
function ruleYaml(rule: Rule): string {
  const parts: string[] = [];
  if (rule.id !== undefined) parts.push(`id: ${JSON.stringify(rule.id)}`);
  parts.push(`match: ${JSON.stringify(rule.match)}`);
  if (rule.method !== "tools/call") parts.push(`method: ${JSON.stringify(rule.method)}`);
  if (rule.source !== undefined) parts.push(`source: ${JSON.stringify(rule.source)}`);
  if (rule.annotations !== undefined) parts.push(`annotations: ${JSON.stringify(rule.annotations)}`);
  if (rule.arguments !== undefined) parts.push(`arguments: ${JSON.stringify(rule.arguments)}`);
  if (rule.project !== undefined) parts.push(`project: ${JSON.stringify(rule.project)}`);
  parts.push(`action: ${rule.action}`);
  return `{ ${parts.join(", ")} }`;
}

/** A tool as a server lists it, for `validate-config --explain --server`. */
export type ListedTool = { name: string; annotations: ToolAnnotations | undefined; annotationSource?: string | undefined };

/**
 * What each tool of one server will get and why (`validate-config --explain --agent|--server`):
 * per policy in force, the rules that decide its calls (those that look at arguments first, with
 * their condition), and where its annotations came from.
 */
export function explainTools(policy: PolicyInForce, serverId: string, tools: ListedTool[], place: Place, server?: ServerProgram): string[] {
  const layers = policy.restriction ? [{ name: "user policy", layer: policy.base }, { name: "project policy", layer: policy.restriction }] : [{ name: "", layer: policy.base }];
  const width = Math.max(0, ...tools.map((tool) => tool.name.length));
  const lines: string[] = [];
  for (const tool of tools) {
    const input = decisionInput({ serverId, server, method: "tools/call", name: tool.name, arguments: undefined, annotations: tool.annotations, annotationSource: tool.annotationSource, place });
    const said = layers.map(({ name, layer }) => {
      const engine: GovernanceEngine = layer.engine;
      const hidden = !engine.visibility.isVisible(serverId, "tools", tool.name);
      return `${name ? `${name}: ` : ""}${hidden ? "hidden (not exposed by its source): every call refused" : describeCandidates(engine.whatDecides(input))}`;
    });
    const gets = policy.restriction ? `${stricterOf(layers.map(({ layer }) => layer.engine.whatDecides(input)))}: ` : "";
    lines.push(`  ${tool.name.padEnd(width)}  ${gets}${said.join("; ")}  [${annotationWords(tool)}]`);
  }
  return lines;
}

const GETS: Record<string, string> = { forward: "forwarded", approve: "asked", deny: "denied", policy: "Cedar decides" };
const STRICTNESS = ["forward", "approve", "deny"];

/** What a tool gets from two policies at once, when each decides it whatever the arguments; else that it depends. */
function stricterOf(layers: Candidate[][]): string {
  const actions = layers.map((candidates) => (candidates.length === 1 && STRICTNESS.includes(candidates[0]?.action ?? "") ? (candidates[0]?.action as string) : null));
  if (actions.includes("deny")) return "denied";
  if (actions.some((action) => action === null)) return "depends on the call";
  return GETS[actions.includes("approve") ? "approve" : "forward"] as string;
}

function describeCandidates(candidates: Candidate[]): string {
  const said = candidates.map((c) => {
    const by = c.ruleId === "defaults" ? "the default" : `rule ${c.ruleId}`;
    const gets = c.action === "policy" ? `Cedar decides${c.approval ? ", then asked" : ""}` : (GETS[c.action] ?? c.action);
    if (!c.conditional || !c.rule?.arguments) return `${gets} (${by})`;
    const when = Object.entries(c.rule.arguments).map(([name, matcher]) => `${name} ${describeMatcher(matcher)}`).join(" and ");
    return `${gets} when ${when} (${by})`;
  });
  if (said.length === 1) return said[0] as string;
  return `${said.slice(0, -1).join("; ")}; otherwise ${said[said.length - 1]}`;
}

function annotationWords(tool: ListedTool): string {
  if (!tool.annotations) return "declares no annotations: MCP's defaults, not read-only and destructive";
  const hints = Object.entries(tool.annotations)
    .filter(([key, value]) => key.endsWith("Hint") && typeof value === "boolean")
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
  return `${hints || "no hints"}, from ${tool.annotationSource ?? "the server"}`;
}
