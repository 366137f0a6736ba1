import { existsSync } from "node:fs";
import { MACHINE_ORGANISATION_FILE, ORG_URL_ENV, type ConfigOrigin, type Discovery, type PolicyFile } from "../../core/config/discover.ts";
import type { LoadedConfig } from "../../core/config/load.ts";
import type { ThoughtGateConfig } from "../../core/config/schema.ts";
import { messageOf } from "../../core/errors.ts";
import { EMBEDDED_DEFAULT } from "./default-policy.ts";
import { GovernanceEngine, type PolicyEngine } from "./engine.ts";
import type { OrganisationPolicy, OrganisationState } from "./organisation.ts";
import { StrictestOf } from "./strictest-of.ts";

/** One policy in force: its engine, and its file (null: the embedded default). */
export type PolicyLayer = { engine: GovernanceEngine } & ({ file: null; origin: "embedded" } | { file: string; origin: ConfigOrigin });

/**
 * The organisation's policy (organisation.ts), when one is configured: the floor under the others.
 * `engine` is its policy's, or one that refuses every call while the organisation's policy is
 * refused (fail-closed.ts); `layer` is its policy when it has one.
 */
type OrganisationLayer = { source: OrganisationPolicy; engine: PolicyEngine; layer: GovernanceEngine | null };

/**
 * What decides: `base` alone (an explicit file, the user's file or the embedded default), or
 * `base` restricted by a project's file, the stricter decision winning (`StrictestOf`); under an
 * organisation's policy, all of that restricting it in turn.
 */
export type PolicyInForce = { engine: PolicyEngine; base: PolicyLayer; restriction: PolicyLayer | null; organisation: OrganisationLayer | null };

export function embeddedDefault(): PolicyInForce {
  const engine = new GovernanceEngine(EMBEDDED_DEFAULT, null, "embedded default policy");
  return { engine, base: { engine, file: null, origin: "embedded" }, restriction: null, organisation: null };
}

/**
 * Load the policy discovery finds (docs/governance.md, "Where the policy comes from"). The schema
 * (valibot) and the YAML parser are imported only when there is a file to read: a shim on the
 * embedded default never loads them. A file that is missing (when asked for), unreadable or
 * invalid throws a CONFIG error: never a silent fallback (docs/architecture.md, decision 3). An
 * organisation's policy that is refused does not throw: it decides every call as refused.
 */
export async function loadPolicyInForce(discovery: Discovery, env: NodeJS.ProcessEnv = process.env): Promise<PolicyInForce> {
  const local = await loadLocal(discovery, env);
  if (local.base.origin === "embedded" && !env[ORG_URL_ENV] && !existsSync(MACHINE_ORGANISATION_FILE)) return local;
  const { organisationSettings, OrganisationPolicy } = await import("./organisation.ts");
  const settings = organisationSettings(env, local.base.origin === "embedded" ? null : local.base.engine.config, local.base.file);
  if (!settings) return local;
  const source = await OrganisationPolicy.shared(settings, env);
  const organisation = await organisationLayer(source, source.state);
  return { ...local, engine: new StrictestOf(local.engine, organisation.engine, "organisation policy"), organisation };
}

async function loadLocal(discovery: Discovery, env: NodeJS.ProcessEnv): Promise<PolicyInForce> {
  if (discovery.mode === "layered" && !discovery.user && !discovery.project) return embeddedDefault();
  const { loadPolicy } = await import("../../core/config/load.ts");
  const loaded = loadPolicy(discovery, env);
  if (loaded.mode === "explicit") return single(await layer(loaded.file));
  const base = loaded.user ? await layer(loaded.user) : embeddedDefault().base;
  if (!loaded.project) return single(base);
  const restriction = await layer(loaded.project);
  return { engine: new StrictestOf(base.engine, restriction.engine), base, restriction, organisation: null };
}

async function organisationLayer(source: OrganisationPolicy, state: OrganisationState): Promise<OrganisationLayer> {
  const { FailClosed } = await import("./fail-closed.ts");
  if (state.kind === "refused") return { source, engine: new FailClosed(`${source.label} (every call is refused until it is fixed)`), layer: null };
  try {
    const engine = await GovernanceEngine.fromConfig(state.config, `organisation policy ${source.settings.url} version ${state.version}`);
    return { source, engine, layer: engine };
  } catch (error) {
    return { source, engine: new FailClosed(`organisation policy ${source.settings.url} version ${state.version} does not load: ${messageOf(error)} (every call is refused until it is fixed)`), layer: null };
  }
}

/** The files in force, in the order they apply (empty: the embedded default alone). */
export function filesInForce(policy: PolicyInForce): string[] {
  return [policy.base.file, policy.restriction?.file ?? null].filter((file): file is string => file !== null);
}

/**
 * Which policy is in force, in words, for `run_start.policy`, banners and `validate-config
 * --explain`: `/path/policy.yaml` (given explicitly), `user policy X`, `user policy X, restricted by
 * project policy Y`, `embedded default policy, restricted by project policy Y`, or
 * `embedded-default`; under an organisation's policy, `…, under organisation policy URL version N`
 * (or why it is refused).
 */
export function policyLabel(policy: PolicyInForce): string {
  const local = localLabel(policy);
  if (!policy.organisation) return local;
  return `${local === "embedded-default" ? "embedded default policy" : local}, under ${policy.organisation.source.label}`;
}

function localLabel(policy: PolicyInForce): string {
  const { base, restriction } = policy;
  if (!restriction) {
    if (base.origin === "embedded") return "embedded-default";
    return base.origin === "user" ? `user policy ${base.file}` : base.file;
  }
  const first = base.origin === "embedded" ? "embedded default policy" : `user policy ${base.file}`;
  return `${first}, restricted by project policy ${restriction.file}`;
}

/**
 * The policy in force as `thoughtgate doctor` and `policy status` report it: the files, and the
 * organisation's policy (where from, which version, when the URL last confirmed it, or why it is
 * refused).
 */
export type PolicySummary = {
  label: string;
  files: string[];
  organisation: null | {
    url: string;
    from: string;
    state: "ok" | "refused";
    version: number | null;
    issuedAt: string | null;
    confirmedAt: string | null;
    note: string | null;
    reason: string | null;
    maxStaleMs: number;
    refreshMs: number;
  };
};

export function summarisePolicy(policy: PolicyInForce): PolicySummary {
  const organisation = policy.organisation?.source;
  const state = organisation?.state;
  return {
    label: policyLabel(policy),
    files: filesInForce(policy),
    organisation:
      organisation && state
        ? {
            url: organisation.settings.url,
            from: organisation.settings.from,
            state: state.kind,
            version: state.kind === "ok" ? state.version : null,
            issuedAt: state.kind === "ok" ? state.issuedAt : null,
            confirmedAt: state.kind === "ok" ? new Date(state.fetchedAt).toISOString() : null,
            note: state.kind === "ok" ? state.note : null,
            reason: state.kind === "refused" ? state.reason : null,
            maxStaleMs: organisation.settings.maxStaleMs,
            refreshMs: organisation.settings.refreshMs,
          }
        : null,
  };
}

/**
 * One policy file checked as loading it would: read, parsed, validated (as a project's when it is
 * one), placed (a project's Cedar files inside the project), and its Cedar policies compiled.
 * `problems` are `file:line:column: path: message` lines; `unreadable` one line naming the file.
 * `validate-config` prints these; `doctor` reports the first.
 */
export type PolicyFileCheck = { ok: true; loaded: LoadedConfig } | { ok: false; problems: string[] } | { ok: false; unreadable: string };

export async function checkPolicyFile(found: PolicyFile, env: NodeJS.ProcessEnv = process.env): Promise<PolicyFileCheck> {
  if (!existsSync(found.file)) return { ok: false, unreadable: `${found.file}: no such file` };
  const { loadConfigFile, parseConfig, problemLine } = await import("../../core/config/load.ts");
  const { readPolicyFile } = await import("../../core/config/read-file.ts");
  let text: string;
  try {
    text = readPolicyFile(found.file);
  } catch (error) {
    return { ok: false, unreadable: messageOf(error) };
  }
  const parsed = parseConfig(text, env, found.origin === "project" ? "project" : "user");
  if (!parsed.ok) return { ok: false, problems: parsed.problems.map((p) => problemLine(found.file, p)) };
  let loaded: LoadedConfig;
  try {
    loaded = loadConfigFile(found, env);
  } catch (error) {
    return { ok: false, unreadable: messageOf(error) };
  }
  try {
    await GovernanceEngine.fromConfig(loaded.config, loaded.file);
  } catch (error) {
    return { ok: false, problems: [`cedar: ${messageOf(error)}`] };
  }
  return { ok: true, loaded };
}

async function layer(loaded: LoadedConfig): Promise<PolicyLayer> {
  return { engine: await GovernanceEngine.fromConfig(loaded.config, loaded.file), file: loaded.file, origin: loaded.origin };
}

function single(base: PolicyLayer): PolicyInForce {
  return { engine: base.engine, base, restriction: null, organisation: null };
}

/**
 * Rules "always allow" wrote before such rules named their server's program (`always-allow-…`
 * without `server:`): each allows its tool from any server of that id, a repository's server of
 * the same name too. They keep working as written; this says so, once per load, with the way out.
 */
export function unboundAlwaysAllowRules(config: ThoughtGateConfig, file: string): string[] {
  return config.governance.rules
    .filter((rule) => rule.id?.startsWith("always-allow-") && rule.server === undefined && rule.action !== "deny")
    .map(
      (rule) =>
        `${file}: rule ${rule.id} (written by "always allow" before such rules named their server's program) allows ${rule.source ?? "*"}.${rule.match} from any server with that id, also a repository's server of that name; allow the tool again from the approvals page (the new rule names the command), or add to the rule \`server: { command: [the command and its arguments] }\` (or \`{ url: … }\`)`,
    );
}
