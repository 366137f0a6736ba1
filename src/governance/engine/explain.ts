import { SLACK_API_URL, type ArgumentMatcherConfig, type Rule, type ThoughtGateConfig, type Workflow } from "../../core/config/schema.ts";
import { formatDuration } from "../../core/duration.ts";
import { DEFAULT_WORKFLOW } from "./engine.ts";
import { policyLabel, type PolicyInForce, type PolicyLayer } from "./policy.ts";

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
